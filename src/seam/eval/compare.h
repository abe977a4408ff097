// Comparing computed values with expected ones: exact for integers and pred,
// within a tolerance for floats (NaN matches NaN, infinities match exactly).
// Used by the conformance test, the pass-semantics tests and `seam run
// --verify`.
#pragma once

#include <cstdint>
#include <string>

#include "seam/ir/literal.h"

namespace seam {

// An element passes when |got - want| <= absolute * scale + relative * |want|,
// where scale is 1, or max(1, max |want| over the array) when
// absolute_scales_with_max is set (for sums whose terms cancel).
struct Tolerance {
  double absolute = 0;
  double relative = 0;
  bool absolute_scales_with_max = false;
};

// The tolerance for comparing an implementation with XLA: a few ulps of the
// type (f32 1e-5, bf16 1e-2...), exact for integers.
Tolerance ConformanceTolerance(DType type);
// The tolerance for comparing a module before and after graph passes that
// may reassociate float arithmetic (f32 1e-3, bf16 3e-2, scaled by the
// array's largest magnitude).
Tolerance RewriteTolerance(DType type);

// One array's comparison: how many elements failed and the worst one.
struct Mismatch {
  int64_t count = 0;
  int64_t worst_index = -1;
  double worst_error = 0;  // in units of the allowed error
  std::string worst_got, worst_want;
};

// Compares two arrays of the same shape elementwise.
Mismatch CompareArrays(const Literal& got, const Literal& want, const Tolerance& tolerance);

// Compares two values (arrays or tuples, recursively) with a tolerance picked
// per element type; returns "" when they match, else one line per differing
// array naming it by `what` and its tuple index path.
std::string DescribeDifferences(const Literal& got, const Literal& want,
                                Tolerance (*tolerance_for)(DType), const std::string& what);

}  // namespace seam
