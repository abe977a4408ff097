// A library call's epilogue rendered for the CPU: a loop over a range of
// the call's result (and a range of columns, its last dimension), row by
// row with an `omp simd` loop along each row,
// computing the epilogue's chain element by element (broadcast operands by
// index) from the call's value just written.
#include "absl/strings/str_cat.h"
#include "seam/codegen/c_types.h"
#include "seam/codegen/elemental.h"
#include "seam/codegen/emit_cpu.h"
#include "seam/util/status_macros.h"

namespace seam::codegen {
namespace {

// The epilogue as kernel IR the elemental emitter reads: its buffers and
// where each value it loads lives.
KernelIr EpilogueIr(const Instruction& call, const fusion::Epilogue& epilogue, const std::string& name,
                    bool excess_precision) {
  KernelIr ir;
  ir.name = name;
  ir.excess_precision = excess_precision;
  auto add = [&](const Instruction* v, Storage storage) {
    KernelBuffer& b = ir.buffers.emplace_back();
    b.value = v;
    b.storage = storage;
    b.dtype = v->shape().dtype();
    b.elements = v->shape().ArrayElementCount();
    ir.storage[v] = storage;
  };
  add(&call, Storage::kInput);
  for (const Instruction* v : epilogue.inputs) add(v, Storage::kInput);
  add(epilogue.result, Storage::kOutput);
  return ir;
}

}  // namespace

absl::StatusOr<std::string> EmitCpuEpilogue(const Instruction& call, const fusion::Epilogue& epilogue,
                                            const std::string& name, bool excess_precision) {
  for (const Instruction* op : epilogue.ops) {
    if (!IsKernelType(op->shape().dtype())) {
      return absl::UnimplementedError(absl::StrCat("no generated code for ", DTypeName(op->shape().dtype())));
    }
  }
  const KernelIr ir = EpilogueIr(call, epilogue, name, excess_precision);
  const std::vector<int64_t>& dims = call.shape().dims();
  const int64_t length = dims.empty() ? 1 : dims.back();
  const std::vector<int64_t> outer(dims.begin(), dims.empty() ? dims.end() : dims.end() - 1);
  const int result = static_cast<int>(ir.buffers.size()) - 1;
  std::string text = absl::StrCat("extern \"C\" __attribute__((visibility(\"default\"))) void ", name,
                                  "(void* const* seam_buffers, int64_t seam_begin, int64_t seam_end, "
                                  "int64_t seam_column_begin, int64_t seam_column_end) {\n");
  for (int k = 0; k <= result; ++k) {
    const std::string type = StorageType(ir.buffers[k].dtype);
    const bool in = k < result;
    // The call's result and the epilogue's may be one array: no __restrict.
    const bool may_alias = k == 0 || k == result;
    absl::StrAppend(&text, "  ", in ? "const " : "", type, may_alias ? "* b" : "* __restrict b", k,
                    " = static_cast<", in ? "const " : "", type, "*>(seam_buffers[", k, "]);\n");
  }
  absl::StrAppend(&text, "  for (int64_t r = seam_begin / ", length, "; r * ", length,
                  " < seam_end; ++r) {\n");
  absl::StrAppend(&text, "    const int64_t c0 = std::max<int64_t>(seam_begin - r * ", length,
                  ", seam_column_begin);\n");
  absl::StrAppend(&text, "    const int64_t c1 = std::min<int64_t>(seam_end - r * ", length,
                  ", seam_column_end);\n");
  absl::StrAppend(&text, "#pragma omp simd\n    for (int64_t c = c0; c < c1; ++c) {\n");
  // The loop body; where its code is otherwise plain, calling the vector
  // twins of exp and tanh.
  std::vector<std::string> body;
  auto write_body = [&](bool twins) -> absl::StatusOr<VectorForm> {
    body.clear();
    MemoryNames names;
    names.buffer = [](int k) { return absl::StrCat("b", k); };
    ElementalEmitter e(ir, names, {epilogue.ops.begin(), epilogue.ops.end()}, &body, 6);
    if (twins) e.UseVectorTwins();
    Index index = e.Delinearize(outer, "r");
    index.push_back("c");
    SEAM_ASSIGN_OR_RETURN(std::string value, e.Value(epilogue.result, index));
    const DType t = epilogue.result->shape().dtype();
    e.Emit(absl::StrCat("b", result, "[r * ", length, " + c] = ", StoreExpr(t, e.Storable(value)),
                        ";"));
    e.Note(ConversionForm(t));
    return e.form();
  };
  SEAM_ASSIGN_OR_RETURN(VectorForm form, write_body(/*twins=*/false));
  if (form == VectorForm::kTwinned) SEAM_RETURN_IF_ERROR(write_body(/*twins=*/true).status());
  for (const std::string& line : body) absl::StrAppend(&text, line, "\n");
  absl::StrAppend(&text, "    }\n  }\n}\n");
  return text;
}

}  // namespace seam::codegen
