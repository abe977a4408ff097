// sharding-remover: custom-calls to "Sharding", "SPMDFullToShardShape" and
// "SPMDShardToFullShape" -> their operand, as XLA's ShardingRemover does.
// They annotate how a value is split across devices; on one device they are
// identities (the interpreter runs them as such), and left in place they
// are opaque custom-calls that block every simplifier and split fusions.
//
// Kept: calls whose result shape differs from the operand's (a shard shape
// of a real multi-device split, which is a reshape at best), calls marked
// with a side effect, and calls with control edges.
#include "seam/passes/call_graph_util.h"
#include "seam/passes/pass.h"

namespace seam {
namespace {

bool IsShardingAnnotation(const Instruction& i) {
  if (i.opcode() != Opcode::kCustomCall || i.operand_count() != 1) return false;
  const std::string target = i.attrs().custom_call_target.value_or("");
  if (target != "Sharding" && target != "SPMDFullToShardShape" &&
      target != "SPMDShardToFullShape") {
    return false;
  }
  return IsRemovableWhenDead(i) && !HasControlEdges(i) && i.shape().IsArray() &&
         InterchangeableShapes(i.operand(0)->shape(), i.shape());
}

class ShardingRemoverPass : public Pass {
 public:
  absl::StatusOr<bool> Run(Module& module) override {
    return ReplaceByOperand(module, IsShardingAnnotation);
  }
};

}  // namespace

std::unique_ptr<Pass> MakeShardingRemoverPass() { return std::make_unique<ShardingRemoverPass>(); }

}  // namespace seam
