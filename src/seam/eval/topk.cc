// topk(operand), k=K, largest=L: along the last dimension, the K largest (or
// smallest) elements in order, and their s32 indices. Elements compare in
// IEEE total order as XLA's TopK decomposition does (-NaN < -inf < ... < -0 <
// +0 < ... < +inf < +NaN); equal elements keep their index order.
#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "seam/eval/ops.h"

namespace seam {
namespace {

// A key whose integer order is the total order of the value: floats through
// their sign-magnitude bits, integers as themselves.
int64_t TotalOrderKey(const Literal& literal, int64_t i) {
  DType t = literal.shape().dtype();
  if (IsFloat(t)) {
    int64_t bits = std::bit_cast<int64_t>(literal.GetDouble(i));
    return bits < 0 ? std::numeric_limits<int64_t>::min() - bits - 1 : bits;
  }
  if (IsUnsigned(t)) {
    return static_cast<int64_t>(literal.GetBits(i) ^ (uint64_t{1} << 63));
  }
  return literal.GetInt(i);
}

}  // namespace

absl::StatusOr<Literal> EvalTopK(const Instruction& instruction, OperandValues operands) {
  const Literal& operand = *operands[0];
  const Shape& shape = operand.shape();
  if (shape.rank() == 0 || !instruction.attrs().k.has_value()) {
    return absl::InvalidArgumentError("topk needs an operand of rank >= 1 and a k attribute");
  }
  int64_t k = *instruction.attrs().k;
  bool largest = instruction.attrs().largest.value_or(true);
  int64_t row = shape.dim(shape.rank() - 1);
  if (k < 0 || k > row) {
    return absl::InvalidArgumentError(
        absl::StrCat("topk: k=", k, " is outside [0, ", row, "], the size of the last dimension"));
  }
  int64_t rows = row == 0 ? 0 : operand.element_count() / row;
  Literal out(instruction.shape());
  Literal& values = out.mutable_tuple_elements()[0];
  Literal& indices = out.mutable_tuple_elements()[1];
  int64_t size = DTypeByteSize(shape.dtype());
  std::vector<int64_t> keys(row), order(row);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i = 0; i < row; ++i) keys[i] = TotalOrderKey(operand, r * row + i);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return largest ? keys[a] > keys[b] : keys[a] < keys[b];
    });
    for (int64_t j = 0; j < k; ++j) {
      std::memcpy(values.mutable_bytes().data() + (r * k + j) * size,
                  operand.bytes().data() + (r * row + order[j]) * size, size);
      indices.SetBits(r * k + j, static_cast<uint64_t>(order[j]));
    }
  }
  return out;
}

}  // namespace seam
