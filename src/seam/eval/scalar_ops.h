// The scalar semantics of XLA's elementwise ops, one function per op family,
// on the compute type of each element type (see element_traits.h). Integer
// arithmetic wraps; division by zero and INT_MIN / -1 give what XLA's CPU and
// GPU backends give: x / 0 = -1 (all ones), x % 0 = x, INT_MIN / -1 = INT_MIN,
// INT_MIN % -1 = 0. Shifts by the bit width or more give 0, or the sign for
// arithmetic right shifts. Float max / min propagate NaN and order -0 below
// +0 whatever the operand order (IEEE 754-2019 maximum / minimum, which XLA's
// CPU backend emits as llvm.maximum / llvm.minimum).
#pragma once

#include <bit>
#include <cstdint>
#include <cmath>
#include <complex>
#include <limits>
#include <type_traits>

namespace seam::scalar {

template <typename T>
using Unsigned = std::make_unsigned_t<T>;

template <typename T>
T WrapAdd(T a, T b) { return static_cast<T>(static_cast<Unsigned<T>>(a) + static_cast<Unsigned<T>>(b)); }
template <typename T>
T WrapSub(T a, T b) { return static_cast<T>(static_cast<Unsigned<T>>(a) - static_cast<Unsigned<T>>(b)); }
template <typename T>
T WrapMul(T a, T b) {
  // Promote so that uint16*uint16 does not overflow a signed int.
  using Wide = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, Unsigned<T>>;
  return static_cast<T>(static_cast<Wide>(static_cast<Unsigned<T>>(a)) *
                        static_cast<Wide>(static_cast<Unsigned<T>>(b)));
}
template <typename T>
T WrapNeg(T a) { return WrapSub(T{0}, a); }

template <typename T>
T IntDivide(T a, T b) {
  if (b == 0) return static_cast<T>(-1);
  if constexpr (std::is_signed_v<T>) {
    if (a == std::numeric_limits<T>::min() && b == -1) return a;
  }
  return static_cast<T>(a / b);
}

template <typename T>
T IntRemainder(T a, T b) {
  if (b == 0) return a;
  if constexpr (std::is_signed_v<T>) {
    if (a == std::numeric_limits<T>::min() && b == -1) return 0;
  }
  return static_cast<T>(a % b);
}

template <typename T>
T ShiftLeft(T a, T b) {
  using U = Unsigned<T>;
  if (static_cast<U>(b) >= sizeof(T) * 8) return 0;
  return static_cast<T>(static_cast<U>(a) << static_cast<U>(b));
}
template <typename T>
T ShiftRightLogical(T a, T b) {
  using U = Unsigned<T>;
  if (static_cast<U>(b) >= sizeof(T) * 8) return 0;
  return static_cast<T>(static_cast<U>(a) >> static_cast<U>(b));
}
template <typename T>
T ShiftRightArithmetic(T a, T b) {
  using U = Unsigned<T>;
  using S = std::make_signed_t<T>;
  S sa = static_cast<S>(a);
  if (static_cast<U>(b) >= sizeof(T) * 8) return static_cast<T>(sa < 0 ? S{-1} : S{0});
  return static_cast<T>(sa >> static_cast<U>(b));
}

// Integer power by squaring, wrapping; negative exponents give 0 except for
// bases 1 and -1, as XLA defines it.
template <typename T>
T IntPower(T base, T exponent) {
  if constexpr (std::is_signed_v<T>) {
    if (exponent < 0) {
      if (base == 1) return 1;
      if (base == -1) return (exponent & 1) ? T{-1} : T{1};
      return 0;
    }
  }
  T result = 1;
  while (exponent != 0) {
    if (exponent & 1) result = WrapMul(result, base);
    base = WrapMul(base, base);
    exponent = static_cast<T>(static_cast<Unsigned<T>>(exponent) >> 1);
  }
  return result;
}

template <typename T>
T FloatMax(T a, T b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  if (a == b) return std::signbit(a) ? b : a;  // max(-0, +0) = +0
  return a > b ? a : b;
}
template <typename T>
T FloatMin(T a, T b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  if (a == b) return std::signbit(a) ? a : b;  // min(+0, -0) = -0
  return a < b ? a : b;
}

template <typename T>
T Sign(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(x) || x == 0) return x;  // keeps NaN and the sign of zero
    return x > 0 ? T{1} : T{-1};
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<T>((x > 0) - (x < 0));
  } else {
    return x > 0 ? T{1} : T{0};
  }
}

template <typename T>
T Logistic(T x) { return T{1} / (T{1} + std::exp(-x)); }

template <typename T>
int CountLeadingZeros(T x) {
  return std::countl_zero(static_cast<Unsigned<T>>(x));
}
template <typename T>
int PopCount(T x) {
  return std::popcount(static_cast<Unsigned<T>>(x));
}

// Float to integer conversion as XLA defines it: truncate toward zero,
// saturate out-of-range values, NaN becomes 0.
template <typename To, typename From>
To SaturatingFloatToInt(From x) {
  if (std::isnan(x)) return 0;
  if (x <= static_cast<From>(std::numeric_limits<To>::min())) return std::numeric_limits<To>::min();
  // max() may round up when converted (e.g. INT64_MAX to double): compare >=.
  if (x >= static_cast<From>(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
  return static_cast<To>(x);
}

// Total order on floats: -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN,
// as a signed integer key.
template <typename F>
auto TotalOrderKey(F f) {
  using Bits = std::conditional_t<sizeof(F) == 4, int32_t, int64_t>;
  Bits bits = std::bit_cast<Bits>(f);
  return bits < 0 ? static_cast<Bits>(bits ^ std::numeric_limits<Bits>::max()) : bits;
}

// Rounds the bits of an IEEE value of (kExponent, kMantissa) to a format with
// `exponent_bits` and `mantissa_bits`, as XLA's reduce-precision does in the
// operand's own type: round to nearest even, overflow to inf, underflow
// (anything below the narrow format's smallest normal) to signed zero. A NaN
// stays as it is, except that a format without mantissa bits has no NaN and
// XLA gives +inf.
template <typename Bits, int kExponent, int kMantissa>
Bits ReducePrecisionBits(Bits x, int exponent_bits, int mantissa_bits) {
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

// rng-bit-generator's word i from the state (key, counter): Seam's
// documented stream (SplitMix64), not the bits of XLA's Philox or ThreeFry.
inline uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
inline uint64_t RngBitWord(uint64_t key, uint64_t counter, uint64_t i) {
  return SplitMix64(key ^ SplitMix64(counter + i));
}

}  // namespace seam::scalar
