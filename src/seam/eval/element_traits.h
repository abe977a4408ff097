// How each element type is stored in a Literal and computed with: bf16 and
// f16 are stored as their 16 bits and computed in f32, rounding the result of
// every op back to nearest even, as XLA's CPU backend does.
#pragma once

#include <complex>
#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "seam/ir/dtype.h"
#include "seam/ir/float16.h"

namespace seam {

struct BF16Bits {
  uint16_t bits;
};
struct F16Bits {
  uint16_t bits;
};

template <DType D, typename S, typename C = S>
struct PlainTraits {
  static constexpr DType kDType = D;
  using Storage = S;
  using Compute = C;
  static Compute Load(Storage s) { return static_cast<Compute>(s); }
  static Storage Store(Compute c) { return static_cast<Storage>(c); }
};

template <DType D>
struct ElementTraits;
template <> struct ElementTraits<DType::kPred> : PlainTraits<DType::kPred, bool> {};
template <> struct ElementTraits<DType::kS8> : PlainTraits<DType::kS8, int8_t> {};
template <> struct ElementTraits<DType::kS16> : PlainTraits<DType::kS16, int16_t> {};
template <> struct ElementTraits<DType::kS32> : PlainTraits<DType::kS32, int32_t> {};
template <> struct ElementTraits<DType::kS64> : PlainTraits<DType::kS64, int64_t> {};
template <> struct ElementTraits<DType::kU8> : PlainTraits<DType::kU8, uint8_t> {};
template <> struct ElementTraits<DType::kU16> : PlainTraits<DType::kU16, uint16_t> {};
template <> struct ElementTraits<DType::kU32> : PlainTraits<DType::kU32, uint32_t> {};
template <> struct ElementTraits<DType::kU64> : PlainTraits<DType::kU64, uint64_t> {};
template <> struct ElementTraits<DType::kF32> : PlainTraits<DType::kF32, float> {};
template <> struct ElementTraits<DType::kF64> : PlainTraits<DType::kF64, double> {};
template <>
struct ElementTraits<DType::kC64> : PlainTraits<DType::kC64, std::complex<float>> {};
template <>
struct ElementTraits<DType::kC128> : PlainTraits<DType::kC128, std::complex<double>> {};

template <>
struct ElementTraits<DType::kBF16> {
  static constexpr DType kDType = DType::kBF16;
  using Storage = BF16Bits;
  using Compute = float;
  static Compute Load(Storage s) { return BF16ToFloat(s.bits); }
  static Storage Store(Compute c) { return {FloatToBF16(c)}; }
};
template <>
struct ElementTraits<DType::kF16> {
  static constexpr DType kDType = DType::kF16;
  using Storage = F16Bits;
  using Compute = float;
  static Compute Load(Storage s) { return HalfToFloat(s.bits); }
  static Storage Store(Compute c) { return {FloatToHalf(c)}; }
};

template <typename Traits>
inline constexpr bool kIsFloating =
    std::is_floating_point_v<typename Traits::Compute>;
template <typename Traits>
inline constexpr bool kIsComplex =
    Traits::kDType == DType::kC64 || Traits::kDType == DType::kC128;
template <typename Traits>
inline constexpr bool kIsIntegral =
    std::is_integral_v<typename Traits::Compute> && Traits::kDType != DType::kPred;

// Calls fn(ElementTraits<t>{}) for the element types the interpreter computes
// with; any other type is an Unimplemented error of fn's return type.
template <typename Fn>
auto DispatchDType(DType t, Fn&& fn) -> decltype(fn(ElementTraits<DType::kF32>{})) {
  using Result = decltype(fn(ElementTraits<DType::kF32>{}));
  switch (t) {
#define SEAM_DISPATCH_CASE(D) \
  case DType::D:              \
    return fn(ElementTraits<DType::D>{});
    SEAM_DISPATCH_CASE(kPred)
    SEAM_DISPATCH_CASE(kS8)
    SEAM_DISPATCH_CASE(kS16)
    SEAM_DISPATCH_CASE(kS32)
    SEAM_DISPATCH_CASE(kS64)
    SEAM_DISPATCH_CASE(kU8)
    SEAM_DISPATCH_CASE(kU16)
    SEAM_DISPATCH_CASE(kU32)
    SEAM_DISPATCH_CASE(kU64)
    SEAM_DISPATCH_CASE(kBF16)
    SEAM_DISPATCH_CASE(kF16)
    SEAM_DISPATCH_CASE(kF32)
    SEAM_DISPATCH_CASE(kF64)
    SEAM_DISPATCH_CASE(kC64)
    SEAM_DISPATCH_CASE(kC128)
#undef SEAM_DISPATCH_CASE
    default:
      return Result(absl::UnimplementedError(
          absl::StrCat("the interpreter does not compute with ", DTypeName(t))));
  }
}

}  // namespace seam
