#include "seam/codegen/op_kernel_writer.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "seam/codegen/c_types.h"
#include "seam/codegen/emit_cpu.h"

namespace seam::codegen {

OpKernelWriter::OpKernelWriter(const Instruction& op, const std::string& name, int aliased) {
  Line(0, absl::StrCat("extern \"C\" __attribute__((visibility(\"default\"))) void ", name,
                       "(void* const* seam_buffers, const seam_pool* seam_threads) {"));
  Line(2, "(void)seam_threads;");
  int k = 0;
  for (int i = 0; i < op.operand_count(); ++i, ++k) {
    std::string type = StorageType(op.operand(i)->shape().dtype());
    declarations_.push_back(absl::StrCat("const ", type, "* ", i == aliased ? "" : "__restrict ",
                                         "in", i, " = static_cast<const ", type,
                                         "*>(seam_buffers[", k, "]);"));
  }
  std::vector<const Shape*> outputs;
  if (op.shape().IsTuple()) {
    for (const Shape& element : op.shape().tuple_shapes()) outputs.push_back(&element);
  } else {
    outputs.push_back(&op.shape());
  }
  for (size_t o = 0; o < outputs.size(); ++o, ++k) {
    std::string type = StorageType(outputs[o]->dtype());
    declarations_.push_back(absl::StrCat(type, "* ", aliased >= 0 && o == 0 ? "" : "__restrict ",
                                         "out", o, " = static_cast<", type, "*>(seam_buffers[", k,
                                         "]);"));
  }
  DeclareBuffers(2);
}

void OpKernelWriter::DeclareBuffers(int indent) {
  for (const std::string& declaration : declarations_) Line(indent, declaration);
}

void OpKernelWriter::OpenParallelLoop(int indent, int64_t tasks, int64_t elements) {
  Line(indent, absl::StrCat(elements >= kMinElementsToSplit ? "seam_parallel(seam_threads, "
                                                            : "seam_serial(",
                            tasks, ", [&](int64_t seam_begin, int64_t seam_end, int) {"));
  DeclareBuffers(indent + 2);
}

void OpKernelWriter::Line(int indent, const std::string& text) {
  absl::StrAppend(&text_, std::string(indent, ' '), text, "\n");
}

std::string OpKernelWriter::Finish() {
  Line(0, "}");
  return std::move(text_);
}

void EmitCopyUnlessInPlace(OpKernelWriter& w, const std::string& in, const std::string& out,
                           int64_t elements) {
  constexpr int64_t kPiece = 1 << 16;
  w.Line(2, absl::StrCat("if (", out, " != ", in, ") {"));
  w.OpenParallelLoop(4, (elements + kPiece - 1) / kPiece, elements);
  w.Line(6, absl::StrCat("const int64_t lo = seam_begin * ", kPiece, ", hi = std::min<int64_t>(",
                         elements, ", seam_end * ", kPiece, ");"));
  w.Line(6, absl::StrCat("std::memcpy(", out, " + lo, ", in, " + lo, (hi - lo) * sizeof(", out,
                         "[0]));"));
  w.Line(4, "});");
  w.Line(2, "}");
}

std::vector<int64_t> RowMajor(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int d = static_cast<int>(dims.size()) - 2; d >= 0; --d) strides[d] = strides[d + 1] * dims[d + 1];
  return strides;
}

int64_t Product(const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= d;
  return p;
}

std::vector<std::string> Coordinates(const std::vector<int64_t>& dims, const std::string& linear) {
  std::vector<int64_t> strides = RowMajor(dims);
  std::vector<std::string> out;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1) {
      out.push_back("0");
      continue;
    }
    std::string quotient = strides[d] == 1 ? linear : absl::StrCat("(", linear, " / ", strides[d], ")");
    out.push_back(d == 0 ? quotient : absl::StrCat("(", quotient, " % ", dims[d], ")"));
  }
  return out;
}

std::string Offset(const std::vector<std::string>& coordinates, const std::vector<int64_t>& strides) {
  std::vector<std::string> terms;
  for (size_t k = 0; k < coordinates.size(); ++k) {
    if (strides[k] == 0 || coordinates[k] == "0") continue;
    terms.push_back(strides[k] == 1 ? coordinates[k]
                                    : absl::StrCat(coordinates[k], " * ", strides[k]));
  }
  return terms.empty() ? "0" : absl::StrCat("(", absl::StrJoin(terms, " + "), ")");
}

std::string IndexLoad(DType type, const std::string& element) {
  if (type == DType::kU64) {
    return absl::StrCat("static_cast<int64_t>(std::min<uint64_t>(", element,
                        ", uint64_t(INT64_MAX)))");
  }
  return absl::StrCat("static_cast<int64_t>(", element, ")");
}

}  // namespace seam::codegen
