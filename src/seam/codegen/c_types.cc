#include "seam/codegen/c_types.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace seam::codegen {

std::string StorageType(DType t) {
  switch (t) {
    case DType::kPred: return "uint8_t";
    case DType::kS8: return "int8_t";
    case DType::kS16: return "int16_t";
    case DType::kS32: return "int32_t";
    case DType::kS64: return "int64_t";
    case DType::kU8: return "uint8_t";
    case DType::kU16: return "uint16_t";
    case DType::kU32: return "uint32_t";
    case DType::kU64: return "uint64_t";
    case DType::kBF16:
    case DType::kF16: return "uint16_t";
    case DType::kF32: return "float";
    case DType::kF64: return "double";
    default: return "void";
  }
}

std::string ComputeType(DType t) {
  if (t == DType::kPred) return "bool";
  return IsHalfType(t) ? "float" : StorageType(t);
}

std::string TileType(DType t) { return t == DType::kPred ? StorageType(t) : ComputeType(t); }

bool IsFloatType(DType t) {
  return t == DType::kF32 || t == DType::kF64 || IsHalfType(t);
}

bool IsHalfType(DType t) { return t == DType::kBF16 || t == DType::kF16; }

std::string LoadExpr(DType t, const std::string& stored) {
  if (t == DType::kPred) return absl::StrCat("(", stored, " != 0)");
  if (t == DType::kBF16) return absl::StrCat("seam_bf16_to_float(", stored, ")");
  if (t == DType::kF16) return absl::StrCat("seam_half_to_float(", stored, ")");
  return stored;
}

std::string StoreExpr(DType t, const std::string& value) {
  if (t == DType::kBF16) return absl::StrCat("seam_float_to_bf16(", value, ")");
  if (t == DType::kF16) return absl::StrCat("seam_float_to_half(", value, ")");
  return value;
}

std::string RoundExpr(DType t, const std::string& value) {
  if (t == DType::kBF16) return absl::StrCat("seam_round_bf16(", value, ")");
  if (t == DType::kF16) return absl::StrCat("seam_round_half(", value, ")");
  return value;
}

std::string FloatLiteral(DType t, double value) {
  std::string type = ComputeType(t);
  if (std::isnan(value)) return absl::StrCat("std::numeric_limits<", type, ">::quiet_NaN()");
  if (std::isinf(value)) {
    return absl::StrCat(value < 0 ? "-" : "", "std::numeric_limits<", type, ">::infinity()");
  }
  return absl::StrFormat("%s(%a)", type, value);  // hex float: exact
}

std::string ElementLiteral(const Literal& literal, int64_t i) {
  DType t = literal.shape().dtype();
  if (t == DType::kPred) return literal.GetBits(i) != 0 ? "true" : "false";
  if (IsFloatType(t)) return FloatLiteral(t, literal.GetDouble(i));
  std::string type = ComputeType(t);
  if (DTypeKindOf(t) == DTypeKind::kUnsigned) {
    return absl::StrCat(type, "(", literal.GetBits(i), "ull)");
  }
  int64_t v = literal.GetInt(i);
  // INT64_MIN has no literal of its own.
  if (v == INT64_MIN) return absl::StrCat(type, "(-9223372036854775807ll - 1)");
  return absl::StrCat(type, "(", v, "ll)");
}

VectorForm ConversionForm(DType t) {
  return t == DType::kF16 ? VectorForm::kBranchy : VectorForm::kPlain;
}

VectorForm LiteralForm(DType t) {
  return IsFloatType(t) || t == DType::kPred ? VectorForm::kPlain : VectorForm::kBranchy;
}

}  // namespace seam::codegen
