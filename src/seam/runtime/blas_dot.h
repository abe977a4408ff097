// dot through BLAS (OpenBLAS's cblas_sgemm / cblas_dgemm): operands are
// packed as [batch, M, K] and [batch, K, N], read in place when they already
// are either way round (BLAS transposes), otherwise packed in pooled memory;
// bf16 and f16 computed in f32 and rounded once at the end, as XLA does.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "seam/ir/instruction.h"
#include "seam/ir/literal.h"
#include "seam/runtime/buffer_pool.h"
#include "seam/runtime/result_epilogue.h"

namespace seam::runtime {

// A dot as a stack of GEMMs, [batch, m, k] x [batch, k, n] -> [batch, m, n]
// (the result already is in that order: batch, lhs free, rhs free). Each
// operand's `order` permutes it into a matrix stack; when it already is one
// the other way round (BLAS transposes), order is that and `transposed` is
// set.
struct DotAsGemm {
  int64_t batch = 1, m = 1, n = 1, k = 1;
  std::vector<int64_t> lhs_order, rhs_order;
  bool lhs_transposed = false, rhs_transposed = false;

  // Whether both operands are read in place (no permutation).
  bool InPlace() const;
};
DotAsGemm GemmOfDot(const Instruction& dot);

// Whether BlasDot handles this dot (float types, static shapes).
bool BlasHandles(const Instruction& dot);

// Temporaries and the result come from `pool`. `epilogue`, when given, is
// applied to each piece of each product as it is written where the pieces
// are the result's own (an f32 or f64 result in place, its last dimension
// the product's columns).
absl::StatusOr<Literal> BlasDot(BufferPool& pool, const Instruction& dot, const Literal& lhs,
                                const Literal& rhs, ResultEpilogue* epilogue = nullptr);

}  // namespace seam::runtime
