// The scalar expression of every elementwise op in generated code: one
// table mirroring the interpreter's elementwise and convert semantics,
// built on the interpreter's own scalar helpers (part of every generated
// file), so compiled and interpreted results agree. Each expression carries
// its vector form.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "seam/codegen/vector_form.h"
#include "seam/ir/instruction.h"

namespace seam::codegen {

// A C++ expression and how it meets the CPU's vectorizer.
struct ScalarCode {
  std::string text;
  VectorForm form = VectorForm::kPlain;
};

// The C++ expression computing `op` from its operands' compute values
// `args`, as a compute value of op's element type (not yet rounded for
// bf16/f16). Unimplemented for ops generated code does not handle.
absl::StatusOr<std::string> ScalarExpr(const Instruction& op, const std::vector<std::string>& args);

// The same with its form; `twins`: exp and tanh call their vector twins.
absl::StatusOr<ScalarCode> ScalarCodeOf(const Instruction& op, const std::vector<std::string>& args,
                                        bool twins = false);

}  // namespace seam::codegen
