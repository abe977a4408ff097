// dot with general dimension numbers: operands are packed into [batch, M, K]
// and [batch, K, N] in the accumulator type (dense_buffer.h), multiplied in
// i-k-j order, and the [batch, M, N] result is exactly the output's row-major
// order (batch dims, then lhs free dims, then rhs free dims).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "seam/eval/dense_buffer.h"
#include "seam/eval/index_util.h"
#include "seam/eval/ops.h"

namespace seam {
namespace {

// Where each dimension of an operand goes in its packed [batch, rows, cols].
struct Packing {
  std::vector<int64_t> batch, free, contracting;
};

std::vector<int64_t> FreeDims(int rank, const IntList& batch, const IntList& contracting) {
  std::vector<int64_t> free;
  for (int d = 0; d < rank; ++d) {
    if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
        std::find(contracting.begin(), contracting.end(), d) == contracting.end()) {
      free.push_back(d);
    }
  }
  return free;
}

int64_t Product(const Shape& shape, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= shape.dim(static_cast<int>(d));
  return n;
}

// Packs `literal` so that element (b, r, c) sits at (b * R + r) * C + c, where
// r enumerates `row_dims` and c `col_dims` in row-major order.
template <typename Acc>
std::vector<Acc> Pack(const Literal& literal, const std::vector<int64_t>& batch_dims,
                      const std::vector<int64_t>& row_dims,
                      const std::vector<int64_t>& col_dims) {
  const Shape& shape = literal.shape();
  auto sizes = [&](const std::vector<int64_t>& dims) {
    std::vector<int64_t> s;
    for (int64_t d : dims) s.push_back(shape.dim(static_cast<int>(d)));
    return s;
  };
  std::vector<int64_t> b_strides = RowMajorStrides(sizes(batch_dims));
  std::vector<int64_t> r_strides = RowMajorStrides(sizes(row_dims));
  std::vector<int64_t> c_strides = RowMajorStrides(sizes(col_dims));
  int64_t rows = Product(shape, row_dims), cols = Product(shape, col_dims);
  std::vector<Acc> packed(literal.element_count());
  ForEachIndex(shape.dims(), [&](absl::Span<const int64_t> index, int64_t linear) {
    int64_t b = 0, r = 0, c = 0;
    for (size_t k = 0; k < batch_dims.size(); ++k) b += index[batch_dims[k]] * b_strides[k];
    for (size_t k = 0; k < row_dims.size(); ++k) r += index[row_dims[k]] * r_strides[k];
    for (size_t k = 0; k < col_dims.size(); ++k) c += index[col_dims[k]] * c_strides[k];
    packed[(b * rows + r) * cols + c] = LoadWide<Acc>(literal, linear);
  });
  return packed;
}

template <typename Acc>
Literal Multiply(const Instruction& instruction, const Literal& lhs, const Literal& rhs) {
  const Attributes& attrs = instruction.attrs();
  IntList lb = attrs.lhs_batch_dims.value_or(IntList{});
  IntList lc = attrs.lhs_contracting_dims.value_or(IntList{});
  IntList rb = attrs.rhs_batch_dims.value_or(IntList{});
  IntList rc = attrs.rhs_contracting_dims.value_or(IntList{});
  std::vector<int64_t> lf = FreeDims(lhs.shape().rank(), lb, lc);
  std::vector<int64_t> rf = FreeDims(rhs.shape().rank(), rb, rc);
  int64_t batch = Product(lhs.shape(), lb);
  int64_t m = Product(lhs.shape(), lf), k = Product(lhs.shape(), lc);
  int64_t n = Product(rhs.shape(), rf);
  std::vector<Acc> a = Pack<Acc>(lhs, lb, lf, lc);  // [batch, m, k]
  std::vector<Acc> b = Pack<Acc>(rhs, rb, rc, rf);  // [batch, k, n]
  std::vector<Acc> c(static_cast<size_t>(batch * m * n), Acc{});
  for (int64_t p = 0; p < batch; ++p) {
    for (int64_t i = 0; i < m; ++i) {
      Acc* row = &c[(p * m + i) * n];
      for (int64_t q = 0; q < k; ++q) {
        Acc x = a[(p * m + i) * k + q];
        const Acc* col = &b[(p * k + q) * n];
        for (int64_t j = 0; j < n; ++j) row[j] += x * col[j];
      }
    }
  }
  Literal out(instruction.shape());
  for (int64_t i = 0; i < out.element_count(); ++i) StoreWide(out, i, c[i]);
  return out;
}

}  // namespace

absl::StatusOr<Literal> EvalDot(const Instruction& instruction, OperandValues operands) {
  const Literal& lhs = *operands[0];
  const Literal& rhs = *operands[1];
  return WithAccumulator(lhs.shape().dtype(), rhs.shape().dtype(), instruction.shape().dtype(),
                         [&](auto acc) -> absl::StatusOr<Literal> {
                           return Multiply<decltype(acc)>(instruction, lhs, rhs);
                         });
}

}  // namespace seam
