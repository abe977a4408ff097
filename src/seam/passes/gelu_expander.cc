// gelu-expander: the GELU custom-calls PyTorch/XLA emits for its Neuron
// backend, as the elementwise HLO they stand for, so the fusion planner
// fuses them with their neighbours instead of leaving an opaque call that
// the runtime interprets:
//   AwsNeuronGelu(x)          = x Phi(x),  Phi(x) = (1 + erf(x / sqrt 2)) / 2
//   AwsNeuronGeluApprxTanh(x) = x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) / 2
//   AwsNeuronGeluBackward(x)  = Phi(x) + x exp(-x^2 / 2) / sqrt(2 pi)
// (the interpreter's handlers compute the same in double, rounding once; the
// backward call's caller multiplies by the incoming gradient). bf16 and f16
// compute in f32 and round once at the end, as the interpreter does.
#include <cmath>

#include "seam/passes/call_graph_util.h"
#include "seam/passes/expander_util.h"
#include "seam/passes/pass.h"

namespace seam {
namespace {

enum class Gelu { kErf, kTanh, kErfBackward };

std::optional<Gelu> GeluKind(const Instruction& i) {
  if (i.opcode() != Opcode::kCustomCall || i.operand_count() != 1) return std::nullopt;
  if (!IsRemovableWhenDead(i) || HasControlEdges(i) || !expand::IsStaticArray(i.shape()) ||
      !i.operand(0)->shape().Compatible(i.shape()) || !IsFloat(i.shape().dtype())) {
    return std::nullopt;
  }
  const std::string target = i.attrs().custom_call_target.value_or("");
  if (target == "AwsNeuronGelu") return Gelu::kErf;
  if (target == "AwsNeuronGeluApprxTanh") return Gelu::kTanh;
  if (target == "AwsNeuronGeluBackward") return Gelu::kErfBackward;
  return std::nullopt;
}

Instruction* Expand(HloBuilder& b, Gelu kind, Instruction* x) {
  const DType type = x->shape().dtype();
  const std::vector<int64_t>& dims = x->shape().dims();
  auto constant = [&](double value) { return expand::SplatValue(b, type, dims, value); };
  auto mul = [&](Instruction* a, Instruction* c) { return b.Binary(Opcode::kMultiply, a, c); };
  auto add = [&](Instruction* a, Instruction* c) { return b.Binary(Opcode::kAdd, a, c); };
  if (kind == Gelu::kTanh) {
    Instruction* cube = mul(mul(x, x), x);
    Instruction* inner = mul(constant(std::sqrt(2.0 / M_PI)), add(x, mul(constant(0.044715), cube)));
    Instruction* half_x = mul(constant(0.5), x);
    return mul(half_x, add(constant(1.0), b.Unary(Opcode::kTanh, inner)));
  }
  Instruction* erf = b.Unary(Opcode::kErf, mul(x, constant(M_SQRT1_2)));
  Instruction* phi = mul(constant(0.5), add(constant(1.0), erf));
  if (kind == Gelu::kErf) return mul(x, phi);
  Instruction* density = b.Unary(Opcode::kExp, mul(constant(-0.5), mul(x, x)));
  return add(phi, mul(mul(x, density), constant(1.0 / std::sqrt(2.0 * M_PI))));
}

class GeluExpanderPass : public Pass {
 public:
  absl::StatusOr<bool> Run(Module& module) override {
    expand::Rewriter rewriter(module);
    bool changed = false;
    for (Instruction* i : rewriter.Instructions(Opcode::kCustomCall)) {
      std::optional<Gelu> kind = GeluKind(*i);
      if (!kind.has_value()) continue;
      HloBuilder b = rewriter.Builder(*i->parent());
      const DType type = i->shape().dtype();
      const bool narrow = type != DType::kF32 && type != DType::kF64;
      Instruction* x = narrow ? b.Convert(i->operand(0), DType::kF32) : i->operand(0);
      Instruction* result = Expand(b, *kind, x);
      rewriter.ReplaceWithNew(i, narrow ? b.Convert(result, type) : result);
      changed = true;
    }
    rewriter.Flush();
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeGeluExpanderPass() { return std::make_unique<GeluExpanderPass>(); }

}  // namespace seam
