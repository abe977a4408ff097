// How generated scalar code meets the CPU's loop vectorizer. The prelude's
// exp and tanh have vector-ABI twins (seam_exp_simd, seam_tanh_simd) that
// an `omp simd` loop may call; GCC 12 vectorizes such a loop only when
// nothing beside the call branches, selects or calls a function it cannot
// vectorize, and otherwise leaves it scalar. So a vectorized loop calls the
// twins only when everything else in it is among the operations measured
// to vectorize beside them (kPlain). Each piece of generated code carries
// its form as it is generated (each op's scalar expression, each
// conversion and literal, each index the elemental emitter computes); no
// emitted text is read back.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace seam::codegen {

enum class VectorForm : uint8_t {
  // Float arithmetic and casts, comparisons, sqrt, fma, abs, conversions
  // to and from bf16.
  kPlain,
  // Calls a function with a vector twin; otherwise plain.
  kTwinned,
  // A branch, a select, a logical && or ||, or a call to anything else
  // (integer helpers, libm, casts to integer types): the loop keeps the
  // inline functions.
  kBranchy,
};

// The form of two pieces of code together.
inline VectorForm operator|(VectorForm a, VectorForm b) { return std::max(a, b); }
inline VectorForm& operator|=(VectorForm& a, VectorForm b) { return a = a | b; }

// The form of a call to `fn`, or of a functional cast when `fn` names a type.
VectorForm CallForm(absl::string_view fn);

// What a loop calls for `fn`: its vector twin when `twins` (and it has
// one), else `fn`.
std::string CalledFunction(absl::string_view fn, bool twins);

}  // namespace seam::codegen
