// zero-sized-hlo-elimination: an instruction whose array result has no
// elements computes nothing; it becomes an empty constant of its shape, as
// XLA's ZeroSizedHloElimination does, so the work (and the operands feeding
// only it) disappear after dce.
//
// Left alone: parameters and constants; anything with a side effect or
// calling a computation that has one; control flow and calls (a while loop
// may not terminate, and removing it would change that); custom-calls and
// collectives, whose meaning Seam does not know; bounded dynamic shapes.
#include "seam/passes/expander_util.h"
#include "seam/passes/pass.h"

namespace seam {
namespace {

bool HasZeroDim(const Shape& shape) {
  if (!shape.IsArray()) return false;
  for (int64_t d : shape.dims()) {
    if (d == 0) return true;
  }
  return false;
}

bool Eliminable(const Instruction& i) {
  if (!HasZeroDim(i.shape())) return false;
  switch (i.opcode()) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kWhile:
    case Opcode::kCall:
    case Opcode::kConditional:
    case Opcode::kCustomCall:
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
      return false;
    default:
      break;
  }
  if (OpcodeCategory(i.opcode()) == OpCategory::kCollective) return false;
  return expand::IsStaticArray(i.shape()) && IsRemovableWhenDead(i);
}

class ZeroSizedHloEliminationPass : public Pass {
 public:
  absl::StatusOr<bool> Run(Module& module) override {
    expand::Rewriter rewriter(module);
    bool changed = false;
    for (Instruction* i : rewriter.Instructions(std::nullopt)) {
      if (!Eliminable(*i)) continue;
      HloBuilder b = rewriter.Builder(*i->parent());
      rewriter.ReplaceWithNew(i, b.Constant(Literal(i->shape())));
      changed = true;
    }
    rewriter.Flush();
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeZeroSizedHloEliminationPass() {
  return std::make_unique<ZeroSizedHloEliminationPass>();
}

}  // namespace seam
