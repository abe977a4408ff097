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

// How far a whole array is from the expected one, in terms that hold up
// on deep networks, where rounding differences grow layer by layer: the
// worst element's error relative to the array's largest magnitude (and in
// ulps of the type at that magnitude), and the root-mean-square error
// relative to the root-mean-square magnitude. Non-finite elements are
// compared apart: a NaN or infinity on one side only is a mismatch.
struct ArrayError {
  double max_relative = 0;  // max |got - want| / max |want|
  double max_ulps = 0;      // max |got - want| / ulp(max |want|)
  double rms_relative = 0;  // rms(got - want) / rms(want)
  int64_t worst_index = -1;
  int64_t nonfinite_mismatches = 0;
  int64_t first_nonfinite_mismatch = -1;
  std::string worst_got, worst_want;
};
ArrayError MeasureArrayError(const Literal& got, const Literal& want);

// `seam run --verify`'s judgement of one array: integers and pred exact;
// floats within bounds on ArrayError per type (f32: worst element within
// 1% of the largest magnitude, rms within 1e-4; bf16 10% and 2e-2; f16 5%
// and 5e-3; f64 1e-8 and 1e-11), non-finite elements alike. A miscompiled
// element is off by a good part of the array's scale, a miscompiled array
// by far more than rounding: either fails; a deep net's rounding does not.
// Returns "" when they agree (tuples element by element), else one line
// per differing array naming `what` and its tuple index path.
std::string DescribeVerifyDifferences(const Literal& got, const Literal& want,
                                      const std::string& what);
// `seam run --verify`'s second look at a float array over its bounds. Some
// outputs of deep networks move by percents under any rounding-sized
// change: a gradient through relu masks that flip, a sum that cancels.
// `sensitivity` is how far the oracle's own result moved when its inputs
// and every rounded result moved by one ulp (Evaluator::set_rounding_nudge);
// the array passes when, on both measures, its error is within its bound
// or within kSensitivityFactor times that move. A compiled run rounds
// otherwise by more than an ulp here and there (sums in another order,
// expanded batch norms), hence the factor. An output that moved by as much
// as its own rms magnitude has no significant digit in its type: any value
// of it is as right as the oracle's (MobileNetV2's early batch-norm
// gradients on random weights move by 3-6x their largest magnitude). An
// output that rounding does not move has a sensitivity of a few ulps and
// gets no slack; a miscompile is off by orders of magnitude more.
inline constexpr double kSensitivityFactor = 8;
bool WithinSensitivity(const ArrayError& error, const ArrayError& sensitivity, DType type);
// ArrayError as `what`: its worst error relative to the largest magnitude
// and in ulps, and its relative rms error.
std::string FormatArrayError(const ArrayError& error);

}  // namespace seam
