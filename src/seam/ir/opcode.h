// HLO opcodes and their static properties, derived from ops.def.
#pragma once

#include <cstdint>
#include <optional>
#include "absl/strings/string_view.h"
#include "seam/ir/dtype.h"

namespace seam {

enum class Opcode : uint16_t {
#define SEAM_OP(e, text, arity, category, types, flags) e,
#include "seam/ir/ops.def"
#undef SEAM_OP
};

inline constexpr int kOpcodeCount = 0
#define SEAM_OP(e, text, arity, category, types, flags) +1
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

// The element types an op computes on, for ops that constrain them (the
// rest take kAnyType). Types Seam only parses and prints (f8, f4, s2, u2)
// pass every check: what they mean is the interpreter's to refuse.
enum class OperandTypes : uint8_t {
  kAnyType,
  kNumbers,      // integers, floating-point and complex: not pred
  kOrdered,      // pred, integers, floating-point: not complex
  kRealNumbers,  // integers and floating-point
  kBitwise,      // pred and integers
  kIntegers,
  kFloatsOrComplex,  // transcendentals
  kFloats,
};

enum OpFlags : uint8_t {
  kNone = 0,
  kCommutative = 1 << 0,
  kExpensive = 1 << 1,  // transcendental or division: worth not recomputing
  kSideEffect = 1 << 2,
  // Associative and commutative with an identity element: a reducer that is
  // this one op is split, reordered and generated as a known reduction.
  kCombiner = 1 << 3,
  // Division or square root: one slow vector instruction, where the other
  // expensive ops are polynomial evaluations (the cost model tells them apart).
  kDivision = 1 << 4,
  // Cheap on GPUs at f32 and f16 (XLA's GPU fusion does not count it
  // expensive there): division, square roots, exp.
  kFastOnGpu = 1 << 5,
  // Exact: picks, moves, negates or truncates a value, never rounds one.
  kExact = 1 << 6,
};

inline constexpr int kVariadic = -1;

absl::string_view OpcodeName(Opcode op);
std::optional<Opcode> OpcodeFromName(absl::string_view name);
// The fixed operand count, or kVariadic.
int OpcodeArity(Opcode op);
OpCategory OpcodeCategory(Opcode op);
OperandTypes OpcodeOperandTypes(Opcode op);
// Whether `op` computes on elements of type `t`.
bool AcceptsOperandType(Opcode op, DType t);
// The types `op` accepts, in words: "a pred or integer".
absl::string_view OperandTypesName(OperandTypes types);
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
inline bool IsCombiner(Opcode op) { return OpcodeFlags(op) & kCombiner; }
inline bool IsDivision(Opcode op) { return OpcodeFlags(op) & kDivision; }
inline bool IsFastOnGpu(Opcode op) { return OpcodeFlags(op) & kFastOnGpu; }
inline bool IsExact(Opcode op) { return OpcodeFlags(op) & kExact; }

}  // namespace seam
