// sort as generated CPU code: every 1-D slice along the sort dimension is
// sorted by the comparator (inlined, reading each operand at two
// positions) with the interpreter's stable merge sort, and every operand
// is permuted alike; slices run in parallel.
#include <bit>

#include "absl/strings/str_cat.h"
#include "seam/codegen/c_types.h"
#include "seam/codegen/elemental.h"
#include "seam/codegen/op_kernel_writer.h"
#include "seam/util/status_macros.h"

namespace seam::codegen {

absl::StatusOr<std::string> EmitSortKernel(const Instruction& sort, const std::string& name) {
  const Shape& shape = sort.operand(0)->shape();
  const int64_t axis = sort.attrs().dimensions.value_or(IntList{0}).at(0);
  if (shape.rank() == 0 || axis < 0 || axis >= shape.rank()) {
    return absl::UnimplementedError("generated code sorts along a dimension of an array");
  }
  std::vector<std::string> parameters;
  for (int k = 0; k < sort.operand_count(); ++k) {
    if (!IsKernelType(sort.operand(k)->shape().dtype())) {
      return absl::UnimplementedError("generated code sorts arrays of real types only");
    }
    parameters.push_back(absl::StrCat("x", k, "a"));
    parameters.push_back(absl::StrCat("x", k, "b"));
  }
  std::vector<std::string> body;
  SEAM_ASSIGN_OR_RETURN(std::string less,
                        ScalarFunctionBody(**sort.attrs().to_apply, parameters, &body, 12));
  const int64_t length = shape.dim(static_cast<int>(axis));
  int64_t inner = 1;
  for (int d = static_cast<int>(axis) + 1; d < shape.rank(); ++d) inner *= shape.dim(d);
  const int64_t slices = shape.ElementCount().value_or(0) / std::max<int64_t>(1, length);

  OpKernelWriter w(sort, name);
  const int64_t passes = std::bit_width(static_cast<uint64_t>(length));
  w.OpenParallelLoop(2, slices, shape.ElementCount().value_or(0) * passes);
  w.Line(4, absl::StrCat("std::vector<int64_t> items(", length, "), scratch(", length, ");"));
  w.Line(4, "for (int64_t slice = seam_begin; slice < seam_end; ++slice) {");
  w.Line(6, absl::StrCat("const int64_t base = (slice / ", inner, ") * ", length * inner,
                         " + slice % ", inner, ";"));
  w.Line(6, absl::StrCat("for (int64_t k = 0; k < ", length, "; ++k) items[k] = base + k * ", inner,
                         ";"));
  w.Line(6, "seam_merge_sort(items.data(), scratch.data(), items.size(), [&](int64_t a, int64_t b) {");
  for (int k = 0; k < sort.operand_count(); ++k) {
    DType t = sort.operand(k)->shape().dtype();
    for (const char* at : {"a", "b"}) {
      w.Line(8, absl::StrCat("const ", ComputeType(t), " x", k, at, " = ",
                             LoadExpr(t, absl::StrCat("in", k, "[", at, "]")), ";"));
    }
  }
  for (const std::string& line : body) w.Line(0, line);
  w.Line(8, absl::StrCat("return static_cast<bool>(", less, ");"));
  w.Line(6, "});");
  for (int k = 0; k < sort.operand_count(); ++k) {
    w.Line(6, absl::StrCat("for (int64_t k = 0; k < ", length, "; ++k) out", k, "[base + k * ",
                           inner, "] = in", k, "[items[k]];"));
  }
  w.Line(4, "}");
  w.Line(2, "});");
  return w.Finish();
}

}  // namespace seam::codegen
