// HLO opcodes and their static properties, derived from ops.def.
#pragma once

#include <cstdint>
#include <optional>
#include "absl/strings/string_view.h"

namespace seam {

enum class Opcode : uint16_t {
#define SEAM_OP(e, text, arity, category, flags) e,
#include "seam/ir/ops.def"
#undef SEAM_OP
};

inline constexpr int kOpcodeCount = 0
#define SEAM_OP(e, text, arity, category, flags) +1
#include "seam/ir/ops.def"
#undef SEAM_OP
    ;

// What kind of work an op is; the fusion planner and gym build on this.
enum class OpCategory : uint8_t {
  kElementwise,   // one output element from the same-index input elements
  kDataMovement,  // re-indexes data: broadcast, reshape, transpose, slice...
  kReduction,     // reduce, reduce-window, select-and-scatter
  kLibrary,       // compute-heavy ops served by a library: dot, convolution...
  kComposite,     // ops expanded into simpler ones: batch-norm-*, rng
  kControl,       // parameters, constants, tuples, calls and control flow
  kCollective,    // cross-device communication
  kOpaque,        // custom-call and I/O: no semantics Seam can see into
};

enum OpFlags : uint8_t {
  kNone = 0,
  kCommutative = 1 << 0,
  kExpensive = 1 << 1,  // transcendental or division: worth not recomputing
  kSideEffect = 1 << 2,
};

inline constexpr int kVariadic = -1;

absl::string_view OpcodeName(Opcode op);
std::optional<Opcode> OpcodeFromName(absl::string_view name);
// The fixed operand count, or kVariadic.
int OpcodeArity(Opcode op);
OpCategory OpcodeCategory(Opcode op);
uint8_t OpcodeFlags(Opcode op);
absl::string_view OpCategoryName(OpCategory category);

inline bool IsElementwise(Opcode op) {
  return OpcodeCategory(op) == OpCategory::kElementwise;
}
// Ops that compute on their operands' elements (rather than move them,
// call, communicate or hide what they do): elementwise, reductions,
// library and composite ops.
inline bool ComputesOnElements(Opcode op) {
  switch (OpcodeCategory(op)) {
    case OpCategory::kElementwise:
    case OpCategory::kReduction:
    case OpCategory::kLibrary:
    case OpCategory::kComposite:
      return true;
    default:
      return false;
  }
}
inline bool IsCommutative(Opcode op) { return OpcodeFlags(op) & kCommutative; }
inline bool IsExpensive(Opcode op) { return OpcodeFlags(op) & kExpensive; }
inline bool HasSideEffect(Opcode op) { return OpcodeFlags(op) & kSideEffect; }

}  // namespace seam
