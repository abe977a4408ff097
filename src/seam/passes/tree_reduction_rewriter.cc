// tree-reduction-rewriter: a reduce that folds more than kMaxReducedExtent
// elements into each output becomes two reduces, the first over an inner
// block of about sqrt(n) elements and the second over the partial results,
// as XLA's TreeReductionRewriter does. A long serial reduction is the one
// reduction shape a GPU cannot spread over threads, and summing in a tree
// also loses less precision than summing in a line.
//
// Consecutive reduced dimensions are merged by a reshape (free in row-major
// order). Where the reduced dimensions are not all adjacent and a split
// between two of them leaves both reduces under the threshold, that split is
// taken, with no padding. Otherwise the split point is chosen on the reduced
// index space, from the minor end: whole reduced runs go to the inner reduce
// while they fit, and the run where the split falls is padded up to a
// multiple of its inner part and reshaped into [outer, inner]. The padding and the inner reduces
// start from the reducer's exact identity (-0 for float add, -inf for max,
// ...), the outer reduce from the original init, so the result is the same
// fold of the same elements, reassociated: bit-identical for integers, max,
// min, and, or; within rounding for float add and multiply. A split that is
// still too long is split again in the same run, so the pass is idempotent.
//
// Only single-input reduces whose reducer is `op(p0, p1)` with op add,
// multiply, maximum, minimum, and, or. Float add and multiply are rewritten
// for f32 and f64 only: f16 and bf16 round every step to 8 or 11 bits, so a
// different order would change the result far beyond rounding noise.
#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "seam/passes/expander_util.h"
#include "seam/passes/pass.h"

