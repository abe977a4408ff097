// Rows of a value: AStitch's block-locality check asks whether the block
// that produced some rows of a value is the block that consumes them. In
// Seam's row-major world a value of shape [d0..dn) split after k dimensions
// has rows = d0*...*d(k-1), each a contiguous run of elements; an op
// preserves rows when row r of its result reads only row r of an operand.
#pragma once

#include <cstdint>
#include <optional>

#include "seam/ir/instruction.h"

namespace seam::fusion {

// The smallest k with dims[0]*...*dims[k-1] == rows, or nullopt.
std::optional<int> SplitFor(const Shape& shape, int64_t rows);

// How row r of an op's result (split at `result_split`) reads one operand.
struct OperandRows {
  enum Kind {
    kSameRows,   // only row r of the operand, split at `split`
    kInvariant,  // the same elements for every row (a scalar, a broadcast along rows)
    kMixed,      // elements of other rows: no block locality
  };
  Kind kind = kMixed;
  int split = 0;
};
OperandRows OperandRowsOf(const Instruction& op, int result_split, int operand_index);

}  // namespace seam::fusion
