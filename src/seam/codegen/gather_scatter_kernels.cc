// gather and scatter as generated CPU code, with XLA's dimension numbers
// (batching dims included) read the way the interpreter reads them: a
// gather clamps each start so its slice lies in the operand; a scatter
// skips an update window that would leave it.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "seam/codegen/c_types.h"
#include "seam/codegen/elemental.h"
#include "seam/codegen/emit_cpu.h"
#include "seam/codegen/op_kernel_writer.h"
#include "seam/util/status_macros.h"

namespace seam::codegen {
namespace {

int64_t PositionOf(const IntList& list, int64_t value) {
  auto it = std::find(list.begin(), list.end(), value);
  return it == list.end() ? -1 : it - list.begin();
}

// Where gather and scatter find a start vector: `indices` (an integer
// array) holds it along `vector_dim` at each batch position, whose
// coordinates the kernel has in variables b0, b1... (the indices'
// dimensions other than vector_dim, in order).
class StartVectors {
 public:
  StartVectors(const Shape& indices, int64_t vector_dim)
      : indices_(indices), vector_dim_(vector_dim), strides_(RowMajor(indices.dims())) {}

  // Batch coordinate variable of indices dimension d (d != vector_dim).
  std::string Batch(int64_t d) const { return absl::StrCat("b", d < vector_dim_ ? d : d - 1); }

  // Component k of the start vector at the current batch position.
  std::string Component(int64_t k) const {
    std::vector<std::string> coordinates;
    for (int d = 0; d < indices_.rank(); ++d) {
      coordinates.push_back(d == vector_dim_ ? std::to_string(k) : Batch(d));
    }
    return IndexLoad(indices_.dtype(), absl::StrCat("in1[", Offset(coordinates, strides_), "]"));
  }

