// What the single-instruction CPU kernels (op_kernels.h) share: the
// function's opening (typed pointers in0, in1... to the operands and out0,
// out1... to the result's arrays), its lines, and the index arithmetic
// they write with constant shapes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "seam/ir/instruction.h"

namespace seam::codegen {

class OpKernelWriter {
 public:
  // Opens function `name` for `op`. An output that may be the same memory
  // as operand `aliased` (updated in place) is declared without
  // __restrict, as is that operand.
  OpKernelWriter(const Instruction& op, const std::string& name, int aliased = -1);

  void Line(int indent, const std::string& text);
  // The buffer pointers again, for the body of a lambda: a pointer reached
  // through a closure loses __restrict, and loops over it their
  // vectorization.
  void DeclareBuffers(int indent);
  // Opens a loop over `tasks` (a lambda taking seam_begin, seam_end) at
  // `indent`, on the pool when its tasks touch `elements` enough to split
  // (kMinElementsToSplit), else on the calling thread; its body has the
  // buffers declared. Close it with `});`.
  void OpenParallelLoop(int indent, int64_t tasks, int64_t elements);
  // The whole function.
  std::string Finish();

 private:
  std::string text_;
  std::vector<std::string> declarations_;
};

// Row-major strides of `dims`.
std::vector<int64_t> RowMajor(const std::vector<int64_t>& dims);
int64_t Product(const std::vector<int64_t>& dims);

// The coordinates of row-major linear index `linear` over `dims`, as
// expressions.
std::vector<std::string> Coordinates(const std::vector<int64_t>& dims, const std::string& linear);

// sum(coordinates[k] * strides[k]) as an expression ("0" when empty; terms
// with a zero stride or a constant-zero coordinate dropped).
std::string Offset(const std::vector<std::string>& coordinates, const std::vector<int64_t>& strides);

// An element of an integer index array as int64_t (unsigned 64-bit values
// past INT64_MAX read as INT64_MAX, as the interpreter reads them).
std::string IndexLoad(DType type, const std::string& element);

}  // namespace seam::codegen

namespace seam::codegen {

// The emitters, one per op family (EmitCpuOpKernel dispatches).
absl::StatusOr<std::string> EmitGatherKernel(const Instruction& gather, const std::string& name);
absl::StatusOr<std::string> EmitScatterKernel(const Instruction& scatter, const std::string& name);
absl::StatusOr<std::string> EmitReduceWindowKernel(const Instruction& reduce_window,
                                                   const std::string& name);
absl::StatusOr<std::string> EmitSortKernel(const Instruction& sort, const std::string& name);

// Copies operand `in` into `out` on the pool unless they are the same
// memory (an update in place).
void EmitCopyUnlessInPlace(OpKernelWriter& w, const std::string& in, const std::string& out,
                           int64_t elements);

}  // namespace seam::codegen
