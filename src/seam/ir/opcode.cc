#include "seam/ir/opcode.h"

#include <array>

#include "absl/container/flat_hash_map.h"

namespace seam {
namespace {

struct OpcodeInfo {
  absl::string_view name;
  int arity;
  OpCategory category;
  OperandTypes types;
  uint8_t flags;
};

constexpr std::array<OpcodeInfo, kOpcodeCount> kOpcodes = {{
#define SEAM_OP(e, text, arity, category, types, flags) \
  {text, arity, OpCategory::category, OperandTypes::types, flags},
#include "seam/ir/ops.def"
#undef SEAM_OP
}};

const OpcodeInfo& Info(Opcode op) { return kOpcodes[static_cast<size_t>(op)]; }

}  // namespace

absl::string_view OpcodeName(Opcode op) { return Info(op).name; }
int OpcodeArity(Opcode op) { return Info(op).arity; }
OpCategory OpcodeCategory(Opcode op) { return Info(op).category; }
uint8_t OpcodeFlags(Opcode op) { return Info(op).flags; }
OperandTypes OpcodeOperandTypes(Opcode op) { return Info(op).types; }

bool AcceptsOperandType(Opcode op, DType t) {
  const DTypeKind kind = DTypeKindOf(t);
  if (kind == DTypeKind::kOpaque) return true;
  const bool integer = IsInteger(t), floating = IsFloat(t);
  switch (Info(op).types) {
    case OperandTypes::kAnyType:
      return true;
    case OperandTypes::kNumbers:
      return integer || floating || IsComplex(t);
    case OperandTypes::kOrdered:
      return IsPred(t) || integer || floating;
    case OperandTypes::kRealNumbers:
      return integer || floating;
    case OperandTypes::kBitwise:
      return IsPred(t) || integer;
    case OperandTypes::kIntegers:
      return integer;
    case OperandTypes::kFloatsOrComplex:
      return floating || IsComplex(t);
    case OperandTypes::kFloats:
      return floating;
  }
  return true;
}

absl::string_view OperandTypesName(OperandTypes types) {
  switch (types) {
    case OperandTypes::kAnyType:
      return "any";
    case OperandTypes::kNumbers:
      return "an integer, floating-point or complex";
    case OperandTypes::kOrdered:
      return "a pred, integer or floating-point";
    case OperandTypes::kRealNumbers:
      return "an integer or floating-point";
    case OperandTypes::kBitwise:
      return "a pred or integer";
    case OperandTypes::kIntegers:
      return "an integer";
    case OperandTypes::kFloatsOrComplex:
      return "a complex or floating-point";
    case OperandTypes::kFloats:
      return "a floating-point";
  }
  return "any";
}

std::optional<Opcode> OpcodeFromName(absl::string_view name) {
  static const auto* by_name = [] {
    auto* map = new absl::flat_hash_map<absl::string_view, Opcode>();
    for (int i = 0; i < kOpcodeCount; ++i) {
      map->emplace(kOpcodes[i].name, static_cast<Opcode>(i));
    }
    return map;
  }();
  auto it = by_name->find(name);
  if (it == by_name->end()) return std::nullopt;
  return it->second;
}

absl::string_view OpCategoryName(OpCategory category) {
  switch (category) {
    case OpCategory::kElementwise: return "elementwise";
    case OpCategory::kDataMovement: return "data-movement";
    case OpCategory::kReduction: return "reduction";
    case OpCategory::kLibrary: return "library";
    case OpCategory::kComposite: return "composite";
    case OpCategory::kControl: return "control";
    case OpCategory::kCollective: return "collective";
    case OpCategory::kOpaque: return "opaque";
  }
  return "unknown";
}

}  // namespace seam
