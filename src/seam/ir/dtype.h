// Element types of HLO arrays, derived from dtypes.def.
#pragma once

#include <cstdint>
#include <optional>
#include "absl/strings/string_view.h"

namespace seam {

enum class DType : uint8_t {
#define SEAM_DTYPE(e, text, bits, kind) e,
#include "seam/ir/dtypes.def"
#undef SEAM_DTYPE
};

enum class DTypeKind : uint8_t {
  kPredicate,
  kSigned,
  kUnsigned,
  kFloat,
  kComplex,
  kOpaque,  // parsed and printed, not computed with (f8, f4, s2, u2)
  kToken,
};

absl::string_view DTypeName(DType t);
std::optional<DType> DTypeFromName(absl::string_view name);
int DTypeBits(DType t);
// Bytes one element occupies in a dense buffer (sub-byte types take a byte).
int DTypeByteSize(DType t);
DTypeKind DTypeKindOf(DType t);

inline bool IsFloat(DType t) { return DTypeKindOf(t) == DTypeKind::kFloat; }
inline bool IsInteger(DType t) {
  DTypeKind k = DTypeKindOf(t);
  return k == DTypeKind::kSigned || k == DTypeKind::kUnsigned;
}
inline bool IsSigned(DType t) { return DTypeKindOf(t) == DTypeKind::kSigned; }
inline bool IsUnsigned(DType t) { return DTypeKindOf(t) == DTypeKind::kUnsigned; }
inline bool IsComplex(DType t) { return DTypeKindOf(t) == DTypeKind::kComplex; }
inline bool IsPred(DType t) { return t == DType::kPred; }
// Types generated kernels load, compute and store: pred, and integers and
// floats of whole bytes (not complex, sub-byte or opaque types). The fusion
// planner stitches only ops on these.
inline bool IsKernelType(DType t) {
  return (IsPred(t) || IsInteger(t) || IsFloat(t)) && DTypeBits(t) % 8 == 0;
}

}  // namespace seam
