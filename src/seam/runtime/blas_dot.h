// dot through BLAS (OpenBLAS's cblas_sgemm / cblas_dgemm): operands are
// packed as [batch, M, K] and [batch, K, N] (no copy when they already are),
// bf16 and f16 computed in f32 and rounded once at the end, as XLA does.
#pragma once

#include "absl/status/statusor.h"
#include "seam/ir/instruction.h"
#include "seam/ir/literal.h"

namespace seam::runtime {

// Whether BlasDot handles this dot (float types, static shapes).
bool BlasHandles(const Instruction& dot);

absl::StatusOr<Literal> BlasDot(const Instruction& dot, const Literal& lhs, const Literal& rhs);

}  // namespace seam::runtime
