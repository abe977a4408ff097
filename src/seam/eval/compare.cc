#include "seam/eval/compare.h"

#include <algorithm>
#include <cmath>
#include <complex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace seam {
namespace {

// How far `got` is from `want` in units of the allowed error: <= 1 passes.
double FloatError(double got, double want, double allowed) {
  if (std::isnan(want) || std::isnan(got)) {
    return std::isnan(want) && std::isnan(got) ? 0 : INFINITY;
  }
  if (std::isinf(want) || std::isinf(got)) return got == want ? 0 : INFINITY;
  double diff = std::abs(got - want);
  if (diff == 0) return 0;
  return allowed == 0 ? INFINITY : diff / allowed;
}

std::string FormatElement(const Literal& value, int64_t i) {
  DType type = value.shape().dtype();
  if (IsComplex(type)) {
    std::complex<double> c = value.GetComplex(i);
    return absl::StrFormat("(%.9g, %.9g)", c.real(), c.imag());
  }
  if (IsFloat(type)) return absl::StrFormat("%.9g", value.GetDouble(i));
  if (IsUnsigned(type) || IsPred(type)) return absl::StrCat(value.GetBits(i));
  return absl::StrCat(value.GetInt(i));
}

double MaxMagnitude(const Literal& value) {
  double max = 1;
  DType type = value.shape().dtype();
  for (int64_t i = 0; i < value.element_count(); ++i) {
    double m = IsComplex(type) ? std::abs(value.GetComplex(i)) : std::abs(value.GetDouble(i));
    if (std::isfinite(m)) max = std::max(max, m);
  }
  return max;
}

// The distance between `magnitude` and the next value of type t above it.
double UlpAt(DType t, double magnitude) {
  int mantissa_bits = t == DType::kF64 || t == DType::kC128 ? 52
                      : t == DType::kBF16                   ? 7
                      : t == DType::kF16                    ? 10
                                                            : 23;
  if (!(magnitude > 0) || !std::isfinite(magnitude)) return 0;
  return std::ldexp(1.0, std::ilogb(magnitude) - mantissa_bits);
}

struct VerifyBounds {
  double max_relative, rms_relative;
};

VerifyBounds VerifyBoundsOf(DType t) {
  switch (t) {
    case DType::kF64:
    case DType::kC128: return {1e-8, 1e-11};
    case DType::kBF16: return {1e-1, 2e-2};
    case DType::kF16: return {5e-2, 5e-3};
    default: return {1e-2, 1e-4};
  }
}

}  // namespace

ArrayError MeasureArrayError(const Literal& got, const Literal& want) {
  ArrayError e;
  const DType type = want.shape().dtype();
  const bool complex = IsComplex(type);
  auto magnitude = [&](const Literal& v, int64_t i) {
    return complex ? std::abs(v.GetComplex(i)) : std::abs(v.GetDouble(i));
  };
  auto finite = [&](const Literal& v, int64_t i) {
    if (!complex) return std::isfinite(v.GetDouble(i));
    std::complex<double> c = v.GetComplex(i);
    return std::isfinite(c.real()) && std::isfinite(c.imag());
  };
  double max_want = 0, squared_error = 0, squared_want = 0, worst = 0;
  for (int64_t i = 0; i < want.element_count(); ++i) {
    if (!finite(want, i) || !finite(got, i)) {
      double error = complex ? 0 : FloatError(got.GetDouble(i), want.GetDouble(i), 1);
      if (complex || error != 0) {
        if (e.nonfinite_mismatches++ == 0) e.first_nonfinite_mismatch = i;
      }
      continue;
    }
    double w = magnitude(want, i);
    double diff = complex ? std::abs(got.GetComplex(i) - want.GetComplex(i))
                          : std::abs(got.GetDouble(i) - want.GetDouble(i));
    max_want = std::max(max_want, w);
    squared_error += diff * diff;
    squared_want += w * w;
    if (diff > worst || e.worst_index < 0) {
      worst = diff;
      e.worst_index = i;
    }
  }
  const double scale = max_want > 0 ? max_want : 1;
  e.max_relative = worst / scale;
  const double ulp = UlpAt(type, max_want);
  e.max_ulps = ulp > 0 ? worst / ulp : (worst > 0 ? INFINITY : 0);
  e.rms_relative = squared_want > 0 ? std::sqrt(squared_error / squared_want) : std::sqrt(squared_error);
  if (e.worst_index >= 0) {
    e.worst_got = FormatElement(got, e.worst_index);
    e.worst_want = FormatElement(want, e.worst_index);
  }
  return e;
}

bool WithinSensitivity(const ArrayError& error, const ArrayError& sensitivity, DType type) {
  const VerifyBounds bounds = VerifyBoundsOf(type);
  if (error.nonfinite_mismatches > 0 || sensitivity.nonfinite_mismatches > 0) return false;
  if (sensitivity.rms_relative >= 1) return true;  // no significant digit
  return error.max_relative <=
             std::max(bounds.max_relative, kSensitivityFactor * sensitivity.max_relative) &&
         error.rms_relative <=
             std::max(bounds.rms_relative, kSensitivityFactor * sensitivity.rms_relative);
}

std::string FormatArrayError(const ArrayError& e) {
  return absl::StrFormat("worst element off by %.3g of the largest magnitude (%.3g ulp there), "
                         "rms error %.3g relative",
                         e.max_relative, e.max_ulps, e.rms_relative);
}

