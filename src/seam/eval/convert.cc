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
        return scalar::ReducePrecisionBits<uint64_t, 11, 52>(b, e, m);
      };
      break;
    case DType::kF32:
      reduce = [](uint64_t b, int e, int m) -> uint64_t {
        return scalar::ReducePrecisionBits<uint32_t, 8, 23>(static_cast<uint32_t>(b), e, m);
      };
      break;
    case DType::kBF16:
      reduce = [](uint64_t b, int e, int m) -> uint64_t {
        return scalar::ReducePrecisionBits<uint16_t, 8, 7>(static_cast<uint16_t>(b), e, m);
      };
      break;
    case DType::kF16:
      reduce = [](uint64_t b, int e, int m) -> uint64_t {
        return scalar::ReducePrecisionBits<uint16_t, 5, 10>(static_cast<uint16_t>(b), e, m);
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

absl::StatusOr<Literal> ConvertElements(const Literal& x, DType to) {
  return Convert(Shape::Array(to, x.shape().dims()), x);
}

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