namespace seam {
namespace {

constexpr int64_t kMaxReducedExtent = 4096;

bool Rewritable(const Instruction& r, Opcode* op) {
  if (r.opcode() != Opcode::kReduce || r.operand_count() != 2 || !r.attrs().to_apply ||
      *r.attrs().to_apply == nullptr || !r.attrs().dimensions ||
      !expand::IsStaticArray(r.shape()) || !expand::IsStaticArray(r.operand(0)->shape())) {
    return false;
  }
  std::optional<Opcode> reducer = AsBinaryReducer(**r.attrs().to_apply);
  DType type = r.operand(0)->shape().dtype();
  if (!reducer.has_value() || r.shape().dtype() != type ||
      !expand::IdentityOf(*reducer, type).has_value()) {
    return false;
  }
  bool reassociation_is_exact = *reducer != Opcode::kAdd && *reducer != Opcode::kMultiply;
  if (!reassociation_is_exact && !IsInteger(type) && type != DType::kF32 && type != DType::kF64) {
    return false;
  }
  *op = *reducer;
  return true;
}

// The input of a reduce seen with consecutive reduced dimensions merged.
struct Runs {
  std::vector<int64_t> dims;   // merged dimensions
  std::vector<bool> reduced;   // per merged dimension
  int64_t extent = 1;          // reduced elements per output
};

Runs MergeRuns(const Shape& input, const IntList& reduced_dims) {
  Runs runs;
  std::vector<bool> is_reduced(input.rank(), false);
  for (int64_t d : reduced_dims) is_reduced[d] = true;
  for (int d = 0; d < input.rank(); ++d) {
    if (is_reduced[d]) {
      runs.extent *= input.dim(d);
      if (d > 0 && is_reduced[d - 1]) {
        runs.dims.back() *= input.dim(d);
        continue;
      }
    }
    runs.dims.push_back(input.dim(d));
    runs.reduced.push_back(is_reduced[d]);
  }
  return runs;
}

// Which merged dimensions each of the two reduces folds, and whether run
// `split` (-1: none) is padded to outer * inner and split into [outer, inner].
struct Plan {
  std::vector<bool> inside, outside;
  int split = -1;
  int64_t outer = 1, inner = 1;
};

// Prefers splitting between two reduced runs (no padding) when both halves
// then fit under the threshold; else splits one run so that the inner
// reduce folds about sqrt(n) elements: whole runs from the minor end while
// they fit, and part of run j where the split falls.
std::optional<Plan> MakePlan(const Runs& runs) {
  int n = static_cast<int>(runs.dims.size());
  Plan plan;
  int64_t best = kMaxReducedExtent + 1, outer = 1;
  int boundary = -1;
  for (int k = 0; k < n; ++k) {
    if (!runs.reduced[k]) continue;
    outer *= runs.dims[k];
    int64_t inner = runs.extent / std::max<int64_t>(outer, 1);
    if (outer < runs.extent && std::max(outer, inner) < best) {
      best = std::max(outer, inner);
      boundary = k;
    }
  }
  plan.inside.assign(n, false);
  plan.outside.assign(n, false);
  if (boundary >= 0) {
    for (int k = 0; k < n; ++k) (k > boundary ? plan.inside : plan.outside)[k] = runs.reduced[k];
    return plan;
  }
  int64_t target = static_cast<int64_t>(std::ceil(std::sqrt(static_cast<double>(runs.extent))));
  int64_t suffix = 1;
  int j = n - 1;
  for (; j >= 0; --j) {
    if (!runs.reduced[j]) continue;
    if (suffix * runs.dims[j] >= target) break;
    suffix *= runs.dims[j];
  }
  if (j < 0) return std::nullopt;
  plan.inner = (target + suffix - 1) / suffix;
  plan.outer = (runs.dims[j] + plan.inner - 1) / plan.inner;
  if (plan.outer < 2) return std::nullopt;  // no progress (only for tiny extents)
  plan.split = j;
  for (int k = 0; k < n; ++k) (k > j ? plan.inside : plan.outside)[k] = runs.reduced[k];
  return plan;
}

// Splits `r` in two as `plan` says; returns the two new reduces (inner,
// outer).
std::pair<Instruction*, Instruction*> Split(HloBuilder& b, Instruction* r, const Runs& runs,
                                            std::optional<Plan> plan, Instruction* identity) {
  Instruction* x = r->operand(0);
  std::vector<int64_t> dims = runs.dims;
  if (int j = plan->split; j >= 0) {
    int64_t padded = plan->outer * plan->inner;
    if (padded != dims[j]) {
      if (x->shape().dims() != dims) x = b.Reshape(x, dims);
      Attributes attrs;
      attrs.padding = PaddingConfig(dims.size());
      (*attrs.padding)[j].high = padded - dims[j];
      dims[j] = padded;
      x = b.Add(Opcode::kPad, WithDims(x->shape(), dims), {x, identity}, std::move(attrs));
    }
    // Run j becomes [outer (folded outside), inner (folded inside)].
    dims[j] = plan->inner;
    dims.insert(dims.begin() + j, plan->outer);
    plan->inside[j] = true;
    plan->inside.insert(plan->inside.begin() + j, false);
    plan->outside.insert(plan->outside.begin() + j, true);
  }
  // One reshape merges the runs and splits run j (free in row-major order).
  if (x->shape().dims() != dims) x = b.Reshape(x, dims);
  Computation* reducer = *r->attrs().to_apply;
  IntList inner_dims, outer_dims;
  for (size_t k = 0, kept = 0; k < dims.size(); ++k) {
    if (plan->inside[k]) {
      inner_dims.push_back(static_cast<int64_t>(k));
      continue;
    }
    if (plan->outside[k]) outer_dims.push_back(static_cast<int64_t>(kept));
    ++kept;
  }
  Instruction* first = b.Reduce(x, identity, inner_dims, reducer);
  Instruction* second = b.Reduce(first, r->operand(1), outer_dims, reducer);
  return {first, second};
}

class TreeReductionRewriterPass : public Pass {
 public:
  absl::StatusOr<bool> Run(Module& module) override {
    expand::Rewriter rewriter(module);
    bool changed = false;
    // The identity constant of each (computation, op, type), shared.
    std::map<std::tuple<Computation*, Opcode, DType>, Instruction*> identities;
    std::vector<Instruction*> work = rewriter.Instructions(Opcode::kReduce);
    while (!work.empty()) {
      Instruction* r = work.back();
      work.pop_back();
      Opcode op;
      if (!Rewritable(*r, &op)) continue;
      Runs runs = MergeRuns(r->operand(0)->shape(), *r->attrs().dimensions);
      std::optional<Plan> plan;
      if (runs.extent > kMaxReducedExtent) plan = MakePlan(runs);
      if (!plan.has_value()) continue;
      HloBuilder b = rewriter.Builder(*r->parent());
      Instruction*& identity = identities[{r->parent(), op, r->shape().dtype()}];
      if (identity == nullptr) identity = b.Constant(*expand::IdentityOf(op, r->shape().dtype()));
      auto [first, second] = Split(b, r, runs, std::move(plan), identity);
      rewriter.ReplaceWithNew(r, second);
      work.push_back(first);
      work.push_back(second);
      changed = true;
    }
    rewriter.Flush();
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeTreeReductionRewriterPass() {
  return std::make_unique<TreeReductionRewriterPass>();
}

}  // namespace seam
