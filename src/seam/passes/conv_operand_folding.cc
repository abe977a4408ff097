// conv-operand-folding: folds the data movement in front of a convolution
// that its window can express, so that the convolution library reads the
// operand where it lies instead of a copy:
//
//   convolution(pad(x, 0), k)           -> convolution(x, k), window padding
//                                          grown by the pad (times the base
//                                          dilation; interior padding becomes
//                                          base dilation)
//   convolution(x, reverse(k, spatial)) -> convolution(x, k), window reversal
//                                          toggled on those dimensions
//
// JAX pads a ResNet stem's input explicitly; PyTorch/XLA states every
// data-gradient convolution on a reversed kernel.
//
// The reverse fold is exact. The pad fold is exact but for one case, the
// one XLA's algebraic simplifier accepts for the same fold: explicit zeros
// multiply the kernel (0 x inf is NaN), while window padding contributes
// nothing, so an infinite or NaN weight facing the border gives NaN before
// and a finite value after. Only a pad of +0 folds (window padding is +0).
//
// Not folded: negative edge padding (a crop the libraries' padding cannot
// state), padding of the batch or feature dimensions, interior padding of a
// dimension the convolution already dilates, ops with control edges.
#include "seam/passes/mover_util.h"
#include "seam/passes/pass.h"

namespace seam {
namespace {

bool IsFoldable(const Instruction* i, Opcode opcode) {
  return i->opcode() == opcode && !movers::HasControlEdges(*i) &&
         movers::IsStaticArray(i->shape()) && movers::IsStaticArray(i->operand(0)->shape());
}

// The pad's value is +0 (0 for integers): what window padding reads.
bool PadsWithPositiveZero(const Instruction* pad) {
  const Instruction* value = pad->operand(1);
  if (value->opcode() != Opcode::kConstant || value->literal() == nullptr) return false;
  const Literal& literal = *value->literal();
  if (literal.is_elided() || literal.is_opaque() || literal.element_count() != 1) return false;
  return literal.GetBits(0) == 0;  // +0.0 is all zero bits in every float type
}

// Grows `window` by `pad` on the input's spatial dimensions; false,
// changing nothing, where the pad cannot be stated as window padding.
bool FoldInputPad(const PaddingConfig& pad, const ConvDimLabels& labels, Window& window) {
  for (int64_t d : {labels.input_batch, labels.input_feature}) {
    if (pad[static_cast<size_t>(d)] != PadDim{}) return false;
  }
  Window folded = window;
  for (size_t s = 0; s < labels.input_spatial.size(); ++s) {
    const PadDim& p = pad[static_cast<size_t>(labels.input_spatial[s])];
    WindowDim& w = folded.dims[s];
    if (p.low < 0 || p.high < 0 || p.interior < 0) return false;
    // The window dilates the padded input: each explicit zero at an edge
    // spans lhs_dilation positions of it.
    w.pad_low += p.low * w.lhs_dilation;
    w.pad_high += p.high * w.lhs_dilation;
    if (p.interior > 0) {
      if (w.lhs_dilation != 1) return false;
      w.lhs_dilation = p.interior + 1;
    }
  }
  window = std::move(folded);
  return true;
}

// Toggles the reversal of the kernel's spatial dimensions `reversed`;
// false where one of them is not spatial.
bool FoldKernelReverse(const IntList& reversed, const ConvDimLabels& labels, Window& window) {
  Window folded = window;
  for (int64_t d : reversed) {
    auto it = std::find(labels.kernel_spatial.begin(), labels.kernel_spatial.end(), d);
    if (it == labels.kernel_spatial.end()) return false;
    WindowDim& w = folded.dims[static_cast<size_t>(it - labels.kernel_spatial.begin())];
    w.reversal = !w.reversal;
  }
  window = std::move(folded);
  return true;
}

// Folds what it can of `conv`'s operands into a new convolution; null when
// nothing.
Instruction* FoldConvolution(Instruction* conv, HloBuilder& b) {
  if (!conv->attrs().dim_labels.has_value() || !conv->attrs().window.has_value()) return nullptr;
  Attributes attrs = conv->attrs();
  const ConvDimLabels& labels = *attrs.dim_labels;
  Window& window = *attrs.window;
  if (window.dims.size() != labels.input_spatial.size()) return nullptr;
  Instruction* input = conv->operand(0);
  Instruction* kernel = conv->operand(1);
  bool folded = false;
  if (IsFoldable(input, Opcode::kPad) && input->attrs().padding.has_value() &&
      input->attrs().padding->size() == static_cast<size_t>(input->shape().rank()) &&
      PadsWithPositiveZero(input) && FoldInputPad(*input->attrs().padding, labels, window)) {
    input = input->operand(0);
    folded = true;
  }
  if (IsFoldable(kernel, Opcode::kReverse) && kernel->attrs().dimensions.has_value() &&
      FoldKernelReverse(*kernel->attrs().dimensions, labels, window)) {
    kernel = kernel->operand(0);
    folded = true;
  }
  if (!folded) return nullptr;
  Instruction* folded_conv = b.Clone(*conv, {input, kernel});
  folded_conv->mutable_attrs() = std::move(attrs);
  return folded_conv;
}

class ConvOperandFoldingPass : public Pass {
 public:
  absl::StatusOr<bool> Run(Module& module) override {
    return movers::ReplaceFolded(module, Opcode::kConvolution, [](Instruction* i, HloBuilder& b) {
      return i->opcode() == Opcode::kConvolution ? FoldConvolution(i, b) : nullptr;
    });
  }
};

}  // namespace

std::unique_ptr<Pass> MakeConvOperandFoldingPass() {
  return std::make_unique<ConvOperandFoldingPass>();
}

}  // namespace seam
