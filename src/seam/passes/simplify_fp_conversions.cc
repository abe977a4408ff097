// simplify-fp-conversions: removes convert chains whose inner step loses
// nothing. Mixed-precision front ends wrap every op in converts, so chains
// like bf16 -> f32 -> bf16 are everywhere once other passes have moved and
// merged ops; each costs a full read and write of its array.
//
//   convert_A(convert_B(x: A)) -> x              when A -> B is exact
//   convert_C(convert_B(x: A)) -> convert_C(x)   when A -> B is exact and
//                                                converting x's value from A
//                                                or from B to C agrees
//   convert_A(x: A) -> x
//
// "A -> B is exact" (movers::ConvertsExactly): B holds every value of A, e.g.
// bf16 -> f32, f16 -> f32, f32 -> f64, s8 -> s32, u8 -> bf16, pred -> any.
// XLA's SimplifyFPConversions also removes the rounding pairs (f32 -> bf16 ->
// f32), which changes results; Seam keeps them: the pass must be exact.
// The one case of an exact inner step that still does not commute is an
// integer widened to a float then converted to another integer type: float
// -> int saturates where int -> int wraps, so that needs C to hold A's range.
// A NaN keeps being a NaN (its payload may be quieted, as on hardware).
#include "seam/passes/mover_util.h"
#include "seam/passes/pass.h"

namespace seam {
namespace {

// Whether convert_C(convert_B(x: A)) == convert_C(x), given A -> B exact.
bool SkipsExactStep(DType a, DType b, DType c) {
  if (IsPred(a) || IsFloat(a) == IsFloat(b) || IsFloat(c) || IsPred(c)) return true;
  return movers::ConvertsExactly(a, c);
}

bool Simplify(Instruction* convert, movers::Editor& editor) {
  if (convert->opcode() != Opcode::kConvert || !movers::IsPlainArrayOp(*convert)) return false;
  Instruction* inner = convert->operand(0);
  DType c = convert->shape().dtype();
  if (movers::ValueBits(c) == 0) return false;
  if (inner->shape().dtype() == c) {
    if (!movers::CanReplaceWithExisting(convert, inner)) return false;
    editor.ReplaceWithExisting(convert, inner);
    return true;
  }
  if (inner->opcode() != Opcode::kConvert || movers::HasControlEdges(*inner)) return false;
  Instruction* x = inner->operand(0);
  DType a = x->shape().dtype(), b = inner->shape().dtype();
  if (!movers::ConvertsExactly(a, b) || !SkipsExactStep(a, b, c)) return false;
  if (a == c) {
    if (!movers::CanReplaceWithExisting(convert, x)) return false;
    editor.ReplaceWithExisting(convert, x);
  } else {
    editor.ReplaceWithNew(convert, editor.b().Convert(x, c));
  }
  return true;
}

class SimplifyFpConversionsPass : public ComputationPass {
  std::vector<Opcode> Triggers() const override { return {Opcode::kConvert}; }
  void Prepare(Module& module) override { editor_.emplace(module); }
  absl::StatusOr<bool> RunOnComputation(Computation& computation) override {
    editor_->Begin(computation);
    bool changed = false;
    for (Instruction* convert : computation.MakePostOrder()) {
      if (editor_->IsRemoved(convert)) continue;
      changed |= Simplify(convert, *editor_);
    }
    editor_->Finish();
    return changed;
  }

  std::optional<movers::Editor> editor_;
};

}  // namespace

std::unique_ptr<Pass> MakeSimplifyFpConversionsPass() {
  return std::make_unique<SimplifyFpConversionsPass>();
}

}  // namespace seam
