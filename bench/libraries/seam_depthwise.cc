// Seam's direct depthwise loop (blas_conv.cc's ConvolveDepthwise): per
// output row, accumulate kernel taps vectorized over the contiguous output
// features. Built twice (CMakeLists.txt): as Seam's runtime is (generic
// x86-64, -O2) and with -march=native, to show what the ISA alone buys.
#include <algorithm>

#include "seam_style.h"

#ifndef LIBBENCH_DEPTHWISE_NAME
#define LIBBENCH_DEPTHWISE_NAME DepthwiseRows
#endif

namespace libbench {

void LIBBENCH_DEPTHWISE_NAME(const DepthwiseArgs& a, int64_t begin, int64_t end) {
  const ConvCase& c = *a.c;
  const int64_t multiplier = c.co / c.fgc, out_positions = c.oh * c.ow, kp_count = c.kh * c.kw;
  for (int64_t r = begin; r < end; ++r) {
    const int64_t ob = r / out_positions, op = r % out_positions;
    float* acc = a.out + r * c.co;
    std::fill(acc, acc + c.co, 0.0f);
    for (int64_t kp = 0; kp < kp_count; ++kp) {
      const int64_t at = a.offsets[op * kp_count + kp];
      if (at < 0) continue;
      const float* x = a.in + (ob * c.h * c.w + at) * c.ci;
      const float* w = a.ker + kp * c.co;
      if (multiplier == 1) {
#pragma omp simd
        for (int64_t f = 0; f < c.co; ++f) acc[f] += x[f] * w[f];
      } else {
        for (int64_t f = 0; f < c.co; ++f) acc[f] += x[f / multiplier] * w[f];
      }
    }
  }
}

}  // namespace libbench
