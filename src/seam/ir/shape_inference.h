// Shape inference for HLO instructions, after XLA's operation semantics
// (https://openxla.org/xla/operation_semantics). The verifier compares every
// instruction's declared shape with what its operands and attributes imply.
#pragma once

#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "seam/ir/instruction.h"
#include "seam/ir/shape.h"

namespace seam {

// Checks the operand count of `instruction`: the opcode table's arity, or the
// op's own rule when it is variadic (reduce takes N inputs then N inits,
// dynamic-slice one index per operand dimension...). Operands must be non-null.
absl::Status CheckOperandCount(const Instruction& instruction);

// The result shape `instruction`'s opcode gives its operands and attributes
// (and the computations it calls, e.g. reduce's to_apply). Where the operands
// do not determine the result (broadcast's output dims, convert's type...),
// the declared shape supplies the free part and only the constraints are
// checked. Returns std::nullopt for opcodes Seam does not infer (custom-call,
// collectives, sort, fft, async ops...), and InvalidArgument, without
// instruction name or location, saying what was expected otherwise, e.g.
// "operands of 'add' must have the same dimensions, got f32[2,3] and f32[3]".
// Checks CheckOperandCount first.
absl::StatusOr<std::optional<Shape>> InferShape(const Instruction& instruction);

// Whether two shapes agree ignoring layouts and dynamism flags (bounds are
// compared); an unbounded dimension (`?`) agrees with any size.
bool ShapesMatch(const Shape& a, const Shape& b);

}  // namespace seam
