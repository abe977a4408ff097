// The module verifier: structure, operand counts and shapes, checked before
// anything computes with a module (after parsing and, optionally, after every
// pass).
#pragma once

#include "absl/status/status.h"
#include "seam/ir/module.h"

namespace seam {

// Checks a whole module and returns the first error found, as an
// InvalidArgument that names the instruction (`'add.3': ...`) and carries its
// source location (see error_location.h). Checks, in order: an entry
// computation; non-null called computations; an acyclic call graph; per
// computation a root, parameters numbered 0..n-1 without gaps or duplicates,
// operands from the same computation, no cycles among instructions; per
// instruction the operand count and the declared shape against InferShape
// (ignoring layouts).
absl::Status VerifyModule(const Module& module);

}  // namespace seam
