// Which family evaluates which opcode.
#include "absl/strings/str_cat.h"
#include "seam/eval/ops.h"

namespace seam {

absl::string_view NotInterpretedBecause(Opcode opcode) {
  switch (opcode) {
    case Opcode::kFft:
    case Opcode::kTriangularSolve:
    case Opcode::kCholesky:
      return "a linear-algebra library op with no reference implementation yet";
    case Opcode::kRaggedDot:
    case Opcode::kRaggedAllToAll:
      return "a ragged op with no reference implementation yet";
    case Opcode::kDynamicReshape:
    case Opcode::kSetDimensionSize:
      return "it makes dimensions dynamic, and Seam runs static shapes";
    case Opcode::kStochasticConvert:
      return "its rounding follows random bits whose use XLA does not specify";
    case Opcode::kRngGetAndUpdateState:
      return "it reads XLA's runtime RNG state, which lowered modules no longer use";
    case Opcode::kInfeed:
    case Opcode::kOutfeed:
    case Opcode::kSend:
    case Opcode::kSendDone:
    case Opcode::kRecv:
    case Opcode::kRecvDone:
      return "it exchanges data with a host or device runtime that is not there";
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
      return "it is an asynchronous form XLA's scheduler makes, and Seam reads modules "
             "before scheduling";
    default:
      return "";
  }
}

bool IsInterpretable(Opcode opcode) { return NotInterpretedBecause(opcode).empty(); }

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
