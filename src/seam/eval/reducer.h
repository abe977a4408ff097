// Scalar computations passed to reduce, reduce-window, scatter and
// select-and-scatter. The common ones (`ROOT r = add(p0, p1)`) are recognised
// so the hot loops run natively; any other runs through the interpreter.
#pragma once

#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "seam/eval/element_traits.h"
#include "seam/eval/evaluator.h"
#include "seam/eval/scalar_ops.h"
#include "seam/ir/computation.h"

namespace seam {

// Applies a combiner to compute-type values; the caller checked that `op`
// came from AsBinaryReducer.
template <typename C>
C ApplyBinary(Opcode op, C a, C b) {
  if constexpr (std::is_same_v<C, bool>) {
    return (op == Opcode::kAdd || op == Opcode::kOr || op == Opcode::kMaximum) ? (a || b)
                                                                              : (a && b);
  } else if constexpr (std::is_floating_point_v<C>) {
    switch (op) {
      case Opcode::kAdd: return a + b;
      case Opcode::kMultiply: return a * b;
      case Opcode::kMaximum: return scalar::FloatMax(a, b);
      default: return scalar::FloatMin(a, b);
    }
  } else if constexpr (std::is_integral_v<C>) {
    switch (op) {
      case Opcode::kAdd: return scalar::WrapAdd(a, b);
      case Opcode::kMultiply: return scalar::WrapMul(a, b);
      case Opcode::kMaximum: return a > b ? a : b;
      case Opcode::kMinimum: return a < b ? a : b;
      case Opcode::kAnd: return static_cast<C>(a & b);
      default: return static_cast<C>(a | b);
    }
  } else {  // complex
    return op == Opcode::kMultiply ? a * b : a + b;
  }
}

// Runs a scalar computation on N accumulators and N values through the
// interpreter: the general path for variadic or unusual reducers.
class ScalarCaller {
 public:
  ScalarCaller(const Computation& computation, Evaluator& evaluator,
               const std::vector<DType>& accumulator_types);
  // Arguments are (accumulators..., values...); results replace accumulators.
  std::vector<Literal>& accumulators() { return accumulators_; }
  std::vector<Literal>& values() { return values_; }
  absl::Status Apply();
  // Runs the computation and returns its result, leaving the accumulators as
  // they were: for comparators such as select-and-scatter's `select`, whose
  // pred result differs in type from its arguments.
  absl::StatusOr<Literal> Evaluate();

 private:
  const Computation& computation_;
  Evaluator& evaluator_;
  std::vector<Literal> accumulators_;
  std::vector<Literal> values_;
};

}  // namespace seam
