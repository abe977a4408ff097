// Every plan of every corpus module, for every strategy and device, is a
// plan the executor can run: each fusible op is computed by some kernel;
// nothing else is; a value a kernel reads from outside is written by
// another kernel or produced outside kernels; the kernels form no cycle;
// XLA's kernels keep every edge thread-local; library calls' epilogues hold
// what no kernel computes and read only written values; and the papers'
// ordering holds: none >= xla >= stitch in memory-intensive kernels.
#include <filesystem>
#include <map>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "../common/test_names.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "seam/fusion/op_class.h"
#include "seam/fusion/plan_printer.h"
#include "seam/fusion/planner.h"
#include "seam/passes/pipeline.h"
#include "seam/text/parser.h"

namespace seam::fusion {
namespace {

std::vector<std::string> CorpusFiles() {
  std::vector<std::string> files;
  for (const auto& entry :
       std::filesystem::directory_iterator(SEAM_SOURCE_ROOT "/tests/corpus/hlo")) {
    std::string name = entry.path().filename().string();
    if (name.ends_with(".hlo") || name.ends_with(".txt")) files.push_back(name);
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::unique_ptr<Module>> LoadOptimized(const std::string& file) {
  absl::StatusOr<std::vector<std::unique_ptr<Module>>> modules =
      ParseHloFile(SEAM_SOURCE_ROOT "/tests/corpus/hlo/" + file);
  EXPECT_TRUE(modules.ok()) << modules.status();
  if (!modules.ok()) return {};
  absl::StatusOr<Pipeline> pipeline = Pipeline::Parse("default");
  for (auto& m : *modules) EXPECT_TRUE(pipeline->Run(*m, PipelineOptions{}).ok());
  return std::move(*modules);
}

// Checks one computation's plan; returns a description of the first problem.
// A library call with an epilogue is one unit computing the call and the
// epilogue's ops, writing the epilogue's result.
std::string Problems(const ComputationPlan& plan, Strategy strategy) {
  absl::flat_hash_map<const Instruction*, std::vector<int>> kernels_of;
  absl::flat_hash_map<const Instruction*, int> writer;
  for (const Kernel& k : plan.kernels) {
    for (const Instruction* i : k.instructions) kernels_of[i].push_back(k.id);
    for (const Instruction* o : k.outputs) {
      if (!writer.try_emplace(o, k.id).second) return "two kernels write " + o->name();
    }
  }
  int n_units = static_cast<int>(plan.kernels.size());
  absl::flat_hash_map<const Instruction*, int> epilogue_unit;  // the call and its chain
  std::vector<std::pair<int, std::vector<const Instruction*>>> epilogues;
  for (const StandaloneOp& call : plan.library_calls) {
    if (call.epilogue.empty()) continue;
    if (strategy == Strategy::kNone) return call.op->name() + ": an epilogue under strategy none";
    const int unit = n_units++;
    std::vector<const Instruction*> members = call.epilogue.ops;
    members.push_back(call.op);
    for (const Instruction* m : members) {
      if (m->opcode() == Opcode::kBroadcast) continue;  // recomputed, kernels may hold it too
      if (kernels_of.contains(m)) return m->name() + " is in a kernel and in an epilogue";
      if (!epilogue_unit.try_emplace(m, unit).second) return m->name() + " is in two epilogues";
    }
    if (!writer.try_emplace(call.epilogue.result, unit).second) {
      return call.epilogue.result->name() + " is written twice";
    }
    epilogues.push_back({unit, std::move(members)});
  }
  absl::flat_hash_set<const Instruction*> in_epilogues;
  for (const auto& [unit, members] : epilogues) in_epilogues.insert(members.begin(), members.end() - 1);
  for (const auto& i : plan.computation->instructions()) {
    bool fusible = IsFusible(ClassifyOp(*i));
    bool computed = kernels_of.contains(i.get()) || in_epilogues.contains(i.get());
    if (fusible != computed) {
      return i->name() + (fusible ? " is fusible but in no kernel" : " is in a kernel");
    }
  }
  // Unit graph: node k for kernel k, one per epilogue, plus one node per
  // other instruction.
  absl::flat_hash_map<const Instruction*, int> node;
  auto node_of_value = [&](const Instruction* v) {
    auto w = writer.find(v);
    if (w != writer.end()) return w->second;
    auto e = epilogue_unit.find(v);
    if (e != epilogue_unit.end()) return e->second;
    auto [it, inserted] = node.try_emplace(v, n_units + static_cast<int>(node.size()));
    return it->second;
  };
  std::map<int, std::set<int>> edges;
  auto read_from_outside = [&](int unit, const std::vector<const Instruction*>& members,
                               const std::string& name) -> std::string {
    absl::flat_hash_set<const Instruction*> own(members.begin(), members.end());
    for (const Instruction* i : members) {
      for (const Instruction* o : i->operands()) {
        if (own.contains(o)) continue;
        if (kernels_of.contains(o) && !writer.contains(o)) {
          return name + " reads " + o->name() + ", which no kernel writes";
        }
        if (epilogue_unit.contains(o) && !writer.contains(o)) {
          return name + " reads " + o->name() + ", inside an epilogue";
        }
        int from = node_of_value(o);
        if (from != unit) edges[from].insert(unit);
      }
    }
    return "";
  };
  for (const Kernel& k : plan.kernels) {
    if (std::string p = read_from_outside(k.id, k.instructions, k.Name()); !p.empty()) return p;
    if (strategy == Strategy::kXla) {
      for (const Edge& e : k.edges) {
        if (e.scheme != Scheme::kLocal) return k.Name() + ": xla kernel with a non-local edge";
      }
    }
  }
  for (const auto& [unit, members] : epilogues) {
    if (std::string p = read_from_outside(unit, members, members.back()->name() + "'s epilogue");
        !p.empty()) {
      return p;
    }
  }
  for (const auto& i : plan.computation->instructions()) {
    if (kernels_of.contains(i.get()) || epilogue_unit.contains(i.get()) ||
        in_epilogues.contains(i.get())) {
      continue;
    }
    int to = node_of_value(i.get());
    for (const Instruction* o : i->operands()) edges[node_of_value(o)].insert(to);
  }
  // Cycle check by depth-first search.
  std::map<int, int> state;
  std::function<bool(int)> cyclic = [&](int v) {
    state[v] = 1;
    for (int w : edges[v]) {
      if (state[w] == 1 || (state[w] == 0 && cyclic(w))) return true;
    }
    state[v] = 2;
    return false;
  };
  for (const auto& [v, targets] : edges) {
    if (state[v] == 0 && cyclic(v)) return "the kernel graph has a cycle";
  }
  return "";
}

class PlanInvariants : public ::testing::TestWithParam<std::string> {};

TEST_P(PlanInvariants, EveryStrategyAndDevice) {
  for (const auto& module : LoadOptimized(GetParam())) {
    for (const char* device : {"cpu", "h100"}) {
      int64_t previous = INT64_MAX;
      for (Strategy strategy : {Strategy::kNone, Strategy::kXla, Strategy::kStitch}) {
        PlanOptions options;
        options.strategy = strategy;
        options.device = *target::DeviceSpecByName(device);
        absl::StatusOr<FusionPlan> plan = PlanModule(*module, options);
        ASSERT_TRUE(plan.ok()) << plan.status();
        for (const ComputationPlan& c : plan->computations) {
          EXPECT_EQ(Problems(c, strategy), "")
              << module->name() << " " << c.computation->name() << " " << StrategyName(strategy)
              << " " << device;
        }
        int64_t count = plan->Totals().MemoryIntensiveKernels();
        EXPECT_LE(count, previous) << module->name() << " " << StrategyName(strategy) << " "
                                   << device << ": more kernels than the previous strategy";
        previous = count;
        nlohmann::json json = nlohmann::json::parse(PlanToJson(*plan));
        EXPECT_EQ(json["kernels"].size(), plan->Totals().kernels + plan->Totals().aliases);
      }
      PlanOptions beam;
      beam.explorer = "beam";
      beam.device = *target::DeviceSpecByName(device);
      absl::StatusOr<FusionPlan> plan = PlanModule(*module, beam);
      ASSERT_TRUE(plan.ok()) << plan.status();
      for (const ComputationPlan& c : plan->computations) {
        EXPECT_EQ(Problems(c, Strategy::kStitch), "") << module->name() << " beam " << device;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, PlanInvariants, ::testing::ValuesIn(CorpusFiles()),
                         [](const auto& info) { return testing::CorpusTestName(info.param); });

}  // namespace
}  // namespace seam::fusion
