// Helpers shared by the call, control-flow and tuple passes: inlining a
// computation into a caller, cloning computations, counting call sites, and
// telling when one value may stand for another without changing what a
// layout-sensitive reader (bitcast) sees.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "seam/ir/hlo_builder.h"
#include "seam/ir/module.h"

namespace seam {

// Whether a value of shape `a` may replace one of shape `b`: same element
// types, dimensions and dynamism, and the same memory order as the
// interpreter reads it (a missing layout is row-major; tiling suffixes are
// not modelled). Tuples compare element by element.
bool InterchangeableShapes(const Shape& a, const Shape& b);

// `value` itself when its shape is interchangeable with `want`, else a copy
// of it laid out as `want` (element by element for tuples: the interpreter's
// copy moves array bytes only).
Instruction* AdaptLayout(Instruction* value, const Shape& want, HloBuilder& builder);

bool HasControlEdges(const Instruction& instruction);

// The instructions of `computation` with opcode `opcode`, in order: a
// snapshot, safe to rewrite while walking.
std::vector<Instruction*> InstructionsWithOpcode(const Computation& computation, Opcode opcode);
// Whether any computation of `module` has an instruction with `opcode`.
bool ContainsOpcode(const Module& module, Opcode opcode);

// Clones `callee` into the builder's computation with parameter k standing
// for arguments[k]. Returns the value of the callee's root laid out as
// `result_shape`. Control ordering of the instruction being replaced is
// carried over: `predecessors` come before every cloned instruction,
// `successors` after all of them.
Instruction* InlineComputation(const Computation& callee,
                               const std::vector<Instruction*>& arguments,
                               const Shape& result_shape, HloBuilder& builder,
                               const std::vector<Instruction*>& predecessors = {},
                               const std::vector<Instruction*>& successors = {});

// Replaces every use of `old` by the inlined body of `callee` on `arguments`,
// carrying `old`'s control edges. `old` is left with no users (and no control
// edges) for the caller to remove, in batches: one-by-one removal is
// quadratic.
void ReplaceWithInlinedComputation(Instruction* old, const Computation& callee,
                                   const std::vector<Instruction*>& arguments,
                                   NameUniquer& names);

// Hands out computation names not yet used in a module.
class ComputationNameUniquer {
 public:
  explicit ComputationNameUniquer(const Module& module);
  std::string Make(absl::string_view base);

 private:
  absl::flat_hash_set<std::string> used_;
};

// A copy of `original` (instructions, control edges, root, signature flag)
// added to `module` under a new name. Called computations are shared, not
// copied.
Computation* CloneComputation(const Computation& original, Module& module,
                              NameUniquer& names, ComputationNameUniquer& computation_names);

// How many (instruction, attribute slot) pairs in the module name each
// computation; the entry counts one more for being the entry. Callers in
// dead code count too: the verifier checks them, so a computation they
// share must not change shape under them (run dce first to free it).
absl::flat_hash_map<const Computation*, int> CountCallSites(const Module& module);

// The number of call sites of `computation` in `counts` (0 when absent).
int CallSites(const absl::flat_hash_map<const Computation*, int>& counts,
              const Computation* computation);

// The parameter of a loop body or condition, when it is read only through
// get-tuple-element with indices below `elements` (and is not the root):
// then the loop state may be reshaped by renumbering those reads.
Instruction* LoopStateParameter(const Computation& c, size_t elements);

// A while loop whose state may be reshaped: a tuple state; a body and a
// condition, distinct and called only by this loop, each with a state
// parameter LoopStateParameter accepts; a body ending in a tuple of the
// next state that nothing else reads; no control edges.
struct ReshapableLoop {
  Computation* condition = nullptr;
  Computation* body = nullptr;
  size_t elements = 0;  // of the state
  Instruction* body_state = nullptr;
  Instruction* condition_state = nullptr;
  Instruction* next = nullptr;  // the body's root
};
std::optional<ReshapableLoop> MatchReshapableLoop(
    const Instruction& loop, const absl::flat_hash_map<const Computation*, int>& call_sites);

// Element k of `loop`'s initial state, built by `outside` where the initial
// state is not a tuple instruction, in the layout of the loop's state.
Instruction* InitialStateElement(const Instruction& loop, size_t k, HloBuilder& outside);

// Replaces each of `candidates`, in order, by the value `replacement` gives
// it (null: kept), then removes the replaced ones from `computation`. True
// when any was replaced.
bool ReplaceEach(Computation& computation, const std::vector<Instruction*>& candidates,
                 absl::FunctionRef<Instruction*(Instruction*)> replacement);

// Makes the users of every instruction for which `is_identity` holds read
// its first operand instead, and removes it: for annotations that are
// identities on one device (sharding-remover, transfer-remover). True when
// something was replaced.
bool ReplaceByOperand(Module& module, bool (*is_identity)(const Instruction&));

// Removes the instructions of `computation` that nothing live uses (as the
// dce pass does for one computation). True when something was removed.
bool RemoveDeadInstructions(Computation& computation);

}  // namespace seam
