// reduce-window as generated CPU code: every result element folds its
// window of the operand, from the init value, skipping positions that fall
// into padding or between base-dilated elements; elements run in parallel.
#include "absl/strings/str_cat.h"
#include "seam/codegen/c_types.h"
#include "seam/codegen/elemental.h"
#include "seam/codegen/op_kernel_writer.h"
#include "seam/util/status_macros.h"

namespace seam::codegen {

absl::StatusOr<std::string> EmitReduceWindowKernel(const Instruction& reduce_window,
                                                   const std::string& name) {
  if (reduce_window.operand_count() != 2 || !reduce_window.shape().IsArray()) {
    return absl::UnimplementedError("generated code reduces one operand's windows at a time");
  }
  const Shape& operand = reduce_window.operand(0)->shape();
  const Shape& out = reduce_window.shape();
  const DType type = out.dtype();
  if (!IsCodegenType(type) || !reduce_window.attrs().window) {
    return absl::UnimplementedError("generated code reduces windows of real types only");
  }
  const Window& window = *reduce_window.attrs().window;
  if (static_cast<int>(window.dims.size()) != operand.rank()) {
    return absl::InvalidArgumentError("reduce-window: the window's rank is not the operand's");
  }
  SEAM_ASSIGN_OR_RETURN(std::string combine,
                        ScalarLambda(**reduce_window.attrs().to_apply, type, "combine"));
  const std::vector<int64_t> strides = RowMajor(operand.dims());

  OpKernelWriter w(reduce_window, name);
  w.Line(0, combine);
  w.Line(2, absl::StrCat("const ", ComputeType(type), " init = ", LoadExpr(type, "in1[0]"), ";"));
  int64_t window_elements = 1;
  for (const WindowDim& wd : window.dims) window_elements *= wd.size;
  w.OpenParallelLoop(2, out.ElementCount().value_or(0),
                     out.ElementCount().value_or(0) * window_elements);
  w.Line(4, "for (int64_t o = seam_begin; o < seam_end; ++o) {");
  std::vector<std::string> at = Coordinates(out.dims(), "o");
  w.Line(6, "auto acc = init;");
  int indent = 6;
  std::vector<std::string> position;
  for (int d = 0; d < operand.rank(); ++d) {
    const WindowDim& wd = window.dims[d];
    std::string p = absl::StrCat("p", d);
    if (wd.size != 1) {
      w.Line(indent, absl::StrCat("for (int64_t k", d, " = 0; k", d, " < ", wd.size, "; ++k", d, ") {"));
      indent += 2;
    }
    std::string k = wd.size != 1 ? absl::StrCat("k", d, " * ", wd.rhs_dilation) : "0";
    std::string dilated = absl::StrCat(p, "_dilated");
    w.Line(indent, absl::StrCat("const int64_t ", dilated, " = ", at[d], " * ", wd.stride, " + ", k,
                                " - ", wd.pad_low, ";"));
    // A skipped position continues the loop of its own dimension.
    std::string skip = wd.size != 1 ? "continue;" : "goto next;";
    if (wd.lhs_dilation != 1) {
      w.Line(indent, absl::StrCat("if (", dilated, " < 0 || ", dilated, " % ", wd.lhs_dilation,
                                  " != 0) ", skip));
    }
    w.Line(indent, absl::StrCat("const int64_t ", p, " = ", dilated,
                                wd.lhs_dilation != 1 ? absl::StrCat(" / ", wd.lhs_dilation) : "", ";"));
    w.Line(indent, absl::StrCat("if (", p, " < 0 || ", p, " >= ", operand.dim(d), ") ", skip));
    position.push_back(p);
  }
  w.Line(indent, absl::StrCat("acc = combine(acc, ", LoadExpr(type, absl::StrCat("in0[", Offset(position, strides), "]")), ");"));
  for (int d = operand.rank() - 1; d >= 0; --d) {
    if (window.dims[d].size == 1) continue;
    indent -= 2;
    w.Line(indent, "}");
  }
  w.Line(4, "next:");
  w.Line(6, absl::StrCat("out0[o] = ", StoreExpr(type, "acc"), ";"));
  w.Line(4, "}");
  w.Line(2, "});");
  return w.Finish();
}

}  // namespace seam::codegen
