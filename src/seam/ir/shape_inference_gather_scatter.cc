// Shape inference for gather and scatter: index vectors, slice / window
// dimensions and, for scatter, the update computation.
#include <algorithm>
#include <vector>

#include "seam/ir/shape_inference_util.h"
#include "seam/util/status_macros.h"

namespace seam::shape_inference_internal {
namespace {

// The index vectors of gather and scatter lie along index_vector_dim of the
// indices, or are scalars when it equals the indices' rank. Returns the
// indices' other ("batch" / "scatter") dimensions.
absl::StatusOr<std::vector<int64_t>> IndexBatchDims(const Instruction& i, const Shape& indices,
                                                    int64_t vector_dim, size_t vector_size) {
  if (!IsInteger(indices.dtype()))
    return Invalid("indices of ", Op(i), " must be integers, got ", Str(indices));
  if (vector_dim < 0 || vector_dim > indices.rank()) {
    return Invalid("index_vector_dim=", vector_dim, " of ", Op(i), " is out of range for indices ",
                   Str(indices));
  }
  int64_t length = vector_dim < indices.rank() ? indices.dim(vector_dim) : 1;
  if (length != static_cast<int64_t>(vector_size)) {
    return Invalid("index vectors of ", Op(i), " have ", length, " components, but ", vector_size,
                   " operand dimensions are indexed");
  }
  std::vector<int64_t> batch = indices.dims();
  if (vector_dim < indices.rank()) batch.erase(batch.begin() + vector_dim);
  return batch;
}

}  // namespace

Inferred InferGather(const Instruction& i) {
  const Shape& x = In(i, 0);
  const Attributes& a = i.attrs();
  SEAM_ASSIGN_OR_RETURN(const IntList* offset, Require(i, a.offset_dims, "offset_dims"));
  SEAM_ASSIGN_OR_RETURN(const IntList* sizes, Require(i, a.slice_sizes, "slice_sizes"));
  SEAM_ASSIGN_OR_RETURN(const IntList* start_map, Require(i, a.start_index_map, "start_index_map"));
  SEAM_ASSIGN_OR_RETURN(const int64_t* vector_dim,
                        Require(i, a.index_vector_dim, "index_vector_dim"));
  IntList dropped = Concat(a.collapsed_slice_dims.value_or(IntList{}),
                           a.operand_batching_dims.value_or(IntList{}));
  SEAM_ASSIGN_OR_RETURN(std::vector<int64_t> batch,
                        IndexBatchDims(i, In(i, 1), *vector_dim, start_map->size()));
  SEAM_RETURN_IF_ERROR(CheckDimList(i, "start_index_map", *start_map, x.rank()));
  SEAM_RETURN_IF_ERROR(CheckDimList(i, "collapsed and batching dimensions", dropped, x.rank()));
  if (static_cast<int>(sizes->size()) != x.rank()) {
    return Invalid("'gather' needs one slice size per operand dimension, got slice_sizes=",
                   List(*sizes), " for ", Str(x));
  }
  std::vector<int64_t> window;
  for (int d = 0; d < x.rank(); ++d) {
    int64_t s = (*sizes)[d];
    if (s < 0 || s > x.dim(d) || (Contains(dropped, d) && s > 1)) {
      return Invalid("slice size ", s, " of 'gather' does not fit dimension ", d, " of ", Str(x),
                     Contains(dropped, d) ? " (collapsed dimensions need size 1)" : "");
    }
    if (!Contains(dropped, d)) window.push_back(s);
  }
  if (offset->size() != window.size() || !std::is_sorted(offset->begin(), offset->end())) {
    return Invalid("offset_dims of 'gather' must be ", window.size(),
                   " sorted result dimensions (one per uncollapsed slice dimension), got ",
                   List(*offset));
  }
  int64_t rank = static_cast<int64_t>(batch.size() + window.size());
  SEAM_RETURN_IF_ERROR(CheckDimList(i, "offset_dims", *offset, rank));
  std::vector<int64_t> dims;
  for (int64_t d = 0, o = 0, b = 0; d < rank; ++d)
    dims.push_back(Contains(*offset, d) ? window[o++] : batch[b++]);
  // XLA lets a collapsed or batching dimension have size 0, but such a
  // slice holds no element for the result's to come from (an evaluator
  // would read past the operand): only an empty result may have one.
  const bool empty = std::find(dims.begin(), dims.end(), 0) != dims.end();
  for (int64_t d : dropped) {
    if ((*sizes)[d] == 0 && !empty) {
      return Invalid("'gather' collapses dimension ", d, " of ", Str(x),
                     " with slice size 0, which leaves nothing to gather into ",
                     Str(Shape::Array(x.dtype(), dims)));
    }
  }
  return Shape::Array(x.dtype(), dims);
}

// scatter(inputs..., indices, updates...): the result has the inputs' shapes.
Inferred InferScatter(const Instruction& i) {
  int n = (i.operand_count() - 1) / 2;
  const Shape& x = In(i, 0);
  const Shape& u = In(i, n + 1);
  const Attributes& a = i.attrs();
  SEAM_ASSIGN_OR_RETURN(const IntList* window_dims,
                        Require(i, a.update_window_dims, "update_window_dims"));
  SEAM_ASSIGN_OR_RETURN(const IntList* to_operand,
                        Require(i, a.scatter_dims_to_operand_dims, "scatter_dims_to_operand_dims"));
  SEAM_ASSIGN_OR_RETURN(const int64_t* vector_dim,
                        Require(i, a.index_vector_dim, "index_vector_dim"));
  IntList inserted =
      Concat(a.inserted_window_dims.value_or(IntList{}), a.input_batching_dims.value_or(IntList{}));
  std::vector<DType> inputs, updates;
  for (int k = 0; k < n; ++k) {
    SEAM_RETURN_IF_ERROR(CheckSameDims(i, x, In(i, k)));
    SEAM_RETURN_IF_ERROR(CheckSameDims(i, u, In(i, n + 1 + k)));
    inputs.push_back(In(i, k).dtype());
    updates.push_back(In(i, n + 1 + k).dtype());
  }
  SEAM_ASSIGN_OR_RETURN(std::vector<int64_t> scatter,
                        IndexBatchDims(i, In(i, n), *vector_dim, to_operand->size()));
  SEAM_RETURN_IF_ERROR(CheckDimList(i, "scatter_dims_to_operand_dims", *to_operand, x.rank()));
  SEAM_RETURN_IF_ERROR(CheckDimList(i, "inserted and batching dimensions", inserted, x.rank()));
  std::vector<int64_t> window;  // operand dims the update windows span
  for (int d = 0; d < x.rank(); ++d) {
    if (!Contains(inserted, d)) window.push_back(x.dim(d));
  }
  if (window_dims->size() != window.size() ||
      u.rank() != static_cast<int>(scatter.size() + window.size())) {
    return Invalid("updates of 'scatter' must have ", scatter.size(), " scatter dimensions and ",
                   window.size(), " window dimensions, got ", Str(u),
                   " with update_window_dims=", List(*window_dims));
  }
  SEAM_RETURN_IF_ERROR(CheckDimList(i, "update_window_dims", *window_dims, u.rank()));
  std::vector<int64_t> update_scatter;
  for (int d = 0, w = 0; d < u.rank(); ++d) {
    if (!Contains(*window_dims, d)) {
      update_scatter.push_back(u.dim(d));
    } else if (u.dim(d) > window[w++]) {
      return Invalid("update window dimension ", d, " of 'scatter' exceeds the operand: ", Str(u),
                     " into ", Str(x));
    }
  }
  if (update_scatter != scatter) {
    return Invalid("scatter dimensions of the updates of 'scatter' must match the indices, got ",
                   Str(u), " for ", Str(In(i, n)));
  }
  SEAM_RETURN_IF_ERROR(CheckReducer(i, a.to_apply, "to_apply", inputs, updates).status());
  return Results(inputs, x.dims());
}

}  // namespace seam::shape_inference_internal
