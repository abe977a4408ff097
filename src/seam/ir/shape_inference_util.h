// Private to shape inference: the helpers its op-family files share, and each
// family's entry point. Messages name the opcode (not the instruction: the
// verifier adds that) and say what was expected.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "seam/ir/computation.h"
#include "seam/ir/instruction.h"
#include "seam/ir/shape.h"

namespace seam::shape_inference_internal {

// An inferred shape, std::nullopt where Seam does not infer, or the reason
// the operands and attributes do not fit the op.
using Inferred = absl::StatusOr<std::optional<Shape>>;

// ---- Op families (one file each), dispatched on OpcodeCategory ----------

// Elementwise ops and the data movement that rearranges one array, gather
// and scatter aside (shape_inference_elementwise.cc).
Inferred InferElementwise(const Instruction& i);
Inferred InferDataMovement(const Instruction& i);
// Gather and scatter (shape_inference_gather_scatter.cc).
Inferred InferGather(const Instruction& i);
Inferred InferScatter(const Instruction& i);
// Reductions, windows, dot, convolution and composite ops
// (shape_inference_reduction.cc).
Inferred InferReduction(const Instruction& i);
Inferred InferLibrary(const Instruction& i);
Inferred InferComposite(const Instruction& i);
// topk, cholesky, triangular-solve and fft (shape_inference_linalg.cc).
Inferred InferLinearAlgebra(const Instruction& i);
// Parameters, constants, tuples, calls and control flow
// (shape_inference_control.cc).
Inferred InferControl(const Instruction& i);
// Collectives and opaque ops: what is fixed whatever the devices or the
// target (shape_inference_collective.cc).
Inferred InferCollective(const Instruction& i);
Inferred InferOpaque(const Instruction& i);

// ---- Messages ------------------------------------------------------------

template <typename... Args>
absl::Status Invalid(const Args&... args) {
  return absl::InvalidArgumentError(absl::StrCat(args...));
}

inline std::string Str(const Shape& s) { return s.ToString(/*with_layout=*/false); }
inline std::string List(const IntList& l) {
  return absl::StrCat("{", absl::StrJoin(l, ","), "}");
}
// The opcode, quoted: 'add'.
inline std::string Op(const Instruction& i) {
  return absl::StrCat("'", OpcodeName(i.opcode()), "'");
}
absl::Status MissingAttribute(const Instruction& i, absl::string_view name);
absl::Status Overflow(const Instruction& i);  // a result dimension overflows

// ---- Operands, attributes and dimension lists ----------------------------

inline const Shape& In(const Instruction& i, int k) { return i.operand(k)->shape(); }
inline IntList Concat(IntList a, const IntList& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// f8 / f4 types are opaque to Seam's arithmetic but are floats to XLA.
bool FloatLike(DType t);
bool SameIgnoringFpPrecision(DType a, DType b);

template <typename T>
absl::StatusOr<const T*> Require(const Instruction& i, const std::optional<T>& attr,
                                 absl::string_view name) {
  if (!attr.has_value()) return MissingAttribute(i, name);
  return &*attr;
}

// `dims` names distinct dimensions of a rank-`rank` shape.
absl::Status CheckDimList(const Instruction& i, absl::string_view what, const IntList& dims,
                          int64_t rank);

// Operands `a` and `b` of `i` have the same dimensions.
absl::Status CheckSameDims(const Instruction& i, const Shape& a, const Shape& b);

// For ops whose result the operands do not determine (convert's type,
// broadcast's new dims...): the declared shape supplies it, if an array.
absl::StatusOr<const Shape*> DeclaredArray(const Instruction& i);

// One array of `dims` per type, a tuple of them when there are several
// (variadic reduce, scatter).
Shape Results(const std::vector<DType>& types, const std::vector<int64_t>& dims);

// Size arithmetic on attribute values, which malformed input makes anything:
// an overflow is reported rather than being undefined behaviour.
struct CheckedInt {
  int64_t value = 0;
  bool overflow = false;
  CheckedInt(int64_t v) : value(v) {}  // NOLINT: implicit, to mix with int64_t
  CheckedInt operator+(CheckedInt o) const {
    CheckedInt r(0);
    r.overflow = overflow || o.overflow || __builtin_add_overflow(value, o.value, &r.value);
    return r;
  }
  CheckedInt operator*(CheckedInt o) const {
    CheckedInt r(0);
    r.overflow = overflow || o.overflow || __builtin_mul_overflow(value, o.value, &r.value);
    return r;
  }
};

// ---- Called computations -------------------------------------------------

// `(f32[], f32[]) -> f32[]`: what a computation takes and returns.
std::string Signature(const Computation& c);

// The computation attribute `attr` of `i` names, which must have a root.
absl::StatusOr<const Computation*> Called(const Instruction& i,
                                          const std::optional<ComputationRef>& ref,
                                          absl::string_view attr);

// `c` takes parameters of exactly the `expected` shapes; `role` names it in
// messages ("to_apply", "body"...).
absl::Status CheckParameters(const Computation& c, const std::vector<Shape>& expected,
                             absl::string_view role);

// A reducer combines N accumulators with N input elements: 2N scalar
// parameters, accumulators first, and N scalar results (a tuple when N > 1).
// As in XLA, accumulators may differ from the init values, and input
// parameters from the input elements, in floating-point precision only.
// Returns the result element types.
absl::StatusOr<std::vector<DType>> CheckReducer(const Instruction& i,
                                                const std::optional<ComputationRef>& ref,
                                                absl::string_view attr,
                                                const std::vector<DType>& inits,
                                                const std::vector<DType>& inputs);

}  // namespace seam::shape_inference_internal
