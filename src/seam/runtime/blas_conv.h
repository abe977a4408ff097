// convolution on the CPU, for every dim_labels, window (strides, padding,
// base and window dilation, reversal), feature_group_count and
// batch_group_count: operands packed as [batch][positions][features] and
// [kernel positions][in][out], then im2col + GEMM (OpenBLAS) per group, the
// column matrix built in row chunks; a 1x1 unit window skips im2col; one
// input feature per group (depthwise) accumulates directly, vectorized over
// output features. bf16/f16 compute in f32 and round once.
#pragma once

#include "absl/status/statusor.h"
#include "seam/ir/instruction.h"
#include "seam/ir/literal.h"
#include "seam/runtime/buffer_pool.h"

namespace seam::runtime {

// Whether BlasConvolution handles this convolution (float types, static
// shapes).
bool BlasConvolutionHandles(const Instruction& conv);

// Temporaries and the result come from `pool`.
absl::StatusOr<Literal> BlasConvolution(BufferPool& pool, const Instruction& conv,
                                        const Literal& input, const Literal& kernel);

}  // namespace seam::runtime
