#include "seam/codegen/op_kernels.h"

#include "absl/strings/str_cat.h"
#include "seam/codegen/c_types.h"
#include "seam/codegen/op_kernel_writer.h"

namespace seam::codegen {
namespace {

// The operand copied to the result unless updated in place, then the
// update's rows written at the clamped starts, rows in parallel.
absl::StatusOr<std::string> EmitUpdateSliceKernel(const Instruction& dus, const std::string& name) {
  const Shape& operand = dus.operand(0)->shape();
  const Shape& update = dus.operand(1)->shape();
  if (!IsKernelType(operand.dtype()) || dus.operand_count() != 2 + operand.rank()) {
    return absl::UnimplementedError("generated code updates arrays of real types only");
  }
  for (int k = 2; k < dus.operand_count(); ++k) {
    if (!IsInteger(dus.operand(k)->shape().dtype())) {
      return absl::UnimplementedError("generated code reads integer starts only");
    }
  }
  OpKernelWriter w(dus, name, /*aliased=*/0);
  EmitCopyUnlessInPlace(w, "in0", "out0", operand.ElementCount().value_or(0));
  std::vector<std::string> start;
  for (int d = 0; d < operand.rank(); ++d) {
    w.Line(2, absl::StrCat("const int64_t s", d, " = std::clamp<int64_t>(",
                           IndexLoad(dus.operand(2 + d)->shape().dtype(), absl::StrCat("in", 2 + d, "[0]")),
                           ", 0, ", operand.dim(d) - update.dim(d), ");"));
    start.push_back(absl::StrCat("s", d));
  }
  if (operand.rank() == 0) {
    w.Line(2, "out0[0] = in1[0];");
    return w.Finish();
  }
  std::vector<int64_t> rows_dims(update.dims().begin(), update.dims().end() - 1);
  const int64_t row = update.dims().back();
  w.OpenParallelLoop(2, Product(rows_dims), Product(update.dims()));
  w.Line(4, "for (int64_t r = seam_begin; r < seam_end; ++r) {");
  std::vector<std::string> rows = Coordinates(rows_dims, "r"), at;
  for (size_t d = 0; d < rows.size(); ++d) at.push_back(absl::StrCat("(s", d, " + ", rows[d], ")"));
  at.push_back(start.back());  // the row's first element
  w.Line(6, absl::StrCat("const int64_t to = ", Offset(at, RowMajor(operand.dims())), ";"));
  w.Line(6, "#pragma omp simd");
  w.Line(6, absl::StrCat("for (int64_t c = 0; c < ", row, "; ++c) out0[to + c] = in1[r * ", row,
                         " + c];"));
  w.Line(4, "}");
  w.Line(2, "});");
  return w.Finish();
}

// Word i of the bits is the documented stream's word i (the interpreter's
// scalar function, compiled in); the state advances by the words drawn.
absl::StatusOr<std::string> EmitRngBitGeneratorKernel(const Instruction& rng, const std::string& name) {
  const Shape& state = rng.operand(0)->shape();
  if (!rng.shape().IsTuple() || rng.shape().tuple_shapes().size() != 2 ||
      state.dtype() != DType::kU64 || state.ElementCount().value_or(0) < 1 ||
      !IsInteger(rng.shape().tuple_shapes()[1].dtype())) {
    return absl::UnimplementedError("generated code draws integer bits from a u64 state");
  }
  const int64_t words = state.ElementCount().value_or(0);
  const int64_t drawn = rng.shape().tuple_shapes()[1].ElementCount().value_or(0);
  const std::string bits_type = StorageType(rng.shape().tuple_shapes()[1].dtype());
  OpKernelWriter w(rng, name);
  w.Line(2, "const uint64_t key = in0[0];");
  w.Line(2, words > 1 ? "const uint64_t counter = in0[1];" : "const uint64_t counter = 0;");
  w.OpenParallelLoop(2, (drawn + 4095) / 4096, drawn);
  w.Line(4, absl::StrCat("for (int64_t i = seam_begin * 4096; i < std::min<int64_t>(", drawn,
                         ", seam_end * 4096); ++i) {"));
  w.Line(6, absl::StrCat("out1[i] = static_cast<", bits_type,
                         ">(seam::scalar::RngBitWord(key, counter, static_cast<uint64_t>(i)));"));
  w.Line(4, "}");
  w.Line(2, "});");
  w.Line(2, absl::StrCat("for (int64_t k = 0; k < ", words, "; ++k) out0[k] = in0[k];"));
  w.Line(2, absl::StrCat("out0[", words > 1 ? 1 : 0, "] = ", words > 1 ? "counter" : "key", " + ",
                         drawn, "ull;"));
  return w.Finish();
}

}  // namespace

absl::StatusOr<std::string> EmitCpuOpKernel(const Instruction& op, const std::string& name) {
  if (op.shape().HasDynamicDims()) {
    return absl::UnimplementedError("generated code has static shapes only");
  }
  switch (op.opcode()) {
    case Opcode::kGather: return EmitGatherKernel(op, name);
    case Opcode::kScatter: return EmitScatterKernel(op, name);
    case Opcode::kDynamicUpdateSlice: return EmitUpdateSliceKernel(op, name);
    case Opcode::kReduceWindow: return EmitReduceWindowKernel(op, name);
    case Opcode::kRngBitGenerator: return EmitRngBitGeneratorKernel(op, name);
    case Opcode::kSort: return EmitSortKernel(op, name);
    default:
      return absl::UnimplementedError(
          absl::StrCat("no generated code for '", OpcodeName(op.opcode()), "'"));
  }
}

int InPlaceOperand(const Instruction& op) {
  switch (op.opcode()) {
    case Opcode::kScatter:
    case Opcode::kDynamicUpdateSlice:
      return 0;
    default:
      return -1;
  }
}

}  // namespace seam::codegen
