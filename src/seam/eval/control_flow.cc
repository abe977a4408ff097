// Constants, tuples, calls and control flow, and the single-participant
// meaning of collectives: Seam's interpreter runs one replica of one
// partition, so all-reduce, all-gather, reduce-scatter, all-to-all and
// collective-broadcast return their operand, and collective-permute returns
// its operand if the pair 0->0 is listed and zeros otherwise.
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "seam/eval/ops.h"
#include "seam/eval/random_fill.h"
#include "seam/ir/computation.h"
#include "seam/util/status_macros.h"

namespace seam {
namespace {

Literal TupleOf(const Shape& shape, OperandValues operands) {
  std::vector<Literal> elements;
  for (const Literal* operand : operands) elements.push_back(*operand);
  return Literal::Tuple(shape, std::move(elements));
}

// A constant whose values the text elided (`{...}`) reads as deterministic
// pseudo-random data seeded by the constant's name, or by the name of the
// constant it was copied from (see random_fill.h).
Literal ConstantValue(const Instruction& instruction) {
  const Literal& literal = *instruction.literal();
  if (!literal.is_elided()) return literal;
  return ElidedConstantData(instruction);
}

absl::StatusOr<Literal> EvalWhile(const Instruction& instruction, OperandValues operands,
                                  Evaluator& evaluator) {
  const Computation& condition = **instruction.attrs().condition;
  const Computation& body = **instruction.attrs().body;
  Literal state = *operands[0];
  while (true) {
    const Literal* argument = &state;
    SEAM_ASSIGN_OR_RETURN(Literal keep_going, evaluator.Call(condition, {&argument, 1}));
    if (!keep_going.GetBits(0)) return state;
    SEAM_ASSIGN_OR_RETURN(state, evaluator.Call(body, {&argument, 1}));
  }
}

absl::StatusOr<Literal> EvalConditional(const Instruction& instruction,
                                        OperandValues operands, Evaluator& evaluator) {
  const Attributes& attrs = instruction.attrs();
  std::vector<Computation*> branches =
      attrs.branch_computations.has_value()
          ? *attrs.branch_computations
          : std::vector<Computation*>{*attrs.true_computation, *attrs.false_computation};
  const Literal& selector = *operands[0];
  int64_t n = static_cast<int64_t>(branches.size());
  // pred: true runs branch 0. s32: out-of-range indices run the last branch.
  int64_t index = selector.shape().dtype() == DType::kPred ? (selector.GetBits(0) ? 0 : 1)
                                                           : selector.GetInt(0);
  if (index < 0 || index >= n) index = n - 1;
  if (1 + index >= static_cast<int64_t>(operands.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("conditional has no operand for branch ", index));
  }
  return evaluator.Call(*branches[index], operands.subspan(1 + index, 1));
}

absl::StatusOr<Literal> EvalCollective(const Instruction& instruction,
                                       OperandValues operands) {
  if (instruction.opcode() == Opcode::kCollectivePermute) {
    const VerbatimAttribute* pairs = instruction.attrs().FindVerbatim("source_target_pairs");
    bool to_self = pairs != nullptr && absl::StrContains(pairs->value, "{0,0}");
    return to_self ? *operands[0] : Literal(instruction.shape());
  }
  switch (instruction.opcode()) {
    case Opcode::kAllReduce:
    case Opcode::kAllGather:
    case Opcode::kReduceScatter:
    case Opcode::kAllToAll:
    case Opcode::kCollectiveBroadcast: {
      // On one device each keeps its operands; a result of another shape
      // gathers or scatters across a group of several.
      std::vector<Shape> kept;
      for (const Literal* operand : operands) kept.push_back(operand->shape());
      const Shape same = kept.size() == 1 ? kept[0] : Shape::Tuple(kept);
      if (!same.Compatible(instruction.shape())) {
        return absl::UnimplementedError(absl::StrCat(
            "'", OpcodeName(instruction.opcode()), "' to ", instruction.shape().ToString(false),
            " from ", same.ToString(false), " spans several devices; the interpreter runs one"));
      }
      return operands.size() == 1 ? *operands[0] : TupleOf(instruction.shape(), operands);
    }
    default:
      return absl::UnimplementedError(absl::StrCat(
          "the interpreter does not support '", OpcodeName(instruction.opcode()), "'"));
  }
}

}  // namespace

absl::StatusOr<Literal> EvalControlFlow(const Instruction& instruction,
                                        OperandValues operands, Evaluator& evaluator) {
  switch (instruction.opcode()) {
    case Opcode::kConstant:
      return ConstantValue(instruction);
    case Opcode::kTuple:
      return TupleOf(instruction.shape(), operands);
    case Opcode::kGetTupleElement:
      return operands[0]->tuple_elements()[*instruction.attrs().index];
    case Opcode::kCall:
      return evaluator.Call(**instruction.attrs().to_apply, operands);
    case Opcode::kFusion:
      return evaluator.Call(**instruction.attrs().calls, operands);
    case Opcode::kWhile:
      return EvalWhile(instruction, operands, evaluator);
    case Opcode::kConditional:
      return EvalConditional(instruction, operands, evaluator);
    case Opcode::kOptimizationBarrier:
    case Opcode::kAddDependency:
    case Opcode::kDomain:
      return *operands[0];
    case Opcode::kAfterAll:
      return Literal(Shape::Token());
    case Opcode::kPartitionId:
    case Opcode::kReplicaId:
      return Literal(instruction.shape());  // u32[] 0: one partition, one replica
    case Opcode::kGetDimensionSize: {
      Literal size(instruction.shape());
      size.SetBits(0, static_cast<uint64_t>(
                          operands[0]->shape().dim(static_cast<int>(
                              instruction.attrs().dimensions.value_or(IntList{0})[0]))));
      return size;
    }
    default:
      return EvalCollective(instruction, operands);
  }
}

}  // namespace seam
