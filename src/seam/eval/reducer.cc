#include "seam/eval/reducer.h"

#include "seam/util/status_macros.h"

namespace seam {

std::optional<Opcode> SimpleBinaryOp(const Computation& computation) {
  const Instruction* root = computation.root();
  if (computation.parameter_count() != 2 || root->operand_count() != 2 ||
      !root->shape().IsArray() || root->shape().rank() != 0) {
    return std::nullopt;
  }
  switch (root->opcode()) {
    case Opcode::kAdd:
    case Opcode::kMultiply:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
    case Opcode::kAnd:
    case Opcode::kOr:
      break;
    default:
      return std::nullopt;
  }
  const Instruction* a = root->operand(0);
  const Instruction* b = root->operand(1);
  bool uses_both_params = a->opcode() == Opcode::kParameter &&
                          b->opcode() == Opcode::kParameter && a != b;
  if (!uses_both_params) return std::nullopt;
  // Parameters must have the root's type: no hidden conversions.
  if (a->shape().dtype() != root->shape().dtype() || b->shape().dtype() != root->shape().dtype()) {
    return std::nullopt;
  }
  return root->opcode();
}

ScalarCaller::ScalarCaller(const Computation& computation, Evaluator& evaluator,
                           const std::vector<DType>& accumulator_types)
    : computation_(computation), evaluator_(evaluator) {
  for (DType t : accumulator_types) {
    accumulators_.emplace_back(Shape::Scalar(t));
    values_.emplace_back(Shape::Scalar(t));
  }
}

absl::StatusOr<Literal> ScalarCaller::Evaluate() {
  std::vector<const Literal*> arguments;
  for (const Literal& a : accumulators_) arguments.push_back(&a);
  for (const Literal& v : values_) arguments.push_back(&v);
  return evaluator_.Call(computation_, arguments);
}

absl::Status ScalarCaller::Apply() {
  SEAM_ASSIGN_OR_RETURN(Literal result, Evaluate());
  if (result.shape().IsTuple()) {
    for (size_t i = 0; i < accumulators_.size(); ++i) {
      accumulators_[i] = std::move(result.mutable_tuple_elements()[i]);
    }
  } else {
    accumulators_[0] = std::move(result);
  }
  return absl::OkStatus();
}

}  // namespace seam
