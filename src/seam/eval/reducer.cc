#include "seam/eval/reducer.h"

#include "seam/util/status_macros.h"

namespace seam {

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
