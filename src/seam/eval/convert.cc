// convert, bitcast-convert, reduce-precision and stochastic-convert.
// convert: float -> int truncates toward zero, saturates, and maps NaN to 0;
// int -> int wraps; anything -> pred is `!= 0`; complex -> real keeps the real
// part; float -> narrower float rounds to nearest even.
#include <bit>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "seam/eval/element_traits.h"
#include "seam/eval/ops.h"
#include "seam/eval/scalar_ops.h"

namespace seam {
namespace {

template <typename From, typename To>
typename To::Compute ConvertValue(typename From::Compute v) {
  using F = typename From::Compute;
  using C = typename To::Compute;
  if constexpr (kIsComplex<To>) {
    if constexpr (kIsComplex<From>) {
      return C(static_cast<typename C::value_type>(v.real()),
               static_cast<typename C::value_type>(v.imag()));
    } else {
      return C(static_cast<typename C::value_type>(v), 0);
    }
  } else if constexpr (kIsComplex<From>) {
    return ConvertValue<ElementTraits<DType::kF64>, To>(static_cast<double>(v.real()));
  } else if constexpr (To::kDType == DType::kPred) {
    return v != F{0};
  } else if constexpr (kIsFloating<From> && kIsIntegral<To>) {
    return scalar::SaturatingFloatToInt<C>(v);
  } else {
    return static_cast<C>(v);
  }
}

absl::StatusOr<Literal> Convert(const Shape& shape, const Literal& x) {
  return DispatchDType(x.shape().dtype(), [&](auto from) -> absl::StatusOr<Literal> {
    using From = decltype(from);
    return DispatchDType(shape.dtype(), [&](auto to) -> absl::StatusOr<Literal> {
      using To = decltype(to);
      Literal out(shape);
      const auto* src = x.data<typename From::Storage>();
      auto* dst = out.mutable_data<typename To::Storage>();
      for (int64_t i = 0; i < out.element_count(); ++i) {
        dst[i] = To::Store(ConvertValue<From, To>(From::Load(src[i])));
      }
      return out;
    });
  });
}

absl::StatusOr<Literal> BitcastConvert(const Shape& shape, const Literal& x) {
  Literal out(shape);
  if (out.bytes().size() != x.bytes().size()) {
    return absl::InvalidArgumentError(absl::StrCat("bitcast-convert from ", x.shape().ToString(false),
                                                   " to ", shape.ToString(false),
                                                   " changes the byte size"));
  }
  if (!x.bytes().empty()) {  // memcpy from an empty vector's null data() is undefined
    std::memcpy(out.mutable_bytes().data(), x.bytes().data(), x.bytes().size());
  }
  return out;
}

// Rounds the bits of an IEEE value of (kExponent, kMantissa) to a format with
// `exponent_bits` and `mantissa_bits`, as XLA's reduce-precision does in the
// operand's own type: round to nearest even, overflow to inf, underflow
// (anything below the narrow format's smallest normal) to signed zero. A NaN
// stays as it is, except that a format without mantissa bits has no NaN and
// XLA gives +inf.
template <typename Bits, int kExponent, int kMantissa>
Bits ReduceBits(Bits x, int exponent_bits, int mantissa_bits) {
  // Work in at least 32 bits so that 16-bit types do not promote to int.
  using W = std::conditional_t<(sizeof(Bits) < 4), uint32_t, Bits>;
  constexpr int kTotal = 1 + kExponent + kMantissa;
  constexpr W kExponentMask = ((W{1} << kExponent) - 1) << kMantissa;
  constexpr W kMantissaMask = (W{1} << kMantissa) - 1;
  W rounded = x;
  if ((rounded & kExponentMask) == kExponentMask && (rounded & kMantissaMask) != 0) {
    return static_cast<Bits>(mantissa_bits > 0 ? rounded : kExponentMask);
  }
  if (mantissa_bits < kMantissa) {
    int shift = kMantissa - mantissa_bits;
    W last_bit_mask = W{1} << shift;
    W bias = ((rounded & last_bit_mask) >> shift) + ((last_bit_mask >> 1) - 1);
    rounded = (rounded + bias) & ~(last_bit_mask - 1);
  }
  if (exponent_bits < kExponent) {
    W sign_mask = W{1} << (kTotal - 1);
    W bias = (W{1} << (kExponent - 1)) - 1;
    W reduced_bias = (W{1} << (exponent_bits - 1)) - 1;
    W exponent = rounded & kExponentMask;
    W signed_zero = rounded & sign_mask;
    if (exponent > ((bias + reduced_bias) << kMantissa)) {
      rounded = signed_zero | kExponentMask;
    } else if (exponent <= ((bias - reduced_bias) << kMantissa)) {
      rounded = signed_zero;
    }
  }
  return static_cast<Bits>(rounded);
}

absl::StatusOr<Literal> ReducePrecision(const Instruction& instruction, const Literal& x) {
  int exponent_bits = static_cast<int>(instruction.attrs().exponent_bits.value_or(8));
  int mantissa_bits = static_cast<int>(instruction.attrs().mantissa_bits.value_or(23));
  if (exponent_bits < 1 || mantissa_bits < 0) {
    return absl::InvalidArgumentError("reduce-precision needs exponent_bits >= 1, mantissa_bits >= 0");
  }
  uint64_t (*reduce)(uint64_t, int, int) = nullptr;
  switch (x.shape().dtype()) {
    case DType::kF64:
      reduce = [](uint64_t b, int e, int m) -> uint64_t {
        return ReduceBits<uint64_t, 11, 52>(b, e, m);
      };
      break;
    case DType::kF32:
      reduce = [](uint64_t b, int e, int m) -> uint64_t {
        return ReduceBits<uint32_t, 8, 23>(static_cast<uint32_t>(b), e, m);
      };
      break;
    case DType::kBF16:
      reduce = [](uint64_t b, int e, int m) -> uint64_t {
        return ReduceBits<uint16_t, 8, 7>(static_cast<uint16_t>(b), e, m);
      };
      break;
    case DType::kF16:
      reduce = [](uint64_t b, int e, int m) -> uint64_t {
        return ReduceBits<uint16_t, 5, 10>(static_cast<uint16_t>(b), e, m);
      };
      break;
    default:
      return absl::UnimplementedError(
          absl::StrCat("reduce-precision is not defined on ", DTypeName(x.shape().dtype())));
  }
  Literal out(instruction.shape());
  for (int64_t i = 0; i < out.element_count(); ++i) {
    out.SetBits(i, reduce(x.GetBits(i), exponent_bits, mantissa_bits));
  }
  return out;
}

}  // namespace

absl::StatusOr<Literal> EvalConversion(const Instruction& instruction, OperandValues operands) {
  switch (instruction.opcode()) {
    case Opcode::kConvert: return Convert(instruction.shape(), *operands[0]);
    case Opcode::kBitcastConvert: return BitcastConvert(instruction.shape(), *operands[0]);
    case Opcode::kReducePrecision: return ReducePrecision(instruction, *operands[0]);
    default:
      return absl::UnimplementedError(absl::StrCat("the interpreter does not support '",
                                                   OpcodeName(instruction.opcode()), "'"));
  }
}

}  // namespace seam
