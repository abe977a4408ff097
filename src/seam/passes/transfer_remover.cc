// transfer-remover: custom-calls that only move a value onto the device
// ("AwsNeuronTransferWithStaticRing", which PyTorch/XLA's Neuron backend
// wraps around every weight) -> their operand. On Seam's targets the value
// is already where kernels read it; left in place, each is an opaque
// custom-call that the runtime runs as a full copy (GPT-2's [768,50257]
// embedding: 154 MB per step) and that blocks every simplifier.
//
// MoveToHost and MoveToDevice are kept: they ask for host offloading, a
// memory-placement decision that is the user's, not an identity to drop.
// Kept too, as in sharding-remover: calls whose result shape differs from
// the operand's, calls with a side effect and calls with control edges.
#include "seam/passes/call_graph_util.h"
#include "seam/passes/pass.h"

namespace seam {
namespace {

bool IsDeviceTransfer(const Instruction& i) {
  if (i.opcode() != Opcode::kCustomCall || i.operand_count() != 1) return false;
  if (i.attrs().custom_call_target.value_or("") != "AwsNeuronTransferWithStaticRing") return false;
  return IsRemovableWhenDead(i) && !HasControlEdges(i) && i.shape().IsArray() &&
         InterchangeableShapes(i.operand(0)->shape(), i.shape());
}

class TransferRemoverPass : public Pass {
 public:
  absl::StatusOr<bool> Run(Module& module) override {
    return ReplaceByOperand(module, IsDeviceTransfer);
  }
};

}  // namespace

std::unique_ptr<Pass> MakeTransferRemoverPass() { return std::make_unique<TransferRemoverPass>(); }

}  // namespace seam
