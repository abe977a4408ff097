// while-loop-simplifier: loops whose trip count is known to be 0 or 1, and
// loop-state elements nothing needs, after XLA's WhileLoopSimplifier:
//   - a loop that runs 0 times (condition constant false, or false on the
//     initial state of a counted loop) -> its initial state;
//   - a counted loop that runs exactly once -> its body, inlined on the
//     initial state;
//   - a state element the condition never reads and the body only passes
//     through (or computes only for itself, when nothing outside reads it)
//     -> dropped from the state; outside reads of a passed-through element
//     read its initial value.
// JAX lowers fori_loop and scan with small constant trip counts, and
// random-number helpers carry state they never change; each loop is a wall
// the fusion planner cannot see through, and each element a buffer.
//
// A counted loop here is one whose condition is compare(gte(state, i), c) or
// its mirror, with element i initialised by a constant and advanced by the
// body's add(gte(state, i), constant step); integer wrap-around is honoured.
// The condition must be free of side effects (we evaluate it in our head,
// once or twice, instead of running it). State elements are dropped only
// when the body and condition belong to this loop alone (see
// flatten-call-graph) and the state is read only through get-tuple-element.
#include "seam/passes/call_graph_util.h"
#include "seam/passes/pass.h"

namespace seam {
namespace {

bool IsPure(const Computation& c) {
  for (const auto& i : c.instructions()) {
    if (i->opcode() != Opcode::kParameter && !IsRemovableWhenDead(*i)) return false;
  }
  return true;
}

// A scalar integer constant with known data.
const Literal* IntegerConstant(const Instruction* i) {
  if (i->opcode() != Opcode::kConstant || i->literal() == nullptr) return nullptr;
  const Literal* literal = i->literal();
  if (literal->is_elided() || literal->is_opaque() || !i->shape().IsArray() ||
      i->shape().rank() != 0 || !IsInteger(i->shape().dtype())) {
    return nullptr;
  }
  return literal;
}

bool IsGteOf(const Instruction* i, const Instruction* tuple, int64_t* index) {
  if (i->opcode() != Opcode::kGetTupleElement || i->operand(0) != tuple ||
      !i->attrs().index.has_value()) {
    return false;
  }
  *index = *i->attrs().index;
  return true;
}

// Integer values of one type, held as their two's-complement bits.
struct IntType {
  DType dtype;
  uint64_t Wrap(uint64_t bits) const {
    int width = DTypeBits(dtype);
    if (width >= 64) return bits;
    bits &= (uint64_t{1} << width) - 1;
    if (IsSigned(dtype) && (bits >> (width - 1)) != 0) bits |= ~uint64_t{0} << width;
    return bits;
  }
  bool Compare(uint64_t a, uint64_t b, ComparisonDirection d) const {
    auto order = [&](auto x, auto y) {
      switch (d) {
        case ComparisonDirection::kEq: return x == y;
        case ComparisonDirection::kNe: return x != y;
        case ComparisonDirection::kGe: return x >= y;
        case ComparisonDirection::kGt: return x > y;
        case ComparisonDirection::kLe: return x <= y;
        case ComparisonDirection::kLt: return x < y;
      }
      return false;
    };
    if (IsSigned(dtype)) return order(static_cast<int64_t>(a), static_cast<int64_t>(b));
    return order(a, b);
  }
};

ComparisonDirection Mirror(ComparisonDirection d) {
  switch (d) {
    case ComparisonDirection::kGe: return ComparisonDirection::kLe;
    case ComparisonDirection::kGt: return ComparisonDirection::kLt;
    case ComparisonDirection::kLe: return ComparisonDirection::kGe;
    case ComparisonDirection::kLt: return ComparisonDirection::kGt;
    default: return d;
  }
}

// 0 or 1 when the loop provably runs that many times, else -1.
int KnownTripCount(const Instruction& loop) {
  const Computation& condition = **loop.attrs().condition;
  const Computation& body = **loop.attrs().body;
  if (!IsPure(condition)) return -1;
  const Instruction* root = condition.root();
  if (root->opcode() == Opcode::kConstant && root->literal() != nullptr &&
      !root->literal()->is_elided() && root->shape().IsArray() &&
      root->shape().dtype() == DType::kPred && root->shape().rank() == 0) {
    return root->literal()->GetBits(0) ? -1 : 0;
  }
  // compare(gte(state, i), limit) or compare(limit, gte(state, i)).
  const Instruction* state = condition.parameter_count() == 1 ? condition.parameter(0) : nullptr;
  if (state == nullptr || root->opcode() != Opcode::kCompare ||
      !root->attrs().direction.has_value()) {
    return -1;
  }
  ComparisonDirection direction = *root->attrs().direction;
  int64_t index = 0;
  const Literal* limit = IntegerConstant(root->operand(1));
  if (!IsGteOf(root->operand(0), state, &index) || limit == nullptr) {
    limit = IntegerConstant(root->operand(0));
    if (!IsGteOf(root->operand(1), state, &index) || limit == nullptr) return -1;
    direction = Mirror(direction);
  }
  IntType type{root->operand(0)->shape().dtype()};
  if (root->attrs().type.has_value() &&
      root->attrs().type->text != (IsSigned(type.dtype) ? "SIGNED" : "UNSIGNED")) {
    return -1;
  }
  const Instruction* init = loop.operand(0);
  if (init->opcode() != Opcode::kTuple || index < 0 || index >= init->operand_count()) return -1;
  const Literal* start = IntegerConstant(init->operand(static_cast<int>(index)));
  if (start == nullptr || start->shape().dtype() != type.dtype) return -1;
  uint64_t first = start->GetBits(0), bound = type.Wrap(limit->GetBits(0));
  first = type.Wrap(first);
  if (!type.Compare(first, bound, direction)) return 0;
  // The body must advance element i by a constant step.
  const Instruction* next = body.root();
  const Instruction* body_state = body.parameter_count() == 1 ? body.parameter(0) : nullptr;
  if (body_state == nullptr || next->opcode() != Opcode::kTuple ||
      index >= next->operand_count()) {
    return -1;
  }
  const Instruction* update = next->operand(static_cast<int>(index));
  if (update->opcode() != Opcode::kAdd) return -1;
  int64_t read = -1;
  const Literal* step = IntegerConstant(update->operand(1));
  if (!IsGteOf(update->operand(0), body_state, &read) || step == nullptr) {
    step = IntegerConstant(update->operand(0));
    if (!IsGteOf(update->operand(1), body_state, &read) || step == nullptr) return -1;
  }
  if (read != index || step->shape().dtype() != type.dtype) return -1;
  uint64_t second = type.Wrap(first + step->GetBits(0));
  return type.Compare(second, bound, direction) ? -1 : 1;
}

// Replaces `loop` by its initial state (0 trips) or its inlined body (1
// trip). True when it did; `loop` is then unused, for the caller to remove.
// The computations the inlined body calls gain call sites in `call_sites`.
bool SimplifyKnownTripCount(Instruction* loop, NameUniquer& names,
                            absl::flat_hash_map<const Computation*, int>& call_sites) {
  int trips = KnownTripCount(*loop);
  if (trips == 1) {
    const Computation& body = **loop->attrs().body;
    for (const auto& i : body.instructions()) {
      for (const Computation* called : i->CalledComputations()) ++call_sites[called];
    }
    ReplaceWithInlinedComputation(loop, body, {loop->operand(0)}, names);
    return true;
  }
  if (trips != 0 || HasControlEdges(*loop)) return false;
  HloBuilder builder(*loop->parent(), names);
  loop->ReplaceAllUsesWith(AdaptLayout(loop->operand(0), loop->shape(), builder));
  return true;
}

Shape KeptElements(const Shape& tuple, const std::vector<bool>& removed) {
  std::vector<Shape> kept;
  for (size_t k = 0; k < removed.size(); ++k) {
    if (!removed[k]) kept.push_back(tuple.tuple_shapes()[k]);
  }
  return Shape::Tuple(std::move(kept));
}

// The state elements the loop needs: read by the condition, or flowing in
// the body into anything but their own next value (another element's, a
// side effect, an ordering).
std::vector<bool> NeededElements(const ReshapableLoop& loop) {
  const size_t n = loop.elements;
  std::vector<bool> needed(n, false);
  for (const Instruction* read : loop.condition_state->users()) needed[*read->attrs().index] = true;
  std::vector<std::vector<const Instruction*>> reads(n);
  for (const Instruction* read : loop.body_state->users())
    reads[*read->attrs().index].push_back(read);
  // One walk per element: bounded so that huge loops stay linear-ish.
  bool walk = static_cast<int64_t>(n) * loop.body->instruction_count() <= (int64_t{1} << 22);
  for (size_t k = 0; k < n; ++k) {
    if (needed[k] || reads[k].empty()) continue;
    absl::flat_hash_set<const Instruction*> seen(reads[k].begin(), reads[k].end());
    std::vector<const Instruction*> stack = reads[k];
    while (!stack.empty() && !needed[k]) {
      const Instruction* value = stack.back();
      stack.pop_back();
      if (HasControlEdges(*value) || !IsRemovableWhenDead(*value)) needed[k] = true;
      for (const Instruction* user : value->users()) {
        if (user == loop.next) {
          for (int slot = 0; slot < loop.next->operand_count(); ++slot) {
            if (loop.next->operand(slot) == value && slot != static_cast<int>(k)) needed[k] = true;
          }
          continue;
        }
        if (!walk) needed[k] = true;
        if (seen.insert(user).second) stack.push_back(user);
      }
    }
  }
  return needed;
}

// The elements to drop: unneeded ones the body passes through unchanged,
// or that nobody outside reads (when only get-tuple-elements read the
// loop). Nullopt when a reader outside has control edges.
std::optional<std::vector<bool>> RemovableElements(const Instruction& loop,
                                                   const ReshapableLoop& parts) {
  const size_t n = parts.elements;
  bool only_gte_users = !loop.IsRoot();
  std::vector<bool> read_outside(n, false);
  for (const Instruction* user : loop.users()) {
    if (HasControlEdges(*user)) return std::nullopt;
    if (user->opcode() == Opcode::kGetTupleElement && user->attrs().index.has_value()) {
      read_outside[*user->attrs().index] = true;
    } else {
      only_gte_users = false;
    }
  }
  std::vector<bool> needed = NeededElements(parts);
  std::vector<bool> removed(n, false);
  for (size_t k = 0; k < n; ++k) {
    const Instruction* update = parts.next->operand(static_cast<int>(k));
    bool passed_through = update->opcode() == Opcode::kGetTupleElement &&
                          update->operand(0) == parts.body_state &&
                          update->attrs().index == std::optional<int64_t>(k);
    removed[k] = !needed[k] && (passed_through || (only_gte_users && !read_outside[k]));
  }
  return removed;
}

// The caller's side: a narrower initial state and loop, whose users read
// the kept elements from it and the dropped (passed-through) ones from the
// initial state. The old loop and the reads it replaced go to `dead`.
void NarrowLoop(Instruction* loop, const std::vector<bool>& removed,
                const std::vector<int64_t>& new_index, NameUniquer& names,
                absl::flat_hash_set<Instruction*>& dead) {
  const Shape& state = loop->shape();
  const size_t n = removed.size();
  HloBuilder outside(*loop->parent(), names);
  auto initial = [&](size_t k) { return InitialStateElement(*loop, k, outside); };
  std::vector<Instruction*> init_elements;
  for (size_t k = 0; k < n; ++k) {
    if (!removed[k]) init_elements.push_back(initial(k));
  }
  Instruction* new_init = outside.Tuple(std::move(init_elements));
  Shape new_state = KeptElements(state, removed);
  new_init->mutable_shape() = new_state;
  Instruction* new_loop = outside.Add(Opcode::kWhile, new_state, {new_init}, loop->attrs());
  new_loop->set_name(names.Make(loop->name()));
  Instruction* whole = nullptr;  // the old state, rebuilt for non-gte users
  auto rebuild = [&]() {
    if (whole != nullptr) return whole;
    std::vector<Instruction*> elements;
    for (size_t k = 0; k < n; ++k) {
      elements.push_back(removed[k] ? initial(k) : outside.GetTupleElement(new_loop, new_index[k]));
    }
    whole = outside.Tuple(std::move(elements));
    whole->mutable_shape() = state;
    return whole;
  };
  std::vector<Instruction*> users = loop->users();
  for (Instruction* user : users) {
    if (user->opcode() != Opcode::kGetTupleElement) {
      for (int k = 0; k < user->operand_count(); ++k) {
        if (user->operand(k) == loop) user->ReplaceOperand(k, rebuild());
      }
      continue;
    }
    int64_t index = *user->attrs().index;
    if (removed[index]) {  // passed through: the initial value
      user->ReplaceAllUsesWith(AdaptLayout(initial(index), user->shape(), outside));
      dead.insert(user);
    } else {
      user->ReplaceOperand(0, new_loop);
      user->mutable_attrs().index = new_index[index];
    }
  }
  if (loop->IsRoot()) loop->parent()->set_root(rebuild());
  dead.insert(loop);
}

// The body and condition read and write the narrower state.
void NarrowBodyAndCondition(const ReshapableLoop& loop, const std::vector<bool>& removed,
                            const std::vector<int64_t>& new_index, NameUniquer& names) {
  loop.body_state->mutable_shape() = KeptElements(loop.body_state->shape(), removed);
  for (Instruction* read : loop.body_state->users()) {
    int64_t index = *read->attrs().index;
    if (!removed[index]) read->mutable_attrs().index = new_index[index];
  }
  HloBuilder inside(*loop.body, names);
  std::vector<Instruction*> updates;
  for (size_t k = 0; k < removed.size(); ++k) {
    if (!removed[k]) updates.push_back(loop.next->operand(static_cast<int>(k)));
  }
  Instruction* new_next = inside.Tuple(std::move(updates));
  new_next->mutable_shape() = KeptElements(loop.next->shape(), removed);
  loop.body->set_root(new_next);
  // The old root and the reads of dropped elements (their only user).
  RemoveDeadInstructions(*loop.body);
  loop.condition_state->mutable_shape() = KeptElements(loop.condition_state->shape(), removed);
  for (Instruction* read : loop.condition_state->users()) {
    read->mutable_attrs().index = new_index[*read->attrs().index];
  }
}

// Drops the state elements the loop does not need (see the file comment).
// True when it did; `loop` and the outside reads it replaced are then added
// to `dead`.
bool RemoveUnneededStateElements(Instruction* loop,
                                 const absl::flat_hash_map<const Computation*, int>& call_sites,
                                 NameUniquer& names, absl::flat_hash_set<Instruction*>& dead) {
  std::optional<ReshapableLoop> parts = MatchReshapableLoop(*loop, call_sites);
  if (!parts) return false;
  std::optional<std::vector<bool>> removed = RemovableElements(*loop, *parts);
  if (!removed) return false;
  std::vector<int64_t> new_index(parts->elements, -1);
  int64_t kept = 0;
  for (size_t k = 0; k < parts->elements; ++k) {
    if (!(*removed)[k]) new_index[k] = kept++;
  }
  if (kept == static_cast<int64_t>(parts->elements)) return false;
  NarrowLoop(loop, *removed, new_index, names, dead);
  NarrowBodyAndCondition(*parts, *removed, new_index, names);
  return true;
}

class WhileLoopSimplifierPass : public Pass {
 public:
  absl::StatusOr<bool> Run(Module& module) override {
    if (!ContainsOpcode(module, Opcode::kWhile)) return false;
    NameUniquer names(module);
    bool changed = false;
    // Dropping one element can leave another unused; a few rounds settle it.
    for (int round = 0; round < 8; ++round) {
      absl::flat_hash_map<const Computation*, int> call_sites = CountCallSites(module);
      bool round_changed = false;
      std::vector<Computation*> computations;
      for (const auto& c : module.computations()) computations.push_back(c.get());
      for (Computation* computation : computations) {
        absl::flat_hash_set<Instruction*> removed;
        for (Instruction* loop : InstructionsWithOpcode(*computation, Opcode::kWhile)) {
          if (loop->attrs().condition.value_or(nullptr) == nullptr ||
              loop->attrs().body.value_or(nullptr) == nullptr) {
            continue;
          }
          if (SimplifyKnownTripCount(loop, names, call_sites)) {
            removed.insert(loop);
          } else {
            RemoveUnneededStateElements(loop, call_sites, names, removed);
          }
        }
        if (removed.empty()) continue;
        computation->RemoveInstructions(removed);
        round_changed = true;
      }
      if (!round_changed) break;
      changed = true;
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeWhileLoopSimplifierPass() {
  return std::make_unique<WhileLoopSimplifierPass>();
}

}  // namespace seam
