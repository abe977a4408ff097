// gather and scatter with full dimension numbers, batching dims included.
// Gather clamps start indices so each slice lies in the operand; scatter
// skips an update window that would leave the operand, as XLA's backends do.
#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "seam/eval/index_util.h"
#include "seam/eval/ops.h"
#include "seam/eval/reducer.h"
#include "seam/util/status_macros.h"

namespace seam {
namespace {

// Reads the index vector selected by `batch_index` (the positions of the
// indices array without index_vector_dim) from `indices`.
class IndexVectors {
 public:
  IndexVectors(const Literal& indices, int64_t index_vector_dim)
      : indices_(indices), vector_dim_(index_vector_dim) {
    const Shape& shape = indices.shape();
    strides_ = RowMajorStrides(shape.dims());
    length_ = vector_dim_ < shape.rank() ? shape.dim(static_cast<int>(vector_dim_)) : 1;
  }
  int64_t length() const { return length_; }
  // Component `k` of the vector at the batch position `batch`.
  int64_t Get(absl::Span<const int64_t> batch, int64_t k) const {
    int64_t linear = 0;
    size_t b = 0;
    for (int d = 0; d < indices_.shape().rank(); ++d) {
      int64_t i = d == vector_dim_ ? k : batch[b++];
      linear += i * strides_[d];
    }
    return IsUnsigned(indices_.shape().dtype())
               ? static_cast<int64_t>(std::min<uint64_t>(indices_.GetBits(linear), INT64_MAX))
               : indices_.GetInt(linear);
  }
  // The batch coordinate along indices dimension `d` (d != index_vector_dim).
  static int64_t BatchCoordinate(absl::Span<const int64_t> batch, int64_t d, int64_t vector_dim) {
    return batch[d < vector_dim ? d : d - 1];
  }

