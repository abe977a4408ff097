// The library calls the host's libraries serve, for every backend: dots
// (through BLAS, oneDNN's matmul for bf16) and convolutions (oneDNN's
// direct convolution primitives, else im2col over OpenBLAS).
#pragma once

#include "absl/status/statusor.h"
#include "seam/ir/instruction.h"
#include "seam/ir/literal.h"
#include "seam/runtime/buffer_pool.h"
#include "seam/runtime/result_epilogue.h"

namespace seam::runtime {

bool HostBlasServes(const Instruction& i);

// Runs `i` (one HostBlasServes) on its two operands, and `epilogue` on its
// result when given; temporaries and the result come from `pool`.
absl::StatusOr<Literal> RunHostBlas(BufferPool& pool, const Instruction& i, const Literal& lhs,
                                    const Literal& rhs, ResultEpilogue* epilogue = nullptr);

}  // namespace seam::runtime
