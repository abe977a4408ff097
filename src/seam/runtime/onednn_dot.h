// bf16 dots through oneDNN's matmul: the operands are read as they are
// (bf16, in their own layout, either way round), never widened into f32
// copies, and accumulate in f32 and round once into the result, as the
// OpenBLAS path does after widening. Skinny products (a few tokens against
// a weight matrix, Gemma's decoder) are bound by reading the weights, and
// widening them first tripled what was read.
#pragma once

#include "absl/status/statusor.h"
#include "seam/ir/instruction.h"
#include "seam/ir/literal.h"
#include "seam/runtime/buffer_pool.h"

namespace seam::runtime {

// Whether OneDnnDot takes this dot: bf16 operands that already are matrix
// stacks, a bf16 or f32 result. (It may still fail, without oneDNN.)
bool OneDnnDotServes(const Instruction& dot);

// The result comes from `pool`; the work is split over Seam's pool.
absl::StatusOr<Literal> OneDnnDot(BufferPool& pool, const Instruction& dot, const Literal& lhs,
                                  const Literal& rhs);

}  // namespace seam::runtime
