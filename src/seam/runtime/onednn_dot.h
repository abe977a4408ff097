// Dots through oneDNN's matmul, each stated by strides over its operands
// and result (no copies). bf16 operands are read as they are, never
// widened into f32 copies, and accumulate in f32 and round once into the
// result, as the OpenBLAS path does after widening: skinny products (a few
// tokens against a weight matrix, Gemma's decoder) are bound by reading
// the weights, and widening them first tripled what was read. f32 dots go
// here where OpenBLAS would need permuted copies, or would be called once
// per tiny product.
#pragma once

#include <functional>

#include "absl/status/statusor.h"
#include "seam/ir/instruction.h"
#include "seam/ir/literal.h"
#include "seam/runtime/buffer_pool.h"
#include "seam/runtime/result_epilogue.h"

namespace seam::runtime {

// Whether OneDnnDot takes this dot: bf16 operands (a bf16 or f32 result),
// or f32 ones of the kinds above, whose operands index as matrix stacks.
// (It may still fail, without oneDNN.)
bool OneDnnDotServes(const Instruction& dot);

// For benchmarks: oneDNN's matmul alone on the dot's GEMM shape, as a
// library's own benchmark times it: dense row-major [batch, m, k] and
// [batch, m, n], the weights in the layout it picks, prepared once; f32 or
// bf16 as the operands are, on its OpenMP team of as many threads as
// Seam's pool. Each call of the function returned runs it once.
absl::StatusOr<std::function<absl::Status()>> OneDnnMatmulAlone(const Instruction& dot);

// The result comes from `pool`; the work is split over Seam's pool, and
// `epilogue`, when given, applied to each share's result as it is written
// where shares are ranges of it (rows, or columns of its last dimension).
// Unimplemented for a dot it does not serve (callers go on to OpenBLAS).
absl::StatusOr<Literal> OneDnnDot(BufferPool& pool, const Instruction& dot, const Literal& lhs,
                                  const Literal& rhs, ResultEpilogue* epilogue = nullptr);

}  // namespace seam::runtime
