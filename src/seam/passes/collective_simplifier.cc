// collective-simplifier: collectives with one participant, as Seam runs
// them (one replica of one partition; see eval/control_flow.cc):
//   all-reduce, all-gather, reduce-scatter, all-to-all,
//   collective-broadcast                      -> the operand (a tuple of the
//                                                operands when variadic)
//   collective-permute with the pair {0,0}    -> the operand
//   collective-permute without it             -> zeros (nothing is received)
//   replica-id, partition-id                  -> u32 constant 0
// XLA does this in all-reduce-simplifier, all-gather-simplifier and friends
// when the replica groups are trivial. Left in place, collectives are opaque
// to every simplifier and split fusions for no work.
//
// Only when the result has the operand's shape (an all-gather of a real
// multi-device split grows its dimension: not an identity here). Async
// forms (-start/-done) and instructions with control edges are kept.
#include "absl/algorithm/container.h"
#include "absl/strings/match.h"
#include "seam/passes/call_graph_util.h"
#include "seam/passes/pass.h"

namespace seam {
namespace {

// The single-participant value of `i`, built with `builder`, or null.
Instruction* Simplified(Instruction* i, HloBuilder& builder) {
  switch (i->opcode()) {
    case Opcode::kReplicaId:
    case Opcode::kPartitionId: {
      if (!InterchangeableShapes(i->shape(), Shape::Scalar(DType::kU32))) return nullptr;
      return builder.ScalarConstant(DType::kU32, 0);
    }
    case Opcode::kAllReduce:
    case Opcode::kAllGather:
    case Opcode::kReduceScatter:
    case Opcode::kAllToAll:
    case Opcode::kCollectiveBroadcast: {
      if (i->operand_count() == 1) {
        Instruction* x = i->operand(0);
        return InterchangeableShapes(x->shape(), i->shape()) ? x : nullptr;
      }
      if (i->operand_count() == 0 || !i->shape().IsTuple() ||
          i->shape().tuple_shapes().size() != i->operands().size()) {
        return nullptr;
      }
      for (int k = 0; k < i->operand_count(); ++k) {
        if (!InterchangeableShapes(i->operand(k)->shape(), i->shape().tuple_shapes()[k])) {
          return nullptr;
        }
      }
      return builder.Tuple(i->operands());
    }
    case Opcode::kCollectivePermute: {
      if (i->operand_count() != 1 || !i->shape().IsArray()) return nullptr;
      Instruction* x = i->operand(0);
      if (!InterchangeableShapes(x->shape(), i->shape())) return nullptr;
      // The interpreter's rule, character for character.
      const VerbatimAttribute* pairs = i->attrs().FindVerbatim("source_target_pairs");
      if (pairs != nullptr && absl::StrContains(pairs->value, "{0,0}")) return x;
      if (DTypeKindOf(i->shape().dtype()) == DTypeKind::kOpaque) return nullptr;
      Instruction* zero = builder.Constant(Literal(Shape::Scalar(i->shape().dtype())));
      if (i->shape().rank() == 0) return zero;
      Instruction* zeros = builder.Broadcast(zero, i->shape().dims(), {});
      zeros->mutable_shape() = i->shape();
      return zeros;
    }
    default:
      return nullptr;
  }
}

const std::vector<Opcode>& SingleDeviceCollectives() {
  static const auto* ops = new std::vector<Opcode>{
      Opcode::kReplicaId,           Opcode::kPartitionId,      Opcode::kAllReduce,
      Opcode::kAllGather,           Opcode::kReduceScatter,    Opcode::kAllToAll,
      Opcode::kCollectiveBroadcast, Opcode::kCollectivePermute};
  return *ops;
}

bool IsSingleDeviceCollective(Opcode opcode) {
  return absl::c_linear_search(SingleDeviceCollectives(), opcode);
}

class CollectiveSimplifierPass : public ComputationPass {
  std::vector<Opcode> Triggers() const override { return SingleDeviceCollectives(); }
  void Prepare(Module& module) override { names_.emplace(module); }
  absl::StatusOr<bool> RunOnComputation(Computation& computation) override {
    std::vector<Instruction*> candidates;
    for (const auto& i : computation.instructions()) {
      if (IsSingleDeviceCollective(i->opcode()) && !HasControlEdges(*i) &&
          IsRemovableWhenDead(*i)) {
        candidates.push_back(i.get());
      }
    }
    HloBuilder builder(computation, *names_);
    return ReplaceEach(computation, candidates,
                       [&](Instruction* i) { return Simplified(i, builder); });
  }

  std::optional<NameUniquer> names_;
};

}  // namespace

std::unique_ptr<Pass> MakeCollectiveSimplifierPass() {
  return std::make_unique<CollectiveSimplifierPass>();
}

}  // namespace seam
