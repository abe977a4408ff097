// Conversions between float and the 16-bit float formats (bf16, IEEE f16),
// rounding to nearest even and keeping NaN a NaN, as XLA converts them.
// Inline: the runtime converts whole arrays with them (a library call's
// packing), and this text is also every generated kernel's prelude.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace seam {

// `value` rounded to the nearest bf16 (ties to even), kept as a float; a
// NaN stays a NaN, made quiet. In 32-bit lanes, so that a loop of bf16
// arithmetic that rounds after every op need not narrow each vector to 16
// bits and widen it back (half the time of a bf16 layer norm went there).
// The NaN case is a bit mask rather than a branch: this source is also
// the generated code's prelude, where a branch would keep loops that call
// the CPU's vector-ABI functions from vectorizing.
inline float RoundToBF16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) & 0xffff0000u;
  const uint32_t quiet_nan = (bits & 0xffff0000u) | 0x00400000u;
  const uint32_t is_nan = 0u - static_cast<uint32_t>(value != value);
  return std::bit_cast<float>((quiet_nan & is_nan) | (rounded & ~is_nan));
}

// The bf16 nearest `value`: RoundToBF16's upper half.
inline uint16_t FloatToBF16(float value) {
  return static_cast<uint16_t>(std::bit_cast<uint32_t>(RoundToBF16(value)) >> 16);
}

inline float BF16ToFloat(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

inline uint16_t FloatToHalf(float value) {
  uint32_t bits = std::bit_cast<uint32_t>(value);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  uint32_t abs_bits = bits & 0x7fffffff;
  if (abs_bits >= 0x7f800000) {  // inf or nan
    return sign | (abs_bits > 0x7f800000 ? 0x7e00 : 0x7c00);
  }
  if (abs_bits >= 0x477ff000) return sign | 0x7c00;  // rounds past 65504
  int exponent = static_cast<int>(abs_bits >> 23) - 127;
  uint32_t mantissa = (abs_bits & 0x7fffff) | 0x800000;
  if (exponent < -25) return sign;  // below half the smallest subnormal
  int shift = exponent < -14 ? (-14 - exponent) + 13 : 13;
  uint32_t half_mantissa = mantissa >> shift;
  uint32_t remainder = mantissa & ((1u << shift) - 1);
  uint32_t halfway = 1u << (shift - 1);
  if (remainder > halfway || (remainder == halfway && (half_mantissa & 1))) {
    ++half_mantissa;  // may carry into the exponent, which is still right
  }
  if (exponent < -14) return sign | static_cast<uint16_t>(half_mantissa);
  uint32_t result = (static_cast<uint32_t>(exponent + 15) << 10) +
                    (half_mantissa - 0x400);
  return sign | static_cast<uint16_t>(result);
}

inline float HalfToFloat(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000) << 16;
  uint32_t exponent = (bits >> 10) & 0x1f;
  uint32_t mantissa = bits & 0x3ff;
  if (exponent == 0x1f) {
    return std::bit_cast<float>(sign | 0x7f800000 | (mantissa << 13));
  }
  if (exponent == 0) {
    float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

}  // namespace seam
