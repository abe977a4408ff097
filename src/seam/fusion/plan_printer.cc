#include "seam/fusion/plan_printer.h"

#include <cstdio>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"
#include "seam/fusion/op_class.h"

namespace seam::fusion {
namespace {

std::string Names(const std::vector<const Instruction*>& list) {
  return absl::StrJoin(list, " ", [](std::string* out, const Instruction* i) {
    absl::StrAppend(out, i->name());
  });
}

std::string Bytes(double bytes) {
  if (bytes >= 1e9) return absl::StrFormat("%.2f GB", bytes / 1e9);
  if (bytes >= 1e6) return absl::StrFormat("%.2f MB", bytes / 1e6);
  if (bytes >= 1e3) return absl::StrFormat("%.1f KB", bytes / 1e3);
  return absl::StrFormat("%.0f B", bytes);
}

void AppendKernel(std::string& out, const Kernel& k) {
  if (k.alias_only) {
    absl::StrAppend(&out, k.Name(), ": alias (", Names(k.instructions), "), no data moves\n");
    return;
  }
  absl::StrAppendFormat(&out, "%s: %d op(s), %d group(s), %d output(s), %d grid barrier(s)\n",
                        k.Name(), k.instructions.size(), k.groups.size(), k.outputs.size(),
                        k.grid_barriers);
  absl::StrAppend(&out, "  ops: ", Names(k.instructions), "\n");
  absl::StrAppend(&out, "  outputs: ", Names(k.outputs), "\n");
  for (size_t j = 0; j < k.groups.size(); ++j) {
    const Group& g = k.groups[j];
    absl::StrAppend(&out, "  group ", g.id, ": dominant ", g.dominant->name(), " (", g.why, ")");
    if (!g.sub_dominants.empty()) absl::StrAppend(&out, ", sub-dominant ", Names(g.sub_dominants));
    absl::StrAppend(&out, "\n    mapping: ", g.mapping.ToString(), "\n");
    for (const OnePassStatistic& s : k.one_pass) {
      if (s.group != static_cast<int>(j)) continue;
      absl::StrAppend(&out, "    one pass: folds in group ", k.groups[s.host].id,
                      "'s pass (count, mean and centred squares per chunk)\n");
    }
    for (const OnlineSoftmax& s : k.online_softmax) {
      if (s.group != static_cast<int>(j)) continue;
      absl::StrAppend(&out, "    online softmax: folds in group ", k.groups[s.host].id,
                      "'s pass (running max, rescaled sum)\n");
    }
    if (g.mapping.reduces && g.mapping.blocks_per_row > 1) {
      absl::StrAppend(&out, "    combine: global (partials of ", g.mapping.blocks_per_row,
                      " blocks per row meet after a grid barrier)\n");
    }
  }
  for (const Edge& e : k.edges) {
    absl::StrAppend(&out, "  edge ", e.producer->name(), " -> ", e.consumer->name(), ": ",
                    SchemeName(e.scheme));
    if (e.scheme != Scheme::kLocal) absl::StrAppend(&out, " (", e.reason, ")");
    absl::StrAppend(&out, "\n");
  }
  absl::StrAppendFormat(&out, "  estimate: read %s, write %s, scratch %s, %.1f us\n",
                        Bytes(k.cost.dram_read_bytes), Bytes(k.cost.dram_write_bytes),
                        Bytes(k.cost.scratch_bytes), k.cost.time_us);
}

void AppendTotals(std::string& out, const PlanTotals& t) {
  absl::StrAppendFormat(
      &out,
      "totals: %d kernel(s), %d standalone op(s), %d memory-intensive kernel(s), %d library "
      "call(s), %d alias(es)\n",
      t.kernels, t.standalone_kernels, t.MemoryIntensiveKernels(), t.library_calls, t.aliases);
  absl::StrAppendFormat(&out,
                        "estimate: DRAM %s (read %s, write %s), scratch %s, %d grid barrier(s), "
                        "%.1f us memory-intensive + %.1f us library\n",
                        Bytes(t.cost.dram_bytes()), Bytes(t.cost.dram_read_bytes),
                        Bytes(t.cost.dram_write_bytes), Bytes(t.cost.scratch_bytes),
                        t.cost.grid_barriers, t.cost.time_us, t.library_cost.time_us);
  if (t.epilogues > 0) {
    absl::StrAppendFormat(&out, "epilogues: %d library call(s) run their consumers, saving %s\n",
                          t.epilogues, Bytes(t.epilogue_bytes_saved));
  }
}

nlohmann::json NameList(const std::vector<const Instruction*>& list) {
  nlohmann::json names = nlohmann::json::array();
  for (const Instruction* i : list) names.push_back(i->name());
  return names;
}

nlohmann::json MappingJson(const ThreadMapping& m) {
  return {{"kind", m.kind == MappingKind::kRow ? "row" : "column"},
          {"rows", m.rows},
          {"row_length", m.row_length},
          {"rows_per_block", m.rows_per_block},
          {"blocks_per_row", m.blocks_per_row},
          {"threads_per_row", m.threads_per_row},
          {"threads_per_block", m.threads_per_block},
          {"vector_width", m.vector_width},
          {"blocks", m.blocks},
          {"tasks_per_block", m.tasks_per_block},
          {"reduces", m.reduces}};
}

nlohmann::json CostJson(const Cost& c) {
  return {{"dram_read_bytes", c.dram_read_bytes}, {"dram_write_bytes", c.dram_write_bytes},
          {"scratch_bytes", c.scratch_bytes},     {"flops", c.flops},
          {"grid_barriers", c.grid_barriers},     {"onchip_bytes", c.onchip_bytes},
          {"parallelism", c.parallelism},         {"time_us", c.time_us}};
}

// "  epilogue: add.3 maximum.4 -> maximum.4, reads bias, saves 1.6 MB"
void AppendEpilogue(std::string& out, const Epilogue& e) {
  absl::StrAppend(&out, "  epilogue:");
  for (const Instruction* op : e.ops) absl::StrAppend(&out, " ", op->name());
  absl::StrAppend(&out, " -> ", e.result->name());
  if (!e.inputs.empty()) {
    absl::StrAppend(&out, ", reads");
    for (const Instruction* v : e.inputs) absl::StrAppend(&out, " ", v->name());
  }
  absl::StrAppendFormat(&out, ", saves %s\n", Bytes(e.bytes_saved));
}

nlohmann::json EpilogueJson(const Epilogue& e) {
  nlohmann::json ops = nlohmann::json::array(), inputs = nlohmann::json::array();
  for (const Instruction* op : e.ops) ops.push_back(op->name());
  for (const Instruction* v : e.inputs) inputs.push_back(v->name());
  return {{"ops", ops}, {"result", e.result->name()}, {"inputs", inputs}, {"bytes_saved", e.bytes_saved}};
}

nlohmann::json StandaloneJson(const std::vector<StandaloneOp>& ops, const Computation& c) {
  nlohmann::json list = nlohmann::json::array();
  for (const StandaloneOp& s : ops) {
    list.push_back({{"op", s.op->name()},
                    {"opcode", std::string(OpcodeName(s.op->opcode()))},
                    {"computation", c.name()},
                    {"cost", CostJson(s.cost)}});
    if (!s.epilogue.empty()) list.back()["epilogue"] = EpilogueJson(s.epilogue);
  }
  return list;
}

}  // namespace

std::string PlanToText(const FusionPlan& plan) {
  std::string out = absl::StrCat("plan: strategy ", StrategyName(plan.strategy));
  if (!plan.explorer.empty()) absl::StrAppend(&out, " (", plan.explorer, ")");
  absl::StrAppend(&out, ", device ", plan.device.name, "\n");
  for (const ComputationPlan& c : plan.computations) {
    absl::StrAppend(&out, "\ncomputation ", c.computation->name(), "\n");
    for (const Kernel& k : c.kernels) AppendKernel(out, k);
    for (const StandaloneOp& l : c.library_calls) {
      absl::StrAppendFormat(&out, "library call %s (%s): %.1f us\n", l.op->name(),
                            OpcodeName(l.op->opcode()), l.cost.time_us);
      if (!l.epilogue.empty()) AppendEpilogue(out, l.epilogue);
    }
    for (const StandaloneOp& s : c.standalone) {
      absl::StrAppendFormat(&out, "standalone %s (%s): %.1f us\n", s.op->name(),
                            OpcodeName(s.op->opcode()), s.cost.time_us);
    }
    for (const Refusal& r : c.refusals) {
      absl::StrAppend(&out, "refused ", r.producer->name(), " into ", r.consumer->name(), ": ",
                      r.reason, "\n");
    }
  }
  absl::StrAppend(&out, "\n");
  AppendTotals(out, plan.Totals());
  return out;
}

std::string PlanToJson(const FusionPlan& plan) {
  nlohmann::json kernels = nlohmann::json::array();
  nlohmann::json library = nlohmann::json::array();
  nlohmann::json standalone = nlohmann::json::array();
  nlohmann::json refusals = nlohmann::json::array();
  for (const ComputationPlan& c : plan.computations) {
    for (const Kernel& k : c.kernels) {
      nlohmann::json groups = nlohmann::json::array();
      for (size_t j = 0; j < k.groups.size(); ++j) {
        const Group& g = k.groups[j];
        nlohmann::json group = {{"dominant", g.dominant->name()},
                                {"why", g.why},
                                {"sub_dominants", NameList(g.sub_dominants)},
                                {"members", NameList(g.members)},
                                {"mapping", MappingJson(g.mapping)}};
        for (const OnePassStatistic& s : k.one_pass) {
          if (s.group == static_cast<int>(j))
            group["one_pass_in"] = k.groups[s.host].dominant->name();
        }
        for (const OnlineSoftmax& s : k.online_softmax) {
          if (s.group == static_cast<int>(j))
            group["online_softmax_in"] = k.groups[s.host].dominant->name();
        }
        groups.push_back(std::move(group));
      }
      nlohmann::json edges = nlohmann::json::array();
      for (const Edge& e : k.edges) {
        edges.push_back({{"from", e.producer->name()},
                         {"to", e.consumer->name()},
                         {"scheme", std::string(SchemeName(e.scheme))},
                         {"reason", e.reason}});
      }
      kernels.push_back({{"name", k.Name()},
                         {"computation", c.computation->name()},
                         {"alias", k.alias_only},
                         {"ops", NameList(k.instructions)},
                         {"inputs", NameList(k.inputs)},
                         {"outputs", NameList(k.outputs)},
                         {"groups", groups},
                         {"edges", edges},
                         {"cost", CostJson(k.cost)}});
    }
    for (auto& j : StandaloneJson(c.library_calls, *c.computation)) library.push_back(j);
    for (auto& j : StandaloneJson(c.standalone, *c.computation)) standalone.push_back(j);
    for (const Refusal& r : c.refusals) {
      refusals.push_back(
          {{"producer", r.producer->name()}, {"consumer", r.consumer->name()}, {"reason", r.reason}});
    }
  }
  PlanTotals t = plan.Totals();
  nlohmann::json doc = {
      {"strategy", std::string(StrategyName(plan.strategy))},
      {"explorer", plan.explorer},
      {"device", plan.device.name},
      {"kernels", kernels},
      {"library_calls", library},
      {"standalone", standalone},
      {"refusals", refusals},
      {"totals",
       {{"kernels", t.kernels},
        {"standalone_kernels", t.standalone_kernels},
        {"memory_intensive_kernels", t.MemoryIntensiveKernels()},
        {"library_calls", t.library_calls},
        {"epilogues", t.epilogues},
        {"epilogue_bytes_saved", t.epilogue_bytes_saved},
        {"aliases", t.aliases},
        {"cost", CostJson(t.cost)},
        {"library_cost", CostJson(t.library_cost)}}}};
  return doc.dump(2) + "\n";
}

std::string PlanToDot(const FusionPlan& plan) {
  std::string out = "digraph plan {\n  rankdir=TB;\n  node [shape=box, fontsize=10];\n";
  auto id = [](const Instruction* i) { return absl::StrCat("\"", i->parent()->name(), "/", i->name(), "\""); };
  auto colour = [](Scheme s) {
    switch (s) {
      case Scheme::kLocal: return "forestgreen";
      case Scheme::kRegional: return "darkorange";
      case Scheme::kGlobal: return "red";
    }
    return "black";
  };
  absl::flat_hash_map<const Instruction*, bool> drawn;
  for (const ComputationPlan& c : plan.computations) {
    for (const Kernel& k : c.kernels) {
      absl::StrAppend(&out, "  subgraph \"cluster_", c.computation->name(), "_", k.id,
                      "\" {\n    label=\"", k.Name(), "\";\n    style=rounded;\n");
      for (const Instruction* i : k.instructions) {
        absl::StrAppend(&out, "    ", id(i), " [label=\"", i->name(), "\\n",
                        OpcodeName(i->opcode()), "\"];\n");
        drawn[i] = true;
      }
      absl::StrAppend(&out, "  }\n");
      for (const Edge& e : k.edges) {
        absl::StrAppend(&out, "  ", id(e.producer), " -> ", id(e.consumer), " [color=",
                        colour(e.scheme), ", label=\"", SchemeName(e.scheme), "\"];\n");
      }
    }
    // Edges into kernels from the rest of the computation, drawn grey.
    for (const Kernel& k : c.kernels) {
      for (const Instruction* input : k.inputs) {
        for (const Instruction* user : input->users()) {
          if (std::find(k.instructions.begin(), k.instructions.end(), user) == k.instructions.end()) continue;
          if (!drawn.contains(input)) {
            absl::StrAppend(&out, "  ", id(input), " [label=\"", input->name(), "\\n",
                            OpcodeName(input->opcode()), "\", style=dashed];\n");
            drawn[input] = true;
          }
          absl::StrAppend(&out, "  ", id(input), " -> ", id(user), " [color=grey];\n");
        }
      }
    }
  }
  absl::StrAppend(&out, "}\n");
  return out;
}

}  // namespace seam::fusion
