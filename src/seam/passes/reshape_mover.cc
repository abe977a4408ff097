// reshape-mover: sinks reshapes and transposes below elementwise ops, after
// XLA's ReshapeMover:
//
//   add(reshape(a), reshape(b))   -> reshape(add(a, b))
//   mul(transpose(a), bcast(s))   -> transpose(mul(a, bcast'(s)))
//
// when every operand is the same rearrangement (same opcode, same input
// dimensions, same permutation) of an input, a scalar broadcast (rebuilt in
// the input shape for free), a small known constant (rearranged at compile
// time), or a scalar operand of clamp/select. Moved down, rearrangements
// meet each other and cancel (algsimp folds reshape(reshape) and
// transpose(transpose)) or reach a reduction or dot that absorbs them, and
// the elementwise op runs on the producer's layout.
//
// Only moved when no work is duplicated: every rearrangement it takes from
// an operand must die, i.e. all its users are moved too (XLA's candidate
// fixpoint). Not moved: map (its `dimensions` name the rank), bitcast-convert
// that changes the element width (it changes the rank), widening converts
// (convert-mover sinks those below data movement), ops with control
// edges or dynamic dimensions, and elided or large constants (their values
// are unknown or too big to copy).
#include <functional>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "seam/passes/mover_util.h"
#include "seam/passes/pass.h"

namespace seam {
namespace {

// Known constants up to this size are rearranged at compile time.
constexpr int64_t kMaxConstantElements = 1 << 16;
// Each round sinks rearrangements one op further; real chains are short.
constexpr int kMaxRounds = 64;

bool IsRearrange(const Instruction* i) {
  return (i->opcode() == Opcode::kReshape || i->opcode() == Opcode::kTranspose) &&
         !movers::HasControlEdges(*i) && movers::IsStaticArray(i->shape()) &&
         movers::IsStaticArray(i->operand(0)->shape());
}

// What an elementwise op's rearranged operands share.
struct Rearrangement {
  Opcode opcode;
  std::vector<int64_t> input_dims;
  IntList permutation;  // transpose only

  bool Matches(const Instruction* r) const {
    return r->opcode() == opcode && r->operand(0)->shape().dims() == input_dims &&
           (opcode != Opcode::kTranspose || *r->attrs().dimensions == permutation);
  }
};

bool IsScalarBroadcast(const Instruction* i) {
  return i->opcode() == Opcode::kBroadcast && i->operand(0)->shape().rank() == 0 &&
         !movers::HasControlEdges(*i);
}

bool CanTriviallyRearrange(const Instruction* i) {
  if (IsScalarBroadcast(i)) return true;
  const Literal* literal = movers::KnownLiteral(i);
  return literal != nullptr && literal->element_count() <= kMaxConstantElements;
}

bool IsMovableOp(const Instruction* i) {
  if (!IsElementwise(i->opcode()) || i->opcode() == Opcode::kMap ||
      !IsRemovableWhenDead(*i) || !movers::IsPlainArrayOp(*i) || i->shape().rank() == 0) {
    return false;
  }
  if (i->opcode() == Opcode::kBitcastConvert &&
      DTypeBits(i->shape().dtype()) != DTypeBits(i->operand(0)->shape().dtype())) {
    return false;
  }
  // convert-mover sinks widening converts below data movement; moving the
  // data movement back down would undo it, pass after pass.
  return i->opcode() != Opcode::kConvert ||
         !movers::IsWidening(i->operand(0)->shape().dtype(), i->shape().dtype());
}

// The rearrangement all operands of `op` share, if it is a candidate.
std::optional<Rearrangement> SharedRearrangement(const Instruction* op) {
  std::optional<Rearrangement> shared;
  for (const Instruction* operand : op->operands()) {
    if (!IsRearrange(operand)) continue;
    if (!shared.has_value()) {
      shared = Rearrangement{operand->opcode(), operand->operand(0)->shape().dims(), {}};
      if (operand->opcode() == Opcode::kTranspose) {
        shared->permutation = *operand->attrs().dimensions;
      }
    } else if (!shared->Matches(operand)) {
      return std::nullopt;
    }
  }
  if (!shared.has_value()) return std::nullopt;
  for (const Instruction* operand : op->operands()) {
    if (IsRearrange(operand) || movers::IsImplicitScalar(op, operand) ||
        CanTriviallyRearrange(operand)) {
      continue;
    }
    return std::nullopt;
  }
  return shared;
}

// Builds the operands of moved ops that are not rearrangements, in the
// rearrangement's input shape, once per operand and shape: ops that shared a
// scalar broadcast before the move share its replacement after it.
class Rematerializer {
 public:
  Instruction* Undo(Instruction* op, Instruction* operand, const Rearrangement& r,
                    HloBuilder& b) {
    if (IsRearrange(operand)) return operand->operand(0);
    if (movers::IsImplicitScalar(op, operand)) return operand;
    Key key{IsScalarBroadcast(operand) ? operand->operand(0) : operand, r.opcode, r.input_dims,
            r.permutation};
    auto it = built_.find(key);
    if (it != built_.end()) return it->second;
    Instruction* built;
    if (IsScalarBroadcast(operand)) {
      built = b.Broadcast(operand->operand(0), r.input_dims, {});
    } else if (r.opcode == Opcode::kReshape) {
      built = b.Constant(movers::ReshapeLiteral(*movers::KnownLiteral(operand), r.input_dims));
    } else {
      built = b.Constant(movers::TransposeLiteral(*movers::KnownLiteral(operand),
                                                  movers::InversePermutation(r.permutation)));
    }
    built_.emplace(std::move(key), built);
    return built;
  }