 private:
  const Shape& indices_;
  int64_t vector_dim_;
  std::vector<int64_t> strides_;
};

absl::Status CheckIndices(const Instruction& op, const Shape& indices) {
  if (!IsInteger(indices.dtype())) {
    return absl::UnimplementedError("generated code reads integer indices only");
  }
  for (const Instruction* o : op.operands()) {
    if (!o->shape().IsArray() || !IsKernelType(o->shape().dtype())) {
      return absl::UnimplementedError("generated code takes arrays of real types only");
    }
  }
  return absl::OkStatus();
}

// Opens a loop nest over `sizes` (variables named prefix0, prefix1...;
// dimensions of size 1 get no loop and the coordinate 0), the innermost
// vectorized. Returns the coordinates; closes with CloseLoops.
std::vector<std::string> OpenLoops(OpKernelWriter& w, const std::vector<int64_t>& sizes,
                                   const std::string& prefix, int& indent) {
  std::vector<std::string> coordinates;
  int innermost = -1;
  for (size_t k = 0; k < sizes.size(); ++k) {
    if (sizes[k] != 1) innermost = static_cast<int>(k);
  }
  for (size_t k = 0; k < sizes.size(); ++k) {
    if (sizes[k] == 1) {
      coordinates.push_back("0");
      continue;
    }
    std::string v = absl::StrCat(prefix, k);
    if (static_cast<int>(k) == innermost) w.Line(indent, "#pragma omp simd");
    w.Line(indent, absl::StrCat("for (int64_t ", v, " = 0; ", v, " < ", sizes[k], "; ++", v, ") {"));
    indent += 2;
    coordinates.push_back(v);
  }
  return coordinates;
}

void CloseLoops(OpKernelWriter& w, const std::vector<int64_t>& sizes, int& indent) {
  for (int64_t size : sizes) {
    if (size == 1) continue;
    indent -= 2;
    w.Line(indent, "}");
  }
}

}  // namespace

// Each batch position (the result's non-offset dimensions) reads a start
// vector, clamps it, and copies its slice; positions run in parallel.
absl::StatusOr<std::string> EmitGatherKernel(const Instruction& gather, const std::string& name) {
  const Attributes& a = gather.attrs();
  const Shape& operand = gather.operand(0)->shape();
  const Shape& indices = gather.operand(1)->shape();
  const Shape& out = gather.shape();
  SEAM_RETURN_IF_ERROR(CheckIndices(gather, indices));
  const IntList offset_dims = a.offset_dims.value_or(IntList{});
  const IntList collapsed = a.collapsed_slice_dims.value_or(IntList{});
  const IntList start_map = a.start_index_map.value_or(IntList{});
  const IntList operand_batching = a.operand_batching_dims.value_or(IntList{});
  const IntList indices_batching = a.start_indices_batching_dims.value_or(IntList{});
  const IntList slice_sizes = a.slice_sizes.value_or(IntList{});
  const int64_t vector_dim = a.index_vector_dim.value_or(indices.rank());
  if (static_cast<int>(slice_sizes.size()) != operand.rank()) {
    return absl::InvalidArgumentError("gather: slice_sizes do not match the operand's rank");
  }
  std::vector<int64_t> window_dims, batch_sizes, batch_out_dims, window_sizes;
  for (int d = 0; d < operand.rank(); ++d) {
    if (PositionOf(collapsed, d) < 0 && PositionOf(operand_batching, d) < 0) window_dims.push_back(d);
  }
  for (int d = 0; d < out.rank(); ++d) {
    if (PositionOf(offset_dims, d) >= 0) {
      window_sizes.push_back(out.dim(d));
    } else {
      batch_out_dims.push_back(d);
      batch_sizes.push_back(out.dim(d));
    }
  }
  if (window_dims.size() != window_sizes.size()) {
    return absl::InvalidArgumentError("gather: offset_dims do not match the slice's dimensions");
  }
  const std::vector<int64_t> in_strides = RowMajor(operand.dims()), out_strides = RowMajor(out.dims());
  StartVectors starts(indices, vector_dim);

  OpKernelWriter w(gather, name);
  w.OpenParallelLoop(2, Product(batch_sizes), out.ElementCount().value_or(0));
  w.Line(4, "for (int64_t g = seam_begin; g < seam_end; ++g) {");
  std::vector<std::string> batch = Coordinates(batch_sizes, "g");
  for (size_t j = 0; j < batch.size(); ++j) {
    w.Line(6, absl::StrCat("const int64_t b", j, " = ", batch[j], ";"));
  }
  std::vector<std::string> start(operand.rank(), "0");
  for (int d = 0; d < operand.rank(); ++d) {
    std::string value;
    if (int64_t k = PositionOf(start_map, d); k >= 0) value = starts.Component(k);
    if (int64_t k = PositionOf(operand_batching, d); k >= 0) value = starts.Batch(indices_batching[k]);
    if (value.empty()) continue;
    start[d] = absl::StrCat("s", d);
    w.Line(6, absl::StrCat("const int64_t s", d, " = std::clamp<int64_t>(", value, ", 0, ",
                           operand.dim(d) - slice_sizes[d], ");"));
  }
  std::vector<std::string> batch_vars;
  std::vector<int64_t> batch_strides;
  for (size_t j = 0; j < batch_out_dims.size(); ++j) {
    batch_vars.push_back(absl::StrCat("b", j));
    batch_strides.push_back(out_strides[batch_out_dims[j]]);
  }
  w.Line(6, absl::StrCat("const int64_t from = ", Offset(start, in_strides),
                         ", to = ", Offset(batch_vars, batch_strides), ";"));
  int indent = 6;
  std::vector<std::string> window = OpenLoops(w, window_sizes, "w", indent);
  std::vector<int64_t> window_in_strides, window_out_strides;
  for (size_t k = 0; k < window_dims.size(); ++k) {
    window_in_strides.push_back(in_strides[window_dims[k]]);
    window_out_strides.push_back(out_strides[offset_dims[k]]);
  }
  w.Line(indent, absl::StrCat("out0[to + ", Offset(window, window_out_strides), "] = in0[from + ",
                              Offset(window, window_in_strides), "];"));
  CloseLoops(w, window_sizes, indent);
  w.Line(4, "}");
  w.Line(2, "});");
  return w.Finish();
}

// The operand is copied to the result (unless updated in place); then each
// scatter position (the updates' non-window dimensions) reads a start
// vector and combines its window into the result. Positions run in order;
// a window's elements run in parallel when no two positions can reach one
// result element through different window coordinates (every window
// dimension has size 1 or the operand's whole extent).
absl::StatusOr<std::string> EmitScatterKernel(const Instruction& scatter, const std::string& name) {
  if (scatter.operand_count() != 3) {
    return absl::UnimplementedError("generated code scatters one operand at a time");
  }
  const Attributes& a = scatter.attrs();
  const Shape& operand = scatter.operand(0)->shape();
  const Shape& indices = scatter.operand(1)->shape();
  const Shape& updates = scatter.operand(2)->shape();
  SEAM_RETURN_IF_ERROR(CheckIndices(scatter, indices));
  const IntList update_window_dims = a.update_window_dims.value_or(IntList{});
  const IntList inserted = a.inserted_window_dims.value_or(IntList{});
  const IntList to_operand = a.scatter_dims_to_operand_dims.value_or(IntList{});
  const IntList input_batching = a.input_batching_dims.value_or(IntList{});
  const IntList indices_batching = a.scatter_indices_batching_dims.value_or(IntList{});
  const int64_t vector_dim = a.index_vector_dim.value_or(indices.rank());
  const DType type = operand.dtype();
  SEAM_ASSIGN_OR_RETURN(std::string combine, ScalarLambda(**a.to_apply, type, "combine"));

  std::vector<int64_t> window_dims, window_sizes, scatter_sizes, scatter_update_dims;
  std::vector<int64_t> extent(operand.rank(), 1);  // of the window along each operand dim
  for (int d = 0; d < operand.rank(); ++d) {
    if (PositionOf(inserted, d) < 0 && PositionOf(input_batching, d) < 0) window_dims.push_back(d);
  }
  if (window_dims.size() != update_window_dims.size()) {
    return absl::InvalidArgumentError("scatter: update_window_dims do not match the operand");
  }
  bool parallel_window = true;
  for (size_t k = 0; k < window_dims.size(); ++k) {
    int64_t size = updates.dim(static_cast<int>(update_window_dims[k]));
    extent[window_dims[k]] = size;
    window_sizes.push_back(size);
    parallel_window &= size == 1 || size == operand.dim(static_cast<int>(window_dims[k]));
  }
  for (int d = 0; d < updates.rank(); ++d) {
    if (PositionOf(update_window_dims, d) >= 0) continue;
    scatter_update_dims.push_back(d);
    scatter_sizes.push_back(updates.dim(d));
  }
  const std::vector<int64_t> o_strides = RowMajor(operand.dims()), u_strides = RowMajor(updates.dims());
  const int64_t window = Product(window_sizes);
  StartVectors starts(indices, vector_dim);

  OpKernelWriter w(scatter, name, /*aliased=*/0);
  w.Line(0, combine);
  EmitCopyUnlessInPlace(w, "in0", "out0", operand.ElementCount().value_or(0));
  w.Line(2, "auto scatter_window = [&](int64_t s, int64_t w0, int64_t w1) {");
  w.DeclareBuffers(4);
  std::vector<std::string> batch = Coordinates(scatter_sizes, "s");
  std::vector<int64_t> batch_strides;
  for (size_t j = 0; j < batch.size(); ++j) {
    w.Line(4, absl::StrCat("const int64_t b", j, " = ", batch[j], ";"));
    batch[j] = absl::StrCat("b", j);
    batch_strides.push_back(u_strides[scatter_update_dims[j]]);
  }
  std::vector<std::string> start(operand.rank(), "0");
  for (int d = 0; d < operand.rank(); ++d) {
    std::string value;
    if (int64_t k = PositionOf(to_operand, d); k >= 0) value = starts.Component(k);
    if (int64_t k = PositionOf(input_batching, d); k >= 0) value = starts.Batch(indices_batching[k]);
    if (value.empty()) continue;
    start[d] = absl::StrCat("s", d);
    w.Line(4, absl::StrCat("const int64_t s", d, " = ", value, ";"));
    w.Line(4, absl::StrCat("if (s", d, " < 0 || s", d, " > ", operand.dim(d) - extent[d],
                           ") return;"));
  }
  w.Line(4, absl::StrCat("const int64_t to = ", Offset(start, o_strides),
                         ", from = ", Offset(batch, batch_strides), ";"));
  w.Line(4, "for (int64_t u = w0; u < w1; ++u) {");
  std::vector<std::string> at = Coordinates(window_sizes, "u");
  std::vector<int64_t> window_o_strides, window_u_strides;
  for (size_t k = 0; k < window_dims.size(); ++k) {
    window_o_strides.push_back(o_strides[window_dims[k]]);
    window_u_strides.push_back(u_strides[update_window_dims[k]]);
  }
  std::string target = absl::StrCat("out0[to + ", Offset(at, window_o_strides), "]");
  std::string update = absl::StrCat("in2[from + ", Offset(at, window_u_strides), "]");
  w.Line(6, absl::StrCat(target, " = ", StoreExpr(type, absl::StrCat("combine(", LoadExpr(type, target),
                                                                      ", ", LoadExpr(type, update), ")")),
                         ";"));
  w.Line(4, "}");
  w.Line(2, "};");
  const int64_t positions = Product(scatter_sizes);
  if (parallel_window && window >= kMinElementsToSplit) {
    w.Line(2, absl::StrCat("seam_parallel(seam_threads, ", window,
                           ", [&](int64_t seam_begin, int64_t seam_end, int) {"));
    w.Line(4, absl::StrCat("for (int64_t s = 0; s < ", positions,
                           "; ++s) scatter_window(s, seam_begin, seam_end);"));
    w.Line(2, "});");
  } else {
    w.Line(2, absl::StrCat("for (int64_t s = 0; s < ", positions, "; ++s) scatter_window(s, 0, ",
                           window, ");"));
  }
  return w.Finish();
}

}  // namespace seam::codegen
