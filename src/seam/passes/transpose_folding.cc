// transpose-folding: folds a transpose operand of a dot or convolution into
// the op's dimension numbers, after XLA's TransposeFolding:
//
//   dot(transpose(a), b), lhs_contracting_dims={1}
//     -> dot(a, b), lhs_contracting_dims={perm[1]}
//   convolution(x, transpose(k)), dim_labels=..._oi01->...
//     -> convolution(x, k) with the kernel labels renumbered
//
// Dots and convolutions read their operands through dimension numbers, so a
// transpose in front of them is a copy of the whole operand that buys
// nothing; libraries take the strides directly.
//
// A dot's result lists batch dimensions in the order its *_batch_dims name
// them, then the free dimensions of lhs and of rhs in increasing order. So a
// dot transpose folds only when the free dimensions keep their relative
// order through the permutation; otherwise the result would come out
// permuted, and the fold is skipped. Contracting and batch dimensions are
// renamed in the order listed, so the summation order, and with it the
// rounding, is unchanged. A convolution names its output dimensions
// explicitly, so any transpose of either operand folds.
//
// Not folded: ragged-dot and sparse dots (extra operands and metadata tied
// to operand dimensions), ops with control edges or dynamic dimensions.
#include "seam/passes/mover_util.h"
#include "seam/passes/pass.h"

namespace seam {
namespace {

bool IsFoldableTranspose(const Instruction* i) {
  return i->opcode() == Opcode::kTranspose && !movers::HasControlEdges(*i) &&
         movers::IsStaticArray(i->shape()) && movers::IsStaticArray(i->operand(0)->shape());
}

IntList Renumber(const IntList& dims, const IntList& permutation) {
  IntList out;
  for (int64_t d : dims) out.push_back(permutation[static_cast<size_t>(d)]);
  return out;
}

// Renames a dot operand's dimension numbers through transpose(x, permutation);
// false, changing nothing, when its free dimensions would change order.
bool FoldDotOperand(const IntList& permutation, IntList& batch, IntList& contracting) {
  int64_t last_free = -1;
  for (size_t d = 0; d < permutation.size(); ++d) {
    int64_t dim = static_cast<int64_t>(d);
    bool bound = std::find(batch.begin(), batch.end(), dim) != batch.end() ||
                 std::find(contracting.begin(), contracting.end(), dim) != contracting.end();
    if (bound) continue;
    if (permutation[d] < last_free) return false;
    last_free = permutation[d];
  }
  batch = Renumber(batch, permutation);
  contracting = Renumber(contracting, permutation);
  return true;
}

// Folds what it can of `dot`'s operands into a new dot; null when nothing.
Instruction* FoldDot(Instruction* dot, HloBuilder& b) {
  if (dot->attrs().FindVerbatim("sparsity") != nullptr) return nullptr;
  Attributes attrs = dot->attrs();
  IntList lb = attrs.lhs_batch_dims.value_or(IntList{});
  IntList lc = attrs.lhs_contracting_dims.value_or(IntList{});
  IntList rb = attrs.rhs_batch_dims.value_or(IntList{});
  IntList rc = attrs.rhs_contracting_dims.value_or(IntList{});
  Instruction* lhs = dot->operand(0);
  Instruction* rhs = dot->operand(1);
  bool folded = false;
  if (IsFoldableTranspose(lhs) && FoldDotOperand(*lhs->attrs().dimensions, lb, lc)) {
    lhs = lhs->operand(0);
    folded = true;
  }
  if (IsFoldableTranspose(rhs) && FoldDotOperand(*rhs->attrs().dimensions, rb, rc)) {
    rhs = rhs->operand(0);
    folded = true;
  }
  if (!folded) return nullptr;
  // Absent lists stay absent, as the printer writes what is set.
  if (attrs.lhs_batch_dims.has_value() || !lb.empty()) attrs.lhs_batch_dims = lb;
  if (attrs.lhs_contracting_dims.has_value() || !lc.empty()) attrs.lhs_contracting_dims = lc;
  if (attrs.rhs_batch_dims.has_value() || !rb.empty()) attrs.rhs_batch_dims = rb;
  if (attrs.rhs_contracting_dims.has_value() || !rc.empty()) attrs.rhs_contracting_dims = rc;
  Instruction* folded_dot = b.Clone(*dot, {lhs, rhs});
  folded_dot->mutable_attrs() = std::move(attrs);
  return folded_dot;
}

Instruction* FoldConvolution(Instruction* conv, HloBuilder& b) {
  if (!conv->attrs().dim_labels.has_value()) return nullptr;
  Attributes attrs = conv->attrs();
  ConvDimLabels& labels = *attrs.dim_labels;
  Instruction* input = conv->operand(0);
  Instruction* kernel = conv->operand(1);
  bool folded = false;
  if (IsFoldableTranspose(input)) {
    const IntList& p = *input->attrs().dimensions;
    labels.input_batch = p[static_cast<size_t>(labels.input_batch)];
    labels.input_feature = p[static_cast<size_t>(labels.input_feature)];
    labels.input_spatial = Renumber(labels.input_spatial, p);
    input = input->operand(0);
    folded = true;
  }
  if (IsFoldableTranspose(kernel)) {
    const IntList& p = *kernel->attrs().dimensions;
    labels.kernel_input_feature = p[static_cast<size_t>(labels.kernel_input_feature)];
    labels.kernel_output_feature = p[static_cast<size_t>(labels.kernel_output_feature)];
    labels.kernel_spatial = Renumber(labels.kernel_spatial, p);
    kernel = kernel->operand(0);
    folded = true;
  }
  if (!folded) return nullptr;
  Instruction* folded_conv = b.Clone(*conv, {input, kernel});
  folded_conv->mutable_attrs() = std::move(attrs);
  return folded_conv;
}

class TransposeFoldingPass : public Pass {
 public:
  absl::StatusOr<bool> Run(Module& module) override {
    return movers::ReplaceFolded(module, Opcode::kTranspose, [](Instruction* i, HloBuilder& b) {
      if (i->opcode() == Opcode::kDot) return FoldDot(i, b);
      if (i->opcode() == Opcode::kConvolution) return FoldConvolution(i, b);
      return static_cast<Instruction*>(nullptr);
    });
  }
};

}  // namespace

std::unique_ptr<Pass> MakeTransposeFoldingPass() {
  return std::make_unique<TransposeFoldingPass>();
}

}  // namespace seam