std::string DescribeVerifyDifferences(const Literal& got, const Literal& want,
                                      const std::string& what) {
  if (got.shape().IsTuple() && want.shape().IsTuple() &&
      got.tuple_elements().size() == want.tuple_elements().size()) {
    std::string out;
    for (size_t i = 0; i < want.tuple_elements().size(); ++i) {
      out += DescribeVerifyDifferences(got.tuple_elements()[i], want.tuple_elements()[i],
                                       absl::StrCat(what, "{", i, "}"));
    }
    return out;
  }
  const DType type = want.shape().dtype();
  if (got.shape().IsTuple() || want.shape().IsTuple() || got.shape().IsToken() ||
      got.shape().dtype() != type || got.shape().dims() != want.shape().dims() ||
      (!IsFloat(type) && !IsComplex(type))) {
    return DescribeDifferences(got, want, &ConformanceTolerance, what);  // structure; exact integers
  }
  ArrayError e = MeasureArrayError(got, want);
  const VerifyBounds bounds = VerifyBoundsOf(type);
  const std::string where = absl::StrCat(what, " ", want.shape().ToString(false), ": ");
  if (e.nonfinite_mismatches > 0) {
    return absl::StrCat(where, e.nonfinite_mismatches,
                        " element(s) are NaN or infinite on one side only; first at ",
                        e.first_nonfinite_mismatch, ": got ", FormatElement(got, e.first_nonfinite_mismatch),
                        ", expected ", FormatElement(want, e.first_nonfinite_mismatch), "\n");
  }
  if (e.max_relative <= bounds.max_relative && e.rms_relative <= bounds.rms_relative) return "";
  return absl::StrCat(where, FormatArrayError(e), absl::StrFormat(" (bounds %.3g and %.3g)",
                                                                    bounds.max_relative, bounds.rms_relative),
                      "; worst at ", e.worst_index, ": got ", e.worst_got, ", expected ", e.worst_want,
                      "\n");
}

Tolerance ConformanceTolerance(DType type) {
  switch (type) {
    case DType::kF32:
    case DType::kC64: return {1e-5, 1e-5};
    case DType::kF64:
    case DType::kC128: return {1e-12, 1e-12};
    case DType::kBF16: return {1e-3, 1e-2};
    case DType::kF16: return {1e-4, 1e-3};
    default: return {0, 0};
  }
}

Tolerance RewriteTolerance(DType type) {
  switch (type) {
    case DType::kF32:
    case DType::kC64: return {1e-4, 1e-3, true};
    case DType::kF64:
    case DType::kC128: return {1e-10, 1e-10, true};
    case DType::kBF16: return {1e-2, 3e-2, true};
    case DType::kF16: return {1e-3, 1e-2, true};
    default: return {0, 0};
  }
}

Mismatch CompareArrays(const Literal& got, const Literal& want, const Tolerance& tolerance) {
  Mismatch mismatch;
  DType type = want.shape().dtype();
  bool is_float = IsFloat(type) || IsComplex(type);
  double scale = is_float && tolerance.absolute_scales_with_max ? MaxMagnitude(want) : 1;
  for (int64_t i = 0; i < want.element_count(); ++i) {
    double error;
    if (IsComplex(type)) {
      std::complex<double> g = got.GetComplex(i), w = want.GetComplex(i);
      double allowed = tolerance.absolute * scale + tolerance.relative * std::abs(w);
      error = std::max(FloatError(g.real(), w.real(), allowed),
                       FloatError(g.imag(), w.imag(), allowed));
    } else if (is_float) {
      double w = want.GetDouble(i);
      error = FloatError(got.GetDouble(i), w,
                         tolerance.absolute * scale + tolerance.relative * std::abs(w));
    } else {
      error = got.GetBits(i) == want.GetBits(i) ? 0 : INFINITY;
    }
    if (error <= 1) continue;
    ++mismatch.count;
    if (mismatch.worst_index < 0 || error > mismatch.worst_error) {
      mismatch.worst_index = i;
      mismatch.worst_error = error;
      mismatch.worst_got = FormatElement(got, i);
      mismatch.worst_want = FormatElement(want, i);
    }
  }
  return mismatch;
}

std::string DescribeDifferences(const Literal& got, const Literal& want,
                                Tolerance (*tolerance_for)(DType), const std::string& what) {
  if (got.shape().IsTuple() || want.shape().IsTuple()) {
    if (got.tuple_elements().size() != want.tuple_elements().size()) {
      return absl::StrCat(what, ": got a tuple of ", got.tuple_elements().size(),
                          " elements, expected ", want.tuple_elements().size(), "\n");
    }
    std::string out;
    for (size_t i = 0; i < want.tuple_elements().size(); ++i) {
      out += DescribeDifferences(got.tuple_elements()[i], want.tuple_elements()[i], tolerance_for,
                                 absl::StrCat(what, "{", i, "}"));
    }
    return out;
  }
  if (got.shape().dtype() != want.shape().dtype() || got.shape().dims() != want.shape().dims()) {
    return absl::StrCat(what, ": got ", got.shape().ToString(false), ", expected ",
                        want.shape().ToString(false), "\n");
  }
  if (got.shape().IsToken()) return "";
  Mismatch m = CompareArrays(got, want, tolerance_for(want.shape().dtype()));
  if (m.count == 0) return "";
  return absl::StrCat(what, " ", want.shape().ToString(false), ": ", m.count, " of ",
                      want.element_count(), " elements differ; worst at ", m.worst_index, ": got ",
                      m.worst_got, ", expected ", m.worst_want,
                      absl::StrFormat(" (%.3g x tolerance)\n", m.worst_error));
}

}  // namespace seam
