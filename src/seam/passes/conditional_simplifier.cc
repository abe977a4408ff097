// conditional-simplifier: a conditional whose branch is known runs that
// branch's computation inline:
//   conditional(constant index, ...)  -> the taken branch, inlined
//   conditional with a single branch  -> that branch, inlined
// as XLA's ConditionalSimplifier does (it makes a call and inlines it; we
// inline directly, which is the same). Gemma-style models select attention
// variants by a layer index that is constant after inlining; until the
// branch is inlined, nothing sees through the conditional.
//
// The index is read as the interpreter reads it: pred true runs branch 0,
// an s32 index out of range runs the last branch. Elided index constants
// are unknown and left alone. The conditional's control edges carry over
// to the inlined instructions.
#include "seam/passes/call_graph_util.h"
#include "seam/passes/pass.h"

namespace seam {
namespace {

std::vector<Computation*> Branches(const Instruction& i) {
  const Attributes& a = i.attrs();
  if (a.branch_computations.has_value()) return *a.branch_computations;
  if (a.true_computation.has_value() && a.false_computation.has_value()) {
    return {*a.true_computation, *a.false_computation};
  }
  return {};
}

// The branch `conditional` is known to take, or -1.
int64_t KnownBranch(const Instruction& conditional) {
  std::vector<Computation*> branches = Branches(conditional);
  int64_t n = static_cast<int64_t>(branches.size());
  if (n == 0 || conditional.operand_count() != n + 1) return -1;
  for (const Computation* branch : branches) {
    if (branch == nullptr) return -1;
  }
  if (n == 1) return 0;
  const Instruction* index = conditional.operand(0);
  const Literal* literal = index->literal();
  if (index->opcode() != Opcode::kConstant || literal == nullptr || literal->is_elided() ||
      literal->is_opaque() || !index->shape().IsArray() || index->shape().rank() != 0) {
    return -1;
  }
  if (index->shape().dtype() == DType::kPred) return literal->GetBits(0) ? 0 : 1;
  if (index->shape().dtype() != DType::kS32) return -1;
  int64_t k = literal->GetInt(0);
  return k < 0 || k >= n ? n - 1 : k;
}

class ConditionalSimplifierPass : public Pass {
 public:
  absl::StatusOr<bool> Run(Module& module) override {
    bool any = false;
    for (const auto& computation : module.computations()) {
      for (const Instruction* i : InstructionsWithOpcode(*computation, Opcode::kConditional)) {
        any |= KnownBranch(*i) >= 0;
      }
    }
    if (!any) return false;
    // Callers last: a branch inlined into a caller is already simplified.
    absl::StatusOr<std::vector<Computation*>> order = module.MakeComputationPostOrder();
    if (!order.ok()) return order.status();
    NameUniquer names(module);
    bool changed = false;
    for (Computation* computation : *order) {
      absl::flat_hash_set<Instruction*> removed;
      for (Instruction* i : InstructionsWithOpcode(*computation, Opcode::kConditional)) {
        int64_t taken = KnownBranch(*i);
        if (taken < 0) continue;
        const Computation* branch = Branches(*i)[taken];
        if (branch == computation) continue;
        ReplaceWithInlinedComputation(i, *branch, {i->operand(static_cast<int>(taken) + 1)},
                                      names);
        removed.insert(i);
      }
      if (removed.empty()) continue;
      computation->RemoveInstructions(removed);
      changed = true;
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeConditionalSimplifierPass() {
  return std::make_unique<ConditionalSimplifierPass>();
}

}  // namespace seam
