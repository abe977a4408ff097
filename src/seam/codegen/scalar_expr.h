// The scalar expression of every elementwise op in generated code: one
// table mirroring the interpreter's semantics (eval/elementwise.cc,
// eval/convert.cc), built on the same helpers (eval/scalar_ops.h is part of
// every generated file), so compiled and interpreted results agree.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "seam/ir/instruction.h"

namespace seam::codegen {

// The C++ expression computing `op` from its operands' compute values
// `args`, as a compute value of op's element type (not yet rounded for
// bf16/f16). Unimplemented for ops generated code does not handle.
absl::StatusOr<std::string> ScalarExpr(const Instruction& op, const std::vector<std::string>& args);

}  // namespace seam::codegen
