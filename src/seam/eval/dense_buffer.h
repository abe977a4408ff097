// Element access in a wide type, for ops (dot, convolution, batch norm) that
// accumulate in higher precision than their element type: floats in double,
// integers in wrapping 64-bit arithmetic, complex in complex<double>.
#pragma once

#include <complex>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "seam/ir/literal.h"

namespace seam {

template <typename Acc>
Acc LoadWide(const Literal& literal, int64_t i) {
  if constexpr (std::is_same_v<Acc, std::complex<double>>) {
    return IsComplex(literal.shape().dtype()) ? literal.GetComplex(i)
                                              : Acc(literal.GetDouble(i), 0);
  } else if constexpr (std::is_same_v<Acc, double>) {
    return literal.GetDouble(i);
  } else {
    // Sign-extended two's complement: wrapping uint64 arithmetic is exact
    // modulo 2^64, and truncating on store wraps like the narrow type.
    return IsSigned(literal.shape().dtype()) ? static_cast<Acc>(literal.GetInt(i))
                                             : static_cast<Acc>(literal.GetBits(i));
  }
}

template <typename Acc>
void StoreWide(Literal& literal, int64_t i, Acc value) {
  if constexpr (std::is_same_v<Acc, std::complex<double>>) {
    if (IsComplex(literal.shape().dtype())) {
      literal.SetComplex(i, value);
    } else {
      literal.SetDouble(i, value.real());
    }
  } else if constexpr (std::is_same_v<Acc, double>) {
    if (IsFloat(literal.shape().dtype())) {
      literal.SetDouble(i, value);
    } else if (IsComplex(literal.shape().dtype())) {
      literal.SetComplex(i, {value, 0});
    } else {
      literal.SetBits(i, static_cast<uint64_t>(static_cast<int64_t>(value)));
    }
  } else {
    literal.SetBits(i, static_cast<uint64_t>(value));  // truncation wraps
  }
}

// Calls fn(Acc{}) with the accumulator type for an operation whose operands
// and result have these element types.
template <typename Fn>
auto WithAccumulator(DType a, DType b, DType result, Fn&& fn) {
  if (IsComplex(a) || IsComplex(b) || IsComplex(result)) return fn(std::complex<double>{});
  if (IsFloat(a) || IsFloat(b) || IsFloat(result)) return fn(double{});
  return fn(uint64_t{});
}

}  // namespace seam