 private:
  const Literal& indices_;
  int64_t vector_dim_;
  std::vector<int64_t> strides_;
  int64_t length_;
};

absl::StatusOr<Literal> Gather(const Instruction& instruction, const Literal& operand,
                               const Literal& indices) {
  const Attributes& a = instruction.attrs();
  const IntList& offset_dims = a.offset_dims.value_or(IntList{});
  const IntList& collapsed = a.collapsed_slice_dims.value_or(IntList{});
  const IntList& start_map = a.start_index_map.value_or(IntList{});
  const IntList& operand_batching = a.operand_batching_dims.value_or(IntList{});
  const IntList& indices_batching = a.start_indices_batching_dims.value_or(IntList{});
  const IntList& slice_sizes = a.slice_sizes.value_or(IntList{});
  int64_t vector_dim = a.index_vector_dim.value_or(indices.shape().rank());
  IndexVectors vectors(indices, vector_dim);
  const Shape& shape = instruction.shape();
  int rank = operand.shape().rank();
  std::vector<int64_t> window_dims;  // operand dims that offset_dims walk
  for (int d = 0; d < rank; ++d) {
    if (!Contains(collapsed, d) && !Contains(operand_batching, d)) window_dims.push_back(d);
  }
  std::vector<int64_t> strides = RowMajorStrides(operand.shape().dims());
  Literal out(shape);
  int64_t size = DTypeByteSize(shape.dtype());
  std::vector<int64_t> batch, start(rank);
  ForEachIndex(shape.dims(), [&](absl::Span<const int64_t> o, int64_t linear) {
    batch.clear();
    for (int d = 0; d < shape.rank(); ++d) {
      if (!Contains(offset_dims, d)) batch.push_back(o[d]);
    }
    std::fill(start.begin(), start.end(), 0);
    for (size_t k = 0; k < start_map.size(); ++k) start[start_map[k]] = vectors.Get(batch, k);
    for (size_t k = 0; k < operand_batching.size(); ++k) {
      start[operand_batching[k]] =
          IndexVectors::BatchCoordinate(batch, indices_batching[k], vector_dim);
    }
    int64_t from = 0;
    for (int d = 0; d < rank; ++d) {
      int64_t s = std::clamp<int64_t>(start[d], 0, operand.shape().dim(d) - slice_sizes[d]);
      from += s * strides[d];
    }
    for (size_t k = 0; k < offset_dims.size(); ++k) {
      from += o[offset_dims[k]] * strides[window_dims[k]];
    }
    std::memcpy(out.mutable_bytes().data() + linear * size, operand.bytes().data() + from * size,
                size);
  });
  return out;
}

absl::StatusOr<Literal> Scatter(const Instruction& instruction, OperandValues operands,
                                Evaluator& evaluator) {
  const Attributes& a = instruction.attrs();
  size_t n = (operands.size() - 1) / 2;
  const Literal& indices = *operands[n];
  const IntList& window_dims_of_update = a.update_window_dims.value_or(IntList{});
  const IntList& inserted = a.inserted_window_dims.value_or(IntList{});
  const IntList& to_operand = a.scatter_dims_to_operand_dims.value_or(IntList{});
  const IntList& input_batching = a.input_batching_dims.value_or(IntList{});
  const IntList& indices_batching = a.scatter_indices_batching_dims.value_or(IntList{});
  int64_t vector_dim = a.index_vector_dim.value_or(indices.shape().rank());
  IndexVectors vectors(indices, vector_dim);
  const Shape& operand_shape = operands[0]->shape();
  const Shape& update_shape = operands[n + 1]->shape();
  int rank = operand_shape.rank();
  std::vector<int64_t> window_dims;  // operand dims the update window covers
  for (int d = 0; d < rank; ++d) {
    if (!Contains(inserted, d) && !Contains(input_batching, d)) window_dims.push_back(d);
  }
  std::vector<int64_t> window_size(rank, 1);
  for (size_t k = 0; k < window_dims.size(); ++k) {
    window_size[window_dims[k]] = update_shape.dim(static_cast<int>(window_dims_of_update[k]));
  }
  std::vector<DType> types;
  for (size_t i = 0; i < n; ++i) types.push_back(operands[i]->shape().dtype());
  Literal out(instruction.shape());
  std::vector<Literal*> results;
  for (size_t i = 0; i < n; ++i) {
    Literal& r = instruction.shape().IsTuple() ? out.mutable_tuple_elements()[i] : out;
    r = *operands[i];
    results.push_back(&r);
  }
  ScalarCaller combine(**a.to_apply, evaluator, types);
  std::vector<int64_t> strides = RowMajorStrides(operand_shape.dims());
  std::vector<int64_t> batch, start(rank);
  absl::Status status;
  ForEachIndex(update_shape.dims(), [&](absl::Span<const int64_t> u, int64_t u_linear) {
    if (!status.ok()) return;
    batch.clear();
    for (int d = 0; d < update_shape.rank(); ++d) {
      if (!Contains(window_dims_of_update, d)) batch.push_back(u[d]);
    }
    std::fill(start.begin(), start.end(), 0);
    for (size_t k = 0; k < to_operand.size(); ++k) start[to_operand[k]] = vectors.Get(batch, k);
    for (size_t k = 0; k < input_batching.size(); ++k) {
      start[input_batching[k]] =
          IndexVectors::BatchCoordinate(batch, indices_batching[k], vector_dim);
    }
    int64_t to = 0;
    for (int d = 0; d < rank; ++d) {
      if (start[d] < 0 || start[d] + window_size[d] > operand_shape.dim(d)) return;
      to += start[d] * strides[d];
    }
    for (size_t k = 0; k < window_dims.size(); ++k) {
      to += u[window_dims_of_update[k]] * strides[window_dims[k]];
    }
    for (size_t i = 0; i < n; ++i) {
      int64_t size = DTypeByteSize(types[i]);
      std::memcpy(combine.accumulators()[i].mutable_bytes().data(),
                  results[i]->bytes().data() + to * size, size);
      std::memcpy(combine.values()[i].mutable_bytes().data(),
                  operands[n + 1 + i]->bytes().data() + u_linear * size, size);
    }
    status = combine.Apply();
    for (size_t i = 0; status.ok() && i < n; ++i) {
      int64_t size = DTypeByteSize(types[i]);
      std::memcpy(results[i]->mutable_bytes().data() + to * size,
                  combine.accumulators()[i].bytes().data(), size);
    }
  });
  if (!status.ok()) return status;
  return out;
}

}  // namespace

absl::StatusOr<Literal> EvalGatherScatter(const Instruction& instruction, OperandValues operands,
                                          Evaluator& evaluator) {
  if (instruction.opcode() == Opcode::kGather) {
    return Gather(instruction, *operands[0], *operands[1]);
  }
  return Scatter(instruction, operands, evaluator);
}

}  // namespace seam
