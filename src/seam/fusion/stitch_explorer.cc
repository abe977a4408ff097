// FusionStitching's fusion explorer (section 4), an alternative to AStitch's
// planner selectable with --explorer=beam, so the two can be measured
// against each other.
//
//  1. Candidate patterns: ops are visited consumers first; an op's
//     candidates are the op alone, the op joined to each of its consumers'
//     candidates, and the op joined to the best candidates of two consumers
//     at once. A delta evaluator scores each and the best 3 are kept.
//  2. Plan assembly: a beam search of width 3 walks the ops producers
//     first; an op not yet placed takes one of its candidate patterns (less
//     what is already placed), if that leaves the kernels acyclic.
//  3. Remote fusion: kernels merge, with or without an edge between them,
//     when no cycle results and the evaluator says the saved traffic and
//     launch outweigh the loss of parallelism.
//
// The delta evaluator is FusionStitching's fast one: DRAM traffic no longer
// needed for values that stay inside (weighted by where they would live:
// registers, on-chip memory, or L2 behind a grid barrier), plus launches
// saved, minus the parallelism the fused kernel loses against its most
// parallel op. The chosen plan is then analysed exactly like AStitch's.
//
// The search runs per scope: the connected fusible ops of one level (see
// the stitch strategy), which no path can leave and re-enter, so cycles
// need only be checked inside the scope.
#include <algorithm>
#include <map>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "seam/fusion/cost_model.h"
#include "seam/fusion/op_class.h"
#include "seam/fusion/row_space.h"
#include "seam/fusion/strategies.h"

namespace seam::fusion {
namespace {

constexpr int kTopCandidates = 3;
constexpr int kBeamWidth = 3;
// Patterns stop growing here: the evaluator's cost and the kernels' compile
// time grow with them.
constexpr size_t kMaxPatternOps = 192;
// Weights of saved traffic by where the value lives once fused.
constexpr double kLocalWeight = 1.0;
constexpr double kRegionalWeight = 0.8;
constexpr double kGlobalWeight = 0.4;

using Pattern = std::vector<int>;  // sorted scope-local indices

// One scope: its ops in post order, and their in-scope users.
struct Scope {
  std::vector<const Instruction*> ops;
  absl::flat_hash_map<const Instruction*, int> index;
  std::vector<std::vector<int>> users;
};

class Evaluator {
 public:
  Evaluator(const Scope& scope, const target::DeviceSpec& device) : scope_(scope), device_(device) {
    for (const Instruction* op : scope.ops) parallelism_.push_back(Parallelism(*op));
  }

  // Estimated microseconds saved by running `pattern` as one kernel instead
  // of one kernel per op.
  double Score(const Pattern& pattern) const {
    absl::flat_hash_set<int> in(pattern.begin(), pattern.end());
    double saved_bytes = 0;
    int global_values = 0;
    double lowest = 1, highest = 0, busy_us = 0;
    int launches = 0;
    for (int v : pattern) {
      const Instruction* op = scope_.ops[v];
      bool all_inside = true;
      bool any_inside = false;
      bool global = false;
      for (const Instruction* user : op->users()) {
        auto it = scope_.index.find(user);
        bool inside = it != scope_.index.end() && in.contains(it->second);
        all_inside &= inside;
        if (!inside) continue;
        any_inside = true;
        for (int k = 0; k < user->operand_count(); ++k) {
          if (user->operand(k) != op) continue;
          Scheme s = EstimateScheme(*op, *user, k);
          global |= s == Scheme::kGlobal;
          saved_bytes += static_cast<double>(ValueBytes(op->shape())) * Weight(s);
        }
      }
      if (any_inside && all_inside) saved_bytes += static_cast<double>(ValueBytes(op->shape()));
      global_values += global;
      if (op->opcode() != Opcode::kReshape && op->opcode() != Opcode::kBitcast) ++launches;
      lowest = std::min(lowest, parallelism_[v]);
      highest = std::max(highest, parallelism_[v]);
      busy_us += static_cast<double>(ValueBytes(op->shape())) / device_.dram_gbps / 1000;
    }
    double gain = saved_bytes / device_.dram_gbps / 1000 +
                  std::max(0, launches - 1) * device_.launch_us -
                  global_values * device_.grid_barrier_us;
    double lost = busy_us * (1 - lowest / std::max(highest, 1e-9));
    return gain - lost;
  }

 private:
  static double Weight(Scheme s) {
    switch (s) {
      case Scheme::kLocal: return kLocalWeight;
      case Scheme::kRegional: return kRegionalWeight;
      case Scheme::kGlobal: return kGlobalWeight;
    }
    return 0;
  }

