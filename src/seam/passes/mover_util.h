// Helpers shared by the data-movement passes (reshape-mover, transpose-folding,
// convert-mover, simplify-fp-conversions, slice-sinker, dot-merger,
// layout-normalization, copy-remover): which instructions they may touch,
// exact conversions, permutations, and an editor that replaces instructions
// and sweeps up what the replacement left dead in one pass over the list.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "seam/ir/hlo_builder.h"
#include "seam/ir/module.h"

namespace seam::movers {

// An array whose dimensions are all static (no `<=N`, no `?`).
bool IsStaticArray(const Shape& shape);
bool HasControlEdges(const Instruction& i);
// What these passes rewrite: live-or-root, no control edges, a static array
// result and static array operands.
bool IsPlainArrayOp(const Instruction& i);

// Whether two instructions' attributes agree in everything that has a
// meaning (the typed ones): metadata, sharding and other verbatim text may
// differ.
bool SameTypedAttributes(const Attributes& a, const Attributes& b);

// A rank-0 operand of an op with a larger rank (clamp's bounds, select's
// predicate) applies to every element, whatever the layout.
inline bool IsImplicitScalar(const Instruction* op, const Instruction* operand) {
  return operand->shape().rank() == 0 && op->shape().rank() > 0;
}

// A constant whose values the text spelled out (not elided, not opaque).
const Literal* KnownLiteral(const Instruction* i);

// Whether every value of `from` converts to `to` and keeps its value, so that
// converting it on to any third type gives what converting it directly would
// (and converting back to `from` gives it back). Floats: `to` has at least
// the exponent range and precision; integers: the range contains `from`'s;
// integers to floats: the precision holds every integer of `from`; pred to
// anything but opaque types. Complex and opaque types: never.
bool ConvertsExactly(DType from, DType to);

// Bits of a type whose values the passes may compute with (not opaque or
// token), else 0.
int ValueBits(DType t);
// Whether a convert from `from` to `to` makes each value wider (both types
// computable): convert-mover sinks these below data movement, so other
// passes must not move data movement below them.
bool IsWidening(DType from, DType to);

// Whether users of `old` may use `existing` instead: compatible shapes, and
// a layout difference only where no user reads layouts (bitcast).
bool CanReplaceWithExisting(const Instruction* old, const Instruction* existing);

IntList InversePermutation(const IntList& permutation);
bool IsIdentityPermutation(const IntList& permutation);
// `dims` permuted: result[i] = dims[permutation[i]].
std::vector<int64_t> Permute(const std::vector<int64_t>& dims, const IntList& permutation);

// The literal `in` reshaped to `dims` (same element order) or transposed by
// `permutation` (element [i...] of the result = in[permutation-indexed]).
Literal ReshapeLiteral(const Literal& in, std::vector<int64_t> dims);
Literal TransposeLiteral(const Literal& in, const IntList& permutation);

// The instructions of `computation`, in list order (stable while editing).
std::vector<Instruction*> InstructionList(const Computation& computation);
// Whether some instruction of `computation` has opcode `op`.
bool HasOpcode(const Computation& computation, Opcode op);

// Edits one computation at a time: builds new instructions, replaces old
// ones, and removes what a replacement left unused (the old instruction and,
// recursively, operands nothing else uses and that have no side effects).
// Removal is deferred to Finish() so that it costs one sweep of the list.
class Editor {
 public:
  explicit Editor(Module& module) : module_(module) {}

  void Begin(Computation& computation);
  // Built on first use: collecting the module's names costs a sweep.
  HloBuilder& b();
  Computation& computation() { return *computation_; }

  // `fresh` (built by this editor) takes `old`'s place and exact shape,
  // layout included, so users see no difference.
  void ReplaceWithNew(Instruction* old, Instruction* fresh);
  // Users of `old` use `existing` instead; shapes must be compatible.
  void ReplaceWithExisting(Instruction* old, Instruction* existing);
  // Removes `i` if nothing uses it, then its operands likewise.
  void RemoveIfDead(Instruction* i);
  bool IsRemoved(const Instruction* i) const { return removed_.contains(i); }

  // Removes the instructions scheduled for removal.
  void Finish();

 private:
  Module& module_;
  std::unique_ptr<NameUniquer> names_;
  Computation* computation_ = nullptr;
  std::unique_ptr<HloBuilder> builder_;
  absl::flat_hash_set<Instruction*> removed_;
};

// The driver of the passes that fold an operand into its user's attributes
// (transpose-folding, conv-operand-folding): in every computation holding
// an instruction of opcode `present`, each plain array op, in post order,
// is offered to `fold`; what it returns (built with the builder it is
// given) replaces it, null leaves it. Whether anything was replaced.
bool ReplaceFolded(Module& module, Opcode present,
                   absl::FunctionRef<Instruction*(Instruction*, HloBuilder&)> fold);

}  // namespace seam::movers
