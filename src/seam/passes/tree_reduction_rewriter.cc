// tree-reduction-rewriter: a reduce that folds more than kMaxReducedExtent
// elements into each output becomes two reduces, the first over an inner
// block of about sqrt(n) elements and the second over the partial results,
// as XLA's TreeReductionRewriter does. A long serial reduction is the one
// reduction shape a GPU cannot spread over threads, and summing in a tree
// also loses less precision than summing in a line.
//
// Consecutive reduced dimensions are merged by a reshape (free in row-major
// order). The split point is chosen on the reduced index space, from the
// minor end: whole reduced runs go to the inner reduce while they fit, and
// the run where the split falls is padded up to a multiple of its inner
// part and reshaped into [outer, inner]. The padding and the inner reduces
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
#include <cmath>

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
  std::optional<Opcode> reducer = expand::SimpleReducerOp(**r.attrs().to_apply);
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

// Splits `r` in two once; returns the two new reduces (inner, outer) or
// nulls when the split would not make progress.
std::pair<Instruction*, Instruction*> Split(HloBuilder& b, Instruction* r, Opcode op) {
  Instruction* x = r->operand(0);
  Runs runs = MergeRuns(x->shape(), *r->attrs().dimensions);
  int64_t target = static_cast<int64_t>(std::ceil(std::sqrt(static_cast<double>(runs.extent))));
  // From the minor end, whole reduced runs go inside while they fit; run j
  // is where the split falls.
  int64_t suffix = 1;
  int j = static_cast<int>(runs.dims.size()) - 1;
  for (; j >= 0; --j) {
    if (!runs.reduced[j]) continue;
    if (suffix * runs.dims[j] >= target) break;
    suffix *= runs.dims[j];
  }
  if (j < 0) return {nullptr, nullptr};
  int64_t size = runs.dims[j];
  int64_t inner = (target + suffix - 1) / suffix;
  int64_t outer = (size + inner - 1) / inner;
  bool reduced_before_j = false;
  for (int k = 0; k < j; ++k) reduced_before_j |= runs.reduced[k];
  if (outer < 2 && !reduced_before_j) return {nullptr, nullptr};

  Instruction* identity = b.Constant(*expand::IdentityOf(op, x->shape().dtype()));
  std::vector<int64_t> dims = runs.dims;   // after the split of run j
  std::vector<bool> inside(dims.size());  // reduced by the inner reduce
  for (size_t k = 0; k < dims.size(); ++k) inside[k] = runs.reduced[k] && static_cast<int>(k) > j;
  std::vector<bool> outside(dims.size());
  for (size_t k = 0; k < dims.size(); ++k) outside[k] = runs.reduced[k] && static_cast<int>(k) < j;
  if (outer < 2) {
    inside[j] = true;  // the whole run fits inside: no padding
  } else {
    if (outer * inner != size) {
      if (x->shape().dims() != runs.dims) x = b.Reshape(x, runs.dims);
      Attributes attrs;
      attrs.padding = PaddingConfig(dims.size());
      (*attrs.padding)[j].high = outer * inner - size;
      dims[j] = outer * inner;
      x = b.Add(Opcode::kPad, WithDims(x->shape(), dims), {x, identity}, std::move(attrs));
    }
    dims[j] = inner;
    inside[j] = true;
    dims.insert(dims.begin() + j, outer);
    inside.insert(inside.begin() + j, false);
    outside.insert(outside.begin() + j, true);
  }
  // One reshape merges the runs and splits run j (free in row-major order).
  if (x->shape().dims() != dims) x = b.Reshape(x, dims);
  Computation* reducer = *r->attrs().to_apply;
  IntList inner_dims, outer_dims;
  for (size_t k = 0, kept = 0; k < dims.size(); ++k) {
    if (inside[k]) {
      inner_dims.push_back(static_cast<int64_t>(k));
      continue;
    }
    if (outside[k]) outer_dims.push_back(static_cast<int64_t>(kept));
    ++kept;
  }
  Instruction* first = b.Reduce(x, identity, inner_dims, reducer);
  Instruction* second = b.Reduce(first, r->operand(1), outer_dims, reducer);
  return {first, second};
}

class TreeReductionRewriterPass : public Pass {
 public:
  absl::string_view name() const override { return "tree-reduction-rewriter"; }
  absl::StatusOr<bool> Run(Module& module) override {
    expand::Rewriter rewriter(module);
    bool changed = false;
    std::vector<Instruction*> work = rewriter.Instructions(Opcode::kReduce);
    while (!work.empty()) {
      Instruction* r = work.back();
      work.pop_back();
      Opcode op;
      if (!Rewritable(*r, &op) ||
          MergeRuns(r->operand(0)->shape(), *r->attrs().dimensions).extent <=
              kMaxReducedExtent) {
        continue;
      }
      HloBuilder b = rewriter.Builder(*r->parent());
      auto [first, second] = Split(b, r, op);
      if (first == nullptr) continue;
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
