// Parsing and printing of constant literals: `0`, `-inf`, `{1, 2}`,
// `{ {1, 2}, {3, 4} }`, `{...}` (elided), `(1, 2)` (complex or tuple).
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "seam/ir/literal.h"
#include "seam/text/scanner.h"

namespace seam {

// Parses the value inside `constant(...)` for a constant of `shape`; the
// cursor ends before the closing `)`.
absl::StatusOr<Literal> ParseLiteral(Scanner& scanner, const Shape& shape);
// The text between the parentheses of `constant(...)`. Floats print in the
// shortest form that reads back to the same value of their type.
std::string PrintLiteral(const Literal& literal);

}  // namespace seam
