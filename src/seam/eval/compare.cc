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

}  // namespace

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
