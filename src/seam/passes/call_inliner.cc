// call-inliner: replaces every `call` by a copy of its computation's body,
// parameters standing for the call's operands. Front ends (JAX's jit of
// jit, pjit, custom_jvp) wrap much of a model in calls; the other passes and
// the fusion planner work within one computation, so they only see across
// those boundaries once the calls are gone.
//
// Fusion instructions are left alone: their computations are the result of
// a fusion decision (a kernel boundary chosen on purpose), not a call the
// front end happened to emit; undoing them is not inlining. Async
// computations, while bodies and conditional branches are not calls either
// (see while-loop-simplifier and conditional-simplifier).
#include "seam/passes/call_graph_util.h"
#include "seam/passes/pass.h"

namespace seam {
namespace {

class CallInlinerPass : public Pass {
 public:
  absl::StatusOr<bool> Run(Module& module) override {
    if (!ContainsOpcode(module, Opcode::kCall)) return false;
    // Callees first, so a body is inlined already free of calls and one run
    // reaches the fixpoint.
    absl::StatusOr<std::vector<Computation*>> order = module.MakeComputationPostOrder();
    if (!order.ok()) return order.status();
    NameUniquer names(module);
    bool changed = false;
    for (Computation* computation : *order) {
      absl::flat_hash_set<Instruction*> inlined;
      // Each call is inlined on its own: order within a computation does
      // not matter, and inlining adds no calls.
      for (Instruction* i : InstructionsWithOpcode(*computation, Opcode::kCall)) {
        if (!i->attrs().to_apply.has_value()) continue;
        const Computation* callee = *i->attrs().to_apply;
        if (callee == nullptr || callee == computation) continue;
        ReplaceWithInlinedComputation(i, *callee, i->operands(), names);
        inlined.insert(i);
      }
      if (inlined.empty()) continue;
      computation->RemoveInstructions(inlined);
      changed = true;
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeCallInlinerPass() { return std::make_unique<CallInlinerPass>(); }

}  // namespace seam
