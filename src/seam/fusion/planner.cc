#include "seam/fusion/planner.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "seam/fusion/cost_model.h"
#include "seam/fusion/duplication.h"
#include "seam/fusion/epilogue.h"
#include "seam/fusion/kernel_analysis.h"
#include "seam/fusion/op_class.h"
#include "seam/fusion/strategies.h"

namespace seam::fusion {
namespace {

// Computations run as sequences of kernels, entry first: what while,
// conditional and call run, not what reduce or sort apply per element.
std::vector<const Computation*> SequentialComputations(const Module& module) {
  std::vector<const Computation*> order{module.entry()};
  absl::flat_hash_set<const Computation*> seen{module.entry()};
  for (size_t k = 0; k < order.size(); ++k) {
    for (const auto& i : order[k]->instructions()) {
      Opcode op = i->opcode();
      if (op != Opcode::kWhile && op != Opcode::kConditional && op != Opcode::kCall) continue;
      for (Computation* callee : i->CalledComputations()) {
        if (seen.insert(callee).second) order.push_back(callee);
      }
    }
  }
  return order;
}

// Which kernel writes each value others read: a value computed in several
// kernels (duplicated) is written by the first, when some reader runs in a
// kernel that does not compute it (or in none: a library call, the root,
// an epilogue reading it through a broadcast it recomputes).
void AssignOutputs(const Computation& computation, const std::vector<int>& original_index,
                   const absl::flat_hash_map<const Instruction*, int>& writer,
                   const absl::flat_hash_set<const Instruction*>& read_by_epilogues,
                   std::vector<Kernel>& kernels) {
  absl::flat_hash_map<const Instruction*, std::vector<int>> kernels_of;
  for (size_t k = 0; k < kernels.size(); ++k) {
    for (const Instruction* i : kernels[k].instructions) kernels_of[i].push_back(static_cast<int>(k));
  }
  for (size_t k = 0; k < kernels.size(); ++k) {
    for (const Instruction* i : kernels[k].instructions) {
      const std::vector<int>& mine = kernels_of[i];
      auto chosen = writer.find(i);
      bool writes = chosen != writer.end() ? chosen->second == original_index[k]
                                           : mine.front() == static_cast<int>(k);
      if (!writes) continue;
      bool read_outside = i == computation.root() || read_by_epilogues.contains(i);
      for (const Instruction* user : i->users()) {
        auto it = kernels_of.find(user);
        if (it == kernels_of.end()) {
          read_outside = true;
          continue;
        }
        for (int reader : it->second) {
          read_outside |= std::find(mine.begin(), mine.end(), reader) == mine.end();
        }
      }
      if (read_outside) kernels[k].outputs.push_back(i);
    }
  }
}

// Every producer -> consumer edge between fusible ops that no kernel holds
// whole gets a reason, the strategy's own where it gave one.
void ExplainSplitEdges(const Computation& computation, const PlanOptions& options,
                       const std::vector<Kernel>& kernels, std::vector<Refusal>& refusals) {
  if (options.strategy == Strategy::kNone) return;  // nothing is fused, by definition
  absl::flat_hash_map<const Instruction*, std::vector<int>> kernels_of;
  for (const Kernel& k : kernels) {
    for (const Instruction* i : k.instructions) kernels_of[i].push_back(k.id);
  }
  absl::flat_hash_set<std::pair<const Instruction*, const Instruction*>> explained;
  for (const Refusal& r : refusals) explained.insert({r.producer, r.consumer});
  std::string reason =
      options.strategy == Strategy::kXla
          ? "not fused by XLA's rules"
          : options.explorer == "beam"
                ? "the explorer scored them better apart (or together they would form a cycle)"
                : "different scopes: a library call or opaque op lies on a path between them";
  for (const Instruction* c : computation.MakePostOrder()) {
    auto in_c = kernels_of.find(c);
    if (in_c == kernels_of.end()) continue;
    for (const Instruction* p : c->operands()) {
      auto in_p = kernels_of.find(p);
      if (in_p == kernels_of.end() || explained.contains({p, c})) continue;
      bool together = std::any_of(in_c->second.begin(), in_c->second.end(), [&](int k) {
        return std::find(in_p->second.begin(), in_p->second.end(), k) != in_p->second.end();
      });
      if (together) continue;
      explained.insert({p, c});
      refusals.push_back({p, c, reason});
    }
  }
}

ComputationPlan PlanComputation(const Computation& computation, const PlanOptions& options) {
  Partition partition;
  switch (options.strategy) {
    case Strategy::kNone: partition = PartitionNone(computation); break;
    case Strategy::kXla: partition = PartitionXla(computation); break;
    case Strategy::kStitch:
      partition = options.explorer == "beam" ? ExploreStitchBeam(computation, options.device)
                                             : PartitionStitch(computation);
      DuplicateCheapProducers(computation, partition);
      break;
  }
  // The eager baseline fuses nothing, epilogues included; the GPU backend
  // runs its cuBLAS calls bare.
  absl::flat_hash_map<const Instruction*, Epilogue> epilogues;
  if (options.library_epilogues && options.strategy != Strategy::kNone && !options.device.is_gpu()) {
    epilogues = AttachEpilogues(computation, options.epilogue_min_result_bytes, partition);
  }
  ComputationPlan plan;
  plan.computation = &computation;
  plan.refusals = std::move(partition.refusals);
  absl::flat_hash_map<const Instruction*, int> position;
  for (const Instruction* i : computation.MakePostOrder()) {
    position[i] = static_cast<int>(position.size());
    OpClass c = ClassifyOp(*i);
    if (c == OpClass::kLibrary) {
      StandaloneOp& call = plan.library_calls.emplace_back();
      call.op = i;
      call.cost = EstimateStandaloneCost(*i, options.device);
      if (auto e = epilogues.find(i); e != epilogues.end()) call.epilogue = std::move(e->second);
    } else if (c == OpClass::kStandalone) {
      plan.standalone.push_back({i, EstimateStandaloneCost(*i, options.device), {}});
    } else if (c == OpClass::kOpaque) {
      plan.opaque.push_back({i, Cost{}, {}});
    }
  }
  for (size_t k = 0; k < partition.kernels.size(); ++k) {
    std::vector<const Instruction*>& members = partition.kernels[k];
    std::sort(members.begin(), members.end(), [&](const Instruction* a, const Instruction* b) {
      return position[a] < position[b];
    });
    Kernel kernel;
    kernel.id = static_cast<int>(k);  // the partition's index until renumbered below
    kernel.instructions = std::move(members);
    plan.kernels.push_back(std::move(kernel));
  }
  // Kernels in the order their last instruction runs.
  std::sort(plan.kernels.begin(), plan.kernels.end(), [&](const Kernel& a, const Kernel& b) {
    return position[a.instructions.back()] < position[b.instructions.back()];
  });
  std::vector<int> original_index;
  for (const Kernel& k : plan.kernels) original_index.push_back(k.id);
  absl::flat_hash_set<const Instruction*> read_by_epilogues;
  for (const StandaloneOp& call : plan.library_calls) {
    read_by_epilogues.insert(call.epilogue.inputs.begin(), call.epilogue.inputs.end());
  }
  AssignOutputs(computation, original_index, partition.writer, read_by_epilogues, plan.kernels);
  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    plan.kernels[k].id = static_cast<int>(k);
    AnalyzeKernel(plan.kernels[k], options.device,
                  {.recompute_expensive = options.strategy == Strategy::kXla,
                   .one_pass_statistics = options.one_pass_statistics,
                   .excess_precision = options.excess_precision,
                   .online_softmax = options.online_softmax});
  }
  ExplainSplitEdges(computation, options, plan.kernels, plan.refusals);
  return plan;
}

}  // namespace

absl::StatusOr<Strategy> StrategyByName(absl::string_view name) {
  if (name == "none") return Strategy::kNone;
  if (name == "xla") return Strategy::kXla;
  if (name == "stitch") return Strategy::kStitch;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown fusion strategy '", name, "': expected none, xla or stitch"));
}

absl::StatusOr<FusionPlan> PlanModule(const Module& module, const PlanOptions& options) {
  if (module.entry() == nullptr) return absl::InvalidArgumentError("module has no entry computation");
  if (options.explorer != "astitch" && options.explorer != "beam") {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown explorer '", options.explorer, "': expected astitch or beam"));
  }
  FusionPlan plan;
  plan.strategy = options.strategy;
  plan.explorer = options.strategy == Strategy::kStitch ? options.explorer : "";
  plan.device = options.device;
  plan.excess_precision = options.excess_precision;
  for (const Computation* c : SequentialComputations(module)) {
    plan.computations.push_back(PlanComputation(*c, options));
  }
  return plan;
}

}  // namespace seam::fusion
