// optimization-barrier-expander: opt-barrier(x) -> x. A barrier only stops
// the compiler from moving computation across it (rematerialisation,
// scheduling); it computes the identity, so on Seam's single-device
// reference semantics removing it changes no value. Removing it lets the
// simplifiers and the fusion planner see through values a front end fenced
// off for memory scheduling, as XLA's OptimizationBarrierExpander does
// before its own scheduling-insensitive passes.
//
// A barrier with control edges is kept: the edges would have to move onto
// an earlier value, which could close a cycle.
#include "seam/passes/call_graph_util.h"
#include "seam/passes/pass.h"

namespace seam {
namespace {

class OptimizationBarrierExpanderPass : public ComputationPass {
  std::vector<Opcode> Triggers() const override { return {Opcode::kOptimizationBarrier}; }
  absl::StatusOr<bool> RunOnComputation(Computation& computation) override {
    std::vector<Instruction*> barriers;
    for (const auto& i : computation.instructions()) {
      if (i->opcode() == Opcode::kOptimizationBarrier && i->operand_count() == 1 &&
          !HasControlEdges(*i) && InterchangeableShapes(i->operand(0)->shape(), i->shape())) {
        barriers.push_back(i.get());
      }
    }
    return ReplaceEach(computation, barriers, [](Instruction* i) { return i->operand(0); });
  }
};

}  // namespace

std::unique_ptr<Pass> MakeOptimizationBarrierExpanderPass() {
  return std::make_unique<OptimizationBarrierExpanderPass>();
}

}  // namespace seam
