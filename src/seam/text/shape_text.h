// Parsing of HLO shapes: `f32[2,<=3]{1,0:T(8,128)}`, `token[]`, `(s32[], f32[4])`.
// Printing is Shape::ToString.
#pragma once

#include "absl/status/statusor.h"
#include "seam/ir/shape.h"
#include "seam/text/scanner.h"

namespace seam {

absl::StatusOr<Shape> ParseShape(Scanner& scanner);
// Whether a shape starts at the cursor (after trivia): `(` or an element
// type name followed directly by `[`.
bool ShapeStartsHere(Scanner& scanner);

}  // namespace seam
