// tuple-simplifier: removes tuples that are built only to be taken apart:
//   get-tuple-element(tuple(a0, a1, ...), i)        -> ai
//   tuple(gte(x, 0), gte(x, 1), ..., gte(x, n-1))  -> x   (x of n elements)
// Inlined calls and loop rewrites leave many of these behind; until they are
// gone, a value reaches its users through tuple plumbing that hides it from
// the local simplifiers and the fusion planner.
//
// Not rewritten: instructions with control edges (the replacement is an
// earlier value, and moving ordering onto it could close a cycle), and
// replacements whose layout differs from the replaced value's (a bitcast
// reading it would change meaning).
#include "seam/passes/call_graph_util.h"
#include "seam/passes/pass.h"

namespace seam {
namespace {

// What `i` simplifies to, or null.
Instruction* Simplified(Instruction* i) {
  if (HasControlEdges(*i)) return nullptr;
  if (i->opcode() == Opcode::kGetTupleElement && i->attrs().index.has_value()) {
    Instruction* tuple = i->operand(0);
    int64_t index = *i->attrs().index;
    if (tuple->opcode() != Opcode::kTuple || index < 0 || index >= tuple->operand_count()) {
      return nullptr;
    }
    Instruction* element = tuple->operand(static_cast<int>(index));
    return InterchangeableShapes(element->shape(), i->shape()) ? element : nullptr;
  }
  if (i->opcode() == Opcode::kTuple && i->operand_count() > 0) {
    Instruction* source = nullptr;
    for (int k = 0; k < i->operand_count(); ++k) {
      const Instruction* element = i->operand(k);
      if (element->opcode() != Opcode::kGetTupleElement ||
          element->attrs().index != std::optional<int64_t>(k)) {
        return nullptr;
      }
      if (source == nullptr) source = element->operand(0);
      if (element->operand(0) != source) return nullptr;
    }
    return InterchangeableShapes(source->shape(), i->shape()) ? source : nullptr;
  }
  return nullptr;
}

bool SimplifyTuples(Computation& computation) {
  // Operands first: a nest of tuples unwinds in one sweep.
  return ReplaceEach(computation, computation.MakePostOrder(), Simplified);
}

class TupleSimplifierPass : public ComputationPass {
  absl::StatusOr<bool> RunOnComputation(Computation& computation) override {
    return SimplifyTuples(computation);
  }
};

}  // namespace

std::unique_ptr<Pass> MakeTupleSimplifierPass() {
  return std::make_unique<TupleSimplifierPass>();
}

}  // namespace seam
