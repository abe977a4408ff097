// Conversions between float and the 16-bit float formats (bf16, IEEE f16),
// rounding to nearest even and keeping NaN a NaN, as XLA converts them.
#pragma once

#include <cstdint>

namespace seam {

uint16_t FloatToBF16(float value);
float BF16ToFloat(uint16_t bits);
uint16_t FloatToHalf(float value);
float HalfToFloat(uint16_t bits);

}  // namespace seam