  // Local when the consumer reads the value element for element, regional
  // when a row reduction's result is broadcast along its rows, else global.
  static Scheme EstimateScheme(const Instruction& producer, const Instruction& consumer, int k) {
    OpClass pc = ClassifyOp(producer);
    bool reused = ReusesOperandElements(consumer, k);
    if (!IsReduction(pc) && !reused) return Scheme::kLocal;
    if (pc == OpClass::kRowReduction || (!IsReduction(pc) && reused)) {
      int64_t rows = IsReduction(pc) ? GetReductionShape(producer).rows
                                     : producer.shape().ElementCount().value_or(1);
      std::optional<int> split = SplitFor(consumer.shape(), rows);
      if (split.has_value() && OperandRowsOf(consumer, *split, k).kind == OperandRows::kSameRows) {
        return Scheme::kRegional;
      }
    }
    return Scheme::kGlobal;
  }

  // The fraction of the device an op alone keeps busy: one block per row.
  double Parallelism(const Instruction& op) const {
    OpClass c = ClassifyOp(op);
    int64_t rows = 1;
    if (c == OpClass::kRowReduction) {
      rows = GetReductionShape(op).rows;
    } else if (c == OpClass::kColumnReduction) {
      rows = GetReductionShape(op).rows;  // columns
    } else if (c != OpClass::kFullReduction && op.shape().IsArray() && op.shape().rank() > 0) {
      rows = op.shape().ElementCount().value_or(1) /
             std::max<int64_t>(1, op.shape().dim(op.shape().rank() - 1));
    }
    return std::min(1.0, static_cast<double>(rows) / static_cast<double>(device_.BlocksPerWave()));
  }

