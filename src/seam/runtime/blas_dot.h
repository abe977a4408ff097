// dot through BLAS (OpenBLAS's cblas_sgemm / cblas_dgemm): operands are
// packed as [batch, M, K] and [batch, K, N], read in place when they already
// are either way round (BLAS transposes), otherwise packed in pooled memory;
// bf16 and f16 computed in f32 and rounded once at the end, as XLA does.
#pragma once

#include "absl/status/statusor.h"
#include "seam/ir/instruction.h"
#include "seam/ir/literal.h"
#include "seam/runtime/buffer_pool.h"

namespace seam::runtime {

// Whether BlasDot handles this dot (float types, static shapes).
bool BlasHandles(const Instruction& dot);

// Temporaries and the result come from `pool`.
absl::StatusOr<Literal> BlasDot(BufferPool& pool, const Instruction& dot, const Literal& lhs,
                                const Literal& rhs);

}  // namespace seam::runtime
