#include "seam/ir/dtype.h"

#include <array>

namespace seam {
namespace {

struct DTypeInfo {
  absl::string_view name;
  int bits;
  DTypeKind kind;
};

constexpr std::array kDTypes = {
#define SEAM_DTYPE(e, text, bits, kind) DTypeInfo{text, bits, DTypeKind::kind},
#include "seam/ir/dtypes.def"
#include "absl/strings/string_view.h"
#undef SEAM_DTYPE
};

const DTypeInfo& Info(DType t) { return kDTypes[static_cast<size_t>(t)]; }

}  // namespace

absl::string_view DTypeName(DType t) { return Info(t).name; }
int DTypeBits(DType t) { return Info(t).bits; }
DTypeKind DTypeKindOf(DType t) { return Info(t).kind; }

int DTypeByteSize(DType t) {
  int bits = Info(t).bits;
  return bits == 0 ? 0 : (bits + 7) / 8;
}

std::optional<DType> DTypeFromName(absl::string_view name) {
  for (size_t i = 0; i < kDTypes.size(); ++i) {
    if (kDTypes[i].name == name) return static_cast<DType>(i);
  }
  return std::nullopt;
}

}  // namespace seam
