// The module verifier: structure, operand counts and shapes, checked before
// anything computes with a module (after parsing and, optionally, after every
// pass).
#pragma once

#include "absl/status/status.h"
#include "seam/ir/module.h"

namespace seam {

// Checks a whole module and returns the first error found, as an
// InvalidArgument that names the instruction (`'add.3': ...`) and carries its
// source location (as an error-location payload). Checks, in order: an entry
// computation; per computation a root, parameters numbered 0..n-1 without
// gaps or duplicates (reported at the parameter past a gap), operands from
// the same computation, existing callees, no cycles among instructions; an
// acyclic call graph (reported at the call closing a cycle, naming all of
// it: "call cycle: f -> g -> f"); per instruction the operand count and the
// declared shape against InferShape (ignoring layouts).
absl::Status VerifyModule(const Module& module);

}  // namespace seam