 private:
  using Key = std::tuple<Instruction*, Opcode, std::vector<int64_t>, IntList>;
  absl::flat_hash_map<Key, Instruction*> built_;
};

// Candidates linked by a shared rearrangement move together: the move
// removes each shared rearrangement once and adds one per moved op. Groups
// that would add more than they remove are dropped (the shared reshape of a
// value read by two elementwise ops would become two reshapes).
void DropGrowingGroups(absl::flat_hash_map<Instruction*, Rearrangement>& candidates,
                       const std::vector<Instruction*>& order) {
  absl::flat_hash_map<const Instruction*, const Instruction*> parent;
  std::function<const Instruction*(const Instruction*)> find = [&](const Instruction* i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  absl::flat_hash_map<const Instruction*, const Instruction*> owner;  // rearrangement -> op
  for (Instruction* op : order) {
    if (!candidates.contains(op)) continue;
    parent[op] = op;
    for (const Instruction* operand : op->operands()) {
      if (!IsRearrange(operand)) continue;
      auto [it, inserted] = owner.emplace(operand, op);
      if (!inserted) parent[find(op)] = find(it->second);
    }
  }
  absl::flat_hash_map<const Instruction*, int64_t> balance;  // removed - added
  for (const auto& [op, unused] : candidates) --balance[find(op)];
  for (const auto& [rearrangement, op] : owner) ++balance[find(op)];
  for (Instruction* op : order) {
    if (candidates.contains(op) && balance[find(op)] < 0) candidates.erase(op);
  }
}

// One round: finds the candidates, drops those whose rearrangements other
// instructions keep alive, moves the rest.
bool RunRound(Computation& computation, movers::Editor& editor) {
  // The order does not matter: a candidate's operands are never candidates.
  std::vector<Instruction*> order = movers::InstructionList(computation);
  absl::flat_hash_map<Instruction*, Rearrangement> candidates;
  for (Instruction* i : order) {
    if (!IsMovableOp(i)) continue;
    if (std::optional<Rearrangement> r = SharedRearrangement(i)) candidates.emplace(i, *r);
  }
  bool dropped = true;
  while (dropped) {
    dropped = false;
    for (Instruction* i : order) {
      if (!candidates.contains(i)) continue;
      for (const Instruction* operand : i->operands()) {
        if (!IsRearrange(operand)) continue;
        bool dies = !operand->IsRoot();
        for (Instruction* user : operand->users()) dies &= candidates.contains(user);
        if (!dies) {
          candidates.erase(i);
          dropped = true;
          break;
        }
      }
    }
  }
  DropGrowingGroups(candidates, order);
  if (candidates.empty()) return false;
  editor.Begin(computation);
  HloBuilder& b = editor.b();
  Rematerializer remat;  // per round: what it built may die in the next
  for (Instruction* op : order) {
    auto it = candidates.find(op);
    if (it == candidates.end()) continue;
    const Rearrangement& r = it->second;
    std::vector<Instruction*> operands;
    for (Instruction* operand : op->operands()) {
      operands.push_back(remat.Undo(op, operand, r, b));
    }
    Instruction* moved = b.Clone(*op, std::move(operands));
    moved->mutable_shape() = Shape::Array(op->shape().dtype(), r.input_dims);
    Instruction* result = r.opcode == Opcode::kReshape ? b.Reshape(moved, op->shape().dims())
                                                       : b.Transpose(moved, r.permutation);
    editor.ReplaceWithNew(op, result);
  }
  editor.Finish();
  return true;
}

class ReshapeMoverPass : public ComputationPass {
  std::vector<Opcode> Triggers() const override { return {Opcode::kReshape, Opcode::kTranspose}; }
  void Prepare(Module& module) override { editor_.emplace(module); }
  absl::StatusOr<bool> RunOnComputation(Computation& computation) override {
    bool changed = false;
    for (int round = 0; round < kMaxRounds && RunRound(computation, *editor_); ++round) {
      changed = true;
    }
    return changed;
  }

  std::optional<movers::Editor> editor_;
};

}  // namespace

std::unique_ptr<Pass> MakeReshapeMoverPass() { return std::make_unique<ReshapeMoverPass>(); }

}  // namespace seam