  const Scope& scope_;
  const target::DeviceSpec& device_;
  std::vector<double> parallelism_;
};

// A partial plan: which kernel each op of the scope is in (-1: unplaced).
struct BeamState {
  std::vector<int> kernel_of;
  std::vector<Pattern> kernels;
  double score = 0;
};

// Whether `pattern` as one kernel, next to the state's kernels, keeps the
// kernel graph acyclic: no path leaves it and comes back.
bool Acyclic(const Scope& scope, const BeamState& state, const Pattern& pattern) {
  std::vector<char> in(scope.ops.size(), 0);
  for (int v : pattern) in[v] = 1;
  std::vector<char> seen_kernel(state.kernels.size(), 0);
  std::vector<char> seen_op(scope.ops.size(), 0);
  std::vector<int> stack;
  auto visit = [&](int u) {
    if (in[u] || seen_op[u]) return;
    int k = state.kernel_of[u];
    if (k >= 0) {
      if (seen_kernel[k]) return;
      seen_kernel[k] = 1;
      for (int m : state.kernels[k]) {
        if (!in[m] && !seen_op[m]) {
          seen_op[m] = 1;
          stack.push_back(m);
        }
      }
    } else {
      seen_op[u] = 1;
      stack.push_back(u);
    }
  };
  for (int v : pattern) {
    for (int u : scope.users[v]) visit(u);
  }
  while (!stack.empty()) {
    int x = stack.back();
    stack.pop_back();
    for (int u : scope.users[x]) {
      if (in[u]) return false;
      visit(u);
    }
  }
  return true;
}

Pattern Union(const Pattern& a, const Pattern& b) {
  Pattern out;
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

class ScopeExplorer {
 public:
  ScopeExplorer(Scope scope, const target::DeviceSpec& device)
      : scope_(std::move(scope)), evaluator_(scope_, device) {}

  std::vector<std::vector<const Instruction*>> Run() {
    BuildCandidates();
    BeamState best = AssemblePlan();
    RemoteFusion(best);
    std::vector<std::vector<const Instruction*>> kernels;
    for (const Pattern& p : best.kernels) {
      if (p.empty()) continue;
      std::vector<const Instruction*> members;
      for (int v : p) members.push_back(scope_.ops[v]);
      kernels.push_back(std::move(members));
    }
    return kernels;
  }

 private:
  void BuildCandidates() {
    int n = static_cast<int>(scope_.ops.size());
    candidates_.assign(n, {});
    BeamState empty{std::vector<int>(n, -1), {}, 0};
    for (int v = n - 1; v >= 0; --v) {
      std::vector<std::pair<double, Pattern>> options;
      auto consider = [&](Pattern p) {
        if (p.size() > kMaxPatternOps) return;
        for (const auto& o : options) {
          if (o.second == p) return;
        }
        if (p.size() > 1 && !Acyclic(scope_, empty, p)) return;
        options.emplace_back(p.size() > 1 ? evaluator_.Score(p) : 0.0, std::move(p));
      };
      consider({v});
      const std::vector<int>& consumers = scope_.users[v];
      for (int c : consumers) {
        for (const Pattern& p : candidates_[c]) consider(Union(p, {v}));
      }
      for (size_t i = 0; i < consumers.size() && i < 3; ++i) {
        for (size_t j = i + 1; j < consumers.size() && j < 3; ++j) {
          if (candidates_[consumers[i]].empty() || candidates_[consumers[j]].empty()) continue;
          consider(Union(Union(candidates_[consumers[i]][0], candidates_[consumers[j]][0]), {v}));
        }
      }
      std::stable_sort(options.begin(), options.end(),
                       [](const auto& a, const auto& b) { return a.first > b.first; });
      for (size_t k = 0; k < options.size() && k < kTopCandidates; ++k) {
        candidates_[v].push_back(std::move(options[k].second));
      }
    }
  }

  BeamState AssemblePlan() {
    int n = static_cast<int>(scope_.ops.size());
    std::vector<BeamState> beam{BeamState{std::vector<int>(n, -1), {}, 0}};
    // Producers first: an op's patterns reach down into its consumers,
    // which are placed with it.
    for (int v = 0; v < n; ++v) {
      std::vector<BeamState> next;
      for (const BeamState& state : beam) {
        if (state.kernel_of[v] >= 0) {
          next.push_back(state);
          continue;
        }
        bool placed = false;
        for (const Pattern& p : candidates_[v]) {
          Pattern rest;
          for (int m : p) {
            if (state.kernel_of[m] < 0) rest.push_back(m);
          }
          if (rest.size() > 1 && !Acyclic(scope_, state, rest)) continue;
          next.push_back(Extend(state, rest));
          placed = true;
        }
        if (!placed) next.push_back(Extend(state, {v}));
      }
      std::stable_sort(next.begin(), next.end(),
                       [](const BeamState& a, const BeamState& b) { return a.score > b.score; });
      if (next.size() > kBeamWidth) next.resize(kBeamWidth);
      beam = std::move(next);
    }
    return beam.front();
  }

  BeamState Extend(const BeamState& state, const Pattern& kernel) const {
    BeamState s = state;
    int id = static_cast<int>(s.kernels.size());
    for (int m : kernel) s.kernel_of[m] = id;
    s.kernels.push_back(kernel);
    if (kernel.size() > 1) s.score += evaluator_.Score(kernel);
    return s;
  }

  // Merges kernels when the evaluator gains and no cycle results: remote
  // fusion of unconnected kernels, and the producer-consumer merges a
  // pattern could not reach (an op with more consumers than patterns join).
  void RemoteFusion(BeamState& state) const {
    for (size_t a = 0; a < state.kernels.size(); ++a) {
      if (state.kernels[a].empty()) continue;
      for (size_t b = a + 1; b < state.kernels.size(); ++b) {
        if (state.kernels[b].empty()) continue;
        Pattern merged = Union(state.kernels[a], state.kernels[b]);
        if (merged.size() > kMaxPatternOps) continue;
        double before = Value(state.kernels[a]) + Value(state.kernels[b]);
        if (evaluator_.Score(merged) <= before) continue;
        BeamState trial = state;
        trial.kernels[b].clear();
        for (int m : state.kernels[b]) trial.kernel_of[m] = -1;
        if (!Acyclic(scope_, trial, merged)) continue;
        for (int m : state.kernels[b]) state.kernel_of[m] = static_cast<int>(a);
        state.kernels[a] = std::move(merged);
        state.kernels[b].clear();
      }
    }
  }

  double Value(const Pattern& p) const { return p.size() > 1 ? evaluator_.Score(p) : 0; }

  Scope scope_;
  Evaluator evaluator_;
  std::vector<std::vector<Pattern>> candidates_;
};

// Scopes: the connected components of each level's kernel in the stitch
// partition.
std::vector<Scope> Scopes(const Computation& computation) {
  std::vector<Scope> scopes;
  for (std::vector<const Instruction*>& level : PartitionStitch(computation).kernels) {
    absl::flat_hash_map<const Instruction*, int> index;
    for (size_t k = 0; k < level.size(); ++k) index[level[k]] = static_cast<int>(k);
    std::vector<int> component(level.size(), -1);
    int components = 0;
    for (size_t start = 0; start < level.size(); ++start) {
      if (component[start] >= 0) continue;
      std::vector<int> stack{static_cast<int>(start)};
      component[start] = components;
      while (!stack.empty()) {
        const Instruction* i = level[stack.back()];
        stack.pop_back();
        auto link = [&](const Instruction* j) {
          auto it = index.find(j);
          if (it != index.end() && component[it->second] < 0) {
            component[it->second] = components;
            stack.push_back(it->second);
          }
        };
        for (const Instruction* o : i->operands()) link(o);
        for (const Instruction* u : i->users()) link(u);
      }
      ++components;
    }
    std::vector<Scope> local(components);
    for (size_t k = 0; k < level.size(); ++k) {  // level is in post order
      Scope& s = local[component[k]];
      s.index[level[k]] = static_cast<int>(s.ops.size());
      s.ops.push_back(level[k]);
    }
    for (Scope& s : local) {
      s.users.resize(s.ops.size());
      for (size_t k = 0; k < s.ops.size(); ++k) {
        for (const Instruction* u : s.ops[k]->users()) {
          auto it = s.index.find(u);
          if (it != s.index.end()) s.users[k].push_back(it->second);
        }
      }
      scopes.push_back(std::move(s));
    }
  }
  return scopes;
}

}  // namespace

Partition ExploreStitchBeam(const Computation& computation, const target::DeviceSpec& device) {
  Partition partition;
  for (Scope& scope : Scopes(computation)) {
    for (auto& kernel : ScopeExplorer(std::move(scope), device).Run()) {
      partition.kernels.push_back(std::move(kernel));
    }
  }
  return partition;
}

}  // namespace seam::fusion
