#include "seam/fusion/row_space.h"

#include <algorithm>

namespace seam::fusion {
namespace {

// Whether `ranges` leave dimensions [0, k) whole.
bool KeepsLeadingWhole(const Instruction& op, int k) {
  const Shape& in = op.operand(0)->shape();
  switch (op.opcode()) {
    case Opcode::kSlice: {
      const SliceRanges& ranges = *op.attrs().slice;
      for (int d = 0; d < k; ++d) {
        if (ranges[d].start != 0 || ranges[d].limit != in.dim(d) || ranges[d].stride != 1) {
          return false;
        }
      }
      return true;
    }
    case Opcode::kPad: {
      const PaddingConfig& padding = *op.attrs().padding;
      for (int d = 0; d < k; ++d) {
        if (padding[d].low != 0 || padding[d].high != 0 || padding[d].interior != 0) return false;
      }
      return true;
    }
    case Opcode::kReverse: {
      for (int64_t d : op.attrs().dimensions.value_or(IntList{})) {
        if (d < k) return false;
      }
      return true;
    }
    case Opcode::kDynamicSlice: {
      const IntList& sizes = op.attrs().dynamic_slice_sizes.value_or(IntList{});
      for (int d = 0; d < k && d < static_cast<int>(sizes.size()); ++d) {
        if (sizes[d] != in.dim(d)) return false;
      }
      return true;
    }
    case Opcode::kConcatenate:
      return op.attrs().dimensions.has_value() && !op.attrs().dimensions->empty() &&
             (*op.attrs().dimensions)[0] >= k;
    default:
      return false;
  }
}

OperandRows Same(int split) { return {OperandRows::kSameRows, split}; }
OperandRows Invariant() { return {OperandRows::kInvariant, 0}; }
OperandRows Mixed() { return {OperandRows::kMixed, 0}; }

}  // namespace

std::optional<int> SplitFor(const Shape& shape, int64_t rows) {
  int64_t product = 1;
  for (int k = 0; k <= shape.rank(); ++k) {
    if (product == rows) return k;
    if (k == shape.rank() || product > rows) break;
    product *= shape.dim(k);
  }
  return std::nullopt;
}

OperandRows OperandRowsOf(const Instruction& op, int result_split, int operand_index) {
  const Shape& operand = op.operand(operand_index)->shape();
  if (!operand.IsArray()) return Mixed();
  if (operand.rank() == 0 || result_split == 0) return Invariant();
  const Shape& result = op.shape();
  switch (op.opcode()) {
    case Opcode::kBroadcast: {
      // Operand dimension j lands on result dimension dims[j] (increasing).
      const IntList& dims = op.attrs().dimensions.value_or(IntList{});
      int row_dims = 0;
      for (int64_t d : dims) row_dims += d < result_split;
      if (row_dims == 0) return Invariant();
      for (int j = 0; j < row_dims; ++j) {
        if (dims[j] != j) return Mixed();
      }
      return row_dims == result_split ? Same(row_dims) : Mixed();
    }
    case Opcode::kReshape:
    case Opcode::kBitcast: {
      int64_t rows = 1;
      for (int d = 0; d < result_split; ++d) rows *= result.dim(d);
      std::optional<int> split = SplitFor(operand, rows);
      return split.has_value() ? Same(*split) : Mixed();
    }
    case Opcode::kTranspose: {
      const IntList& permutation = *op.attrs().dimensions;
      for (int d = 0; d < result_split; ++d) {
        if (permutation[d] != d) return Mixed();
      }
      return Same(result_split);
    }
    case Opcode::kSlice:
    case Opcode::kPad:
    case Opcode::kReverse:
    case Opcode::kConcatenate:
      if (op.opcode() == Opcode::kPad && operand_index == 1) return Invariant();
      return KeepsLeadingWhole(op, result_split) ? Same(result_split) : Mixed();
    case Opcode::kDynamicSlice:
      if (operand_index > 0) return Invariant();
      return KeepsLeadingWhole(op, result_split) ? Same(result_split) : Mixed();
    case Opcode::kReduce: {
      if (operand_index >= op.operand_count() / 2) return Invariant();
      // Row r of the result folds elements whose kept dimensions are r's:
      // rows survive when the kept dimensions come first.
      int64_t rows = 1;
      for (int d = 0; d < result_split; ++d) rows *= result.dim(d);
      const IntList& reduced = op.attrs().dimensions.value_or(IntList{});
      std::optional<int> split = SplitFor(operand, rows);
      if (!split.has_value()) return Mixed();
      for (int64_t d : reduced) {
        if (d < *split && operand.dim(static_cast<int>(d)) != 1) return Mixed();
      }
      return Same(*split);
    }
    default:
      break;
  }
  if (IsElementwise(op.opcode()) && operand.dims() == result.dims()) return Same(result_split);
  return Mixed();
}

}  // namespace seam::fusion
