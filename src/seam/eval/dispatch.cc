// Which family evaluates which opcode.
#include "absl/strings/str_cat.h"
#include "seam/eval/ops.h"

namespace seam {

bool IsInterpretable(Opcode opcode) {
  switch (opcode) {
    // No reference semantics yet: fail before running, naming the op.
    case Opcode::kFft:
    case Opcode::kTriangularSolve:
    case Opcode::kCholesky:
    case Opcode::kRaggedDot:
    case Opcode::kRaggedAllToAll:
    case Opcode::kDynamicReshape:
    case Opcode::kSetDimensionSize:
    case Opcode::kStochasticConvert:
    case Opcode::kRngGetAndUpdateState:
    case Opcode::kInfeed:
    case Opcode::kOutfeed:
    case Opcode::kSend:
    case Opcode::kSendDone:
    case Opcode::kRecv:
    case Opcode::kRecvDone:
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
    case Opcode::kCopyStart:
    case Opcode::kCopyDone:
    case Opcode::kAllGatherStart:
    case Opcode::kAllGatherDone:
    case Opcode::kAllReduceStart:
    case Opcode::kAllReduceDone:
    case Opcode::kCollectivePermuteStart:
    case Opcode::kCollectivePermuteDone:
      return false;
    default:
      return true;
  }
}

absl::StatusOr<Literal> EvalInstruction(const Instruction& instruction,
                                        OperandValues operands, Evaluator& evaluator) {
  switch (instruction.opcode()) {
    case Opcode::kGather:
    case Opcode::kScatter:
      return EvalGatherScatter(instruction, operands, evaluator);
    case Opcode::kDot:
      return EvalDot(instruction, operands);
    case Opcode::kConvolution:
      return EvalConvolution(instruction, operands);
    case Opcode::kSort:
      return EvalSort(instruction, operands, evaluator);
    case Opcode::kTopK:
      return EvalTopK(instruction, operands);
    case Opcode::kBatchNormTraining:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormGrad:
      return EvalBatchNorm(instruction, operands);
    case Opcode::kRng:
    case Opcode::kRngBitGenerator:
      return EvalRng(instruction, operands);
    case Opcode::kCustomCall:
      return EvalCustomCall(instruction, operands);
    default:
      break;
  }
  switch (OpcodeCategory(instruction.opcode())) {
    case OpCategory::kElementwise:
      return EvalElementwise(instruction, operands, evaluator);
    case OpCategory::kDataMovement:
      return EvalDataMovement(instruction, operands);
    case OpCategory::kReduction:
      return EvalReduction(instruction, operands, evaluator);
    case OpCategory::kControl:
    case OpCategory::kCollective:
      return EvalControlFlow(instruction, operands, evaluator);
    default:
      return absl::UnimplementedError(
          absl::StrCat("the interpreter does not support '", OpcodeName(instruction.opcode()),
                       "'"));
  }
}

}  // namespace seam
