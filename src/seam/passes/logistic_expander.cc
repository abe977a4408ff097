// logistic-expander: logistic(x) -> 1 / (1 + exp(-x)), as XLA's
// LogisticExpander (kExp) does. Backends then need no logistic of their own
// and the fusion planner sees ordinary elementwise ops it can fuse and cost.
// The interpreter computes logistic with the same formula, in one rounding
// for narrow types; the expansion rounds after every step, within the
// rewrite tolerance (and exp(-x) = inf still gives exactly 0).
#include "seam/passes/expander_util.h"
#include "seam/passes/pass.h"

namespace seam {
namespace {

class LogisticExpanderPass : public Pass {
 public:
  absl::StatusOr<bool> Run(Module& module) override {
    expand::Rewriter rewriter(module);
    bool changed = false;
    for (Instruction* i : rewriter.Instructions(Opcode::kLogistic)) {
      // Bounded dynamic shapes are left alone: the builder's splats are static.
      if (i->opcode() != Opcode::kLogistic || !expand::IsStaticArray(i->shape())) continue;
      DType type = i->shape().dtype();
      if (!IsFloat(type) && !IsComplex(type)) continue;
      HloBuilder b = rewriter.Builder(*i->parent());
      Instruction* x = i->operand(0);
      const std::vector<int64_t>& dims = x->shape().dims();
      Instruction* exp = b.Unary(Opcode::kExp, b.Unary(Opcode::kNegate, x));
      Instruction* one = expand::SplatValue(b, type, dims, 1.0);
      Instruction* denominator = b.Binary(Opcode::kAdd, one, exp);
      Instruction* result = b.Binary(Opcode::kDivide, one, denominator);
      rewriter.ReplaceWithNew(i, result);
      changed = true;
    }
    rewriter.Flush();
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeLogisticExpanderPass() {
  return std::make_unique<LogisticExpanderPass>();
}

}  // namespace seam
