// while-loop-invariant-code-motion: computes outside a while loop what its
// body computes the same way on every iteration, and hands the result in as
// a new loop-state element, as XLA's WhileLoopInvariantCodeMotion does.
// Scan-style training loops recompute transposes of weights, masks and
// normalisation constants each step; hoisted, they run once.
//
// Loop-invariant: constants, reads of state elements the body passes
// through unchanged (root operand i is get-tuple-element(state, i)), and
// instructions without side effects or control edges whose operands are all
// loop-invariant. Control flow, custom-calls, collectives, barriers and
// token ops are never moved.
//
// Hoisted: only what is worth a state element. Like XLA, constants,
// broadcasts, reshapes, transposes, slices, iotas, tuples and
// get-tuple-elements are not hoisted for their own sake (they would only
// widen the state); they move out only as operands of something that is,
// and a copy stays in the body for their other users. The loop's body and
// condition must belong to this loop alone (see flatten-call-graph), and
// the state must be read only through get-tuple-element.
#include "seam/passes/call_graph_util.h"
#include "seam/passes/pass.h"

namespace seam {
namespace {

bool MayMove(const Instruction& i) {
  if (i.opcode() == Opcode::kParameter || !IsRemovableWhenDead(i) || HasControlEdges(i)) {
    return false;
  }
  if (i.shape().IsToken()) return false;
  for (const Shape& element : i.shape().tuple_shapes()) {
    if (element.IsToken() || element.IsTuple()) return false;
  }
  switch (i.opcode()) {
    case Opcode::kWhile:
    case Opcode::kConditional:
    case Opcode::kCall:
    case Opcode::kCustomCall:
    case Opcode::kOptimizationBarrier:
    case Opcode::kAddDependency:
    case Opcode::kAfterAll:
    case Opcode::kDomain:
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
    case Opcode::kCopyStart:
    case Opcode::kCopyDone:
    case Opcode::kPartitionId:
    case Opcode::kReplicaId:
      return false;
    default:
      return OpcodeCategory(i.opcode()) != OpCategory::kCollective;
  }
}

bool WorthHoisting(const Instruction& i) {
  switch (i.opcode()) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kReshape:
    case Opcode::kBitcast:
    case Opcode::kBroadcast:
    case Opcode::kIota:
    case Opcode::kReverse:
    case Opcode::kSlice:
    case Opcode::kTranspose:
    case Opcode::kTuple:
    case Opcode::kGetTupleElement:
      return false;
    default:
      return true;
  }
}

// Hoists what it can out of `loop`. True when it did; `loop` is then
// unused, for the caller to remove.
bool HoistInvariants(Instruction* loop,
                     const absl::flat_hash_map<const Computation*, int>& call_sites,
                     NameUniquer& names) {
  if (loop->attrs().condition.value_or(nullptr) == nullptr ||
      loop->attrs().body.value_or(nullptr) == nullptr) {
    return false;
  }
  Computation* condition = *loop->attrs().condition;
  Computation* body = *loop->attrs().body;
  const Shape& state = loop->shape();
  if (condition == body || CallSites(call_sites, condition) != 1 || CallSites(call_sites, body) != 1 ||
      HasControlEdges(*loop) || !state.IsTuple()) {
    return false;
  }
  size_t n = state.tuple_shapes().size();
  Instruction* body_state = LoopStateParameter(*body, n);
  Instruction* condition_state = LoopStateParameter(*condition, n);
  Instruction* next = body->root();
  if (body_state == nullptr || condition_state == nullptr || next->opcode() != Opcode::kTuple ||
      static_cast<size_t>(next->operand_count()) != n || !next->users().empty() ||
      HasControlEdges(*next)) {
    return false;
  }
  auto passed_through = [&](const Instruction* i) {
    if (i->opcode() != Opcode::kGetTupleElement || i->operand(0) != body_state) return false;
    const Instruction* update = next->operand(static_cast<int>(*i->attrs().index));
    return update->opcode() == Opcode::kGetTupleElement && update->operand(0) == body_state &&
           update->attrs().index == i->attrs().index;
  };

  // Invariant values, then the hoisted set: what is worth it and its cone.
  std::vector<Instruction*> order = body->MakePostOrder();
  absl::flat_hash_set<const Instruction*> invariant, hoisted;
  for (Instruction* i : order) {
    if (i == next) continue;
    bool is_invariant = passed_through(i) ||
                        (i->opcode() == Opcode::kConstant && !HasControlEdges(*i));
    if (!is_invariant && MayMove(*i)) {
      is_invariant = true;
      for (const Instruction* operand : i->operands()) is_invariant &= invariant.contains(operand);
    }
    if (!is_invariant) continue;
    invariant.insert(i);
    if (!WorthHoisting(*i) || i->opcode() == Opcode::kGetTupleElement) continue;
    std::vector<const Instruction*> stack = {i};
    hoisted.insert(i);
    while (!stack.empty()) {
      const Instruction* h = stack.back();
      stack.pop_back();
      if (passed_through(h)) continue;  // read from the initial state outside
      for (const Instruction* operand : h->operands()) {
        if (hoisted.insert(operand).second) stack.push_back(operand);
      }
    }
  }
  // Users first: a hoisted value still read in the body becomes a state
  // element when it is worth one, else it stays (a copy runs outside too).
  absl::flat_hash_set<const Instruction*> in_body;
  std::vector<Instruction*> carried;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Instruction* i = *it;
    if (!hoisted.contains(i)) {
      in_body.insert(i);
      continue;
    }
    bool read = false;
    for (const Instruction* user : i->users()) read |= in_body.contains(user);
    if (!read) continue;
    if (WorthHoisting(*i)) {
      carried.push_back(i);
    } else {
      in_body.insert(i);
    }
  }
  if (carried.empty()) return false;

  // Outside: the cone of the carried values on the initial state.
  HloBuilder outside(*loop->parent(), names);
  Instruction* init = loop->operand(0);
  std::vector<Instruction*> init_elements;
  for (size_t k = 0; k < n; ++k) {
    Instruction* element = init->opcode() == Opcode::kTuple
                               ? init->operand(static_cast<int>(k))
                               : outside.GetTupleElement(init, static_cast<int64_t>(k));
    init_elements.push_back(AdaptLayout(element, state.tuple_shapes()[k], outside));
  }
  absl::flat_hash_set<const Instruction*> cone(carried.begin(), carried.end());
  std::vector<const Instruction*> stack(carried.begin(), carried.end());
  while (!stack.empty()) {
    const Instruction* h = stack.back();
    stack.pop_back();
    if (h->opcode() == Opcode::kGetTupleElement && h->operand(0) == body_state) continue;
    for (const Instruction* operand : h->operands()) {
      if (cone.insert(operand).second) stack.push_back(operand);
    }
  }
  absl::flat_hash_map<const Instruction*, Instruction*> outside_value;
  for (Instruction* i : order) {
    if (!cone.contains(i)) continue;
    if (i->opcode() == Opcode::kGetTupleElement && i->operand(0) == body_state) {
      outside_value[i] =
          AdaptLayout(init_elements[*i->attrs().index], i->shape(), outside);
      continue;
    }
    std::vector<Instruction*> operands;
    for (const Instruction* operand : i->operands()) operands.push_back(outside_value.at(operand));
    outside_value[i] = outside.Clone(*i, std::move(operands));
  }
  std::vector<Shape> shapes = state.tuple_shapes();
  for (Instruction* c : carried) {
    init_elements.push_back(outside_value.at(c));
    shapes.push_back(c->shape());
  }
  Shape new_state = Shape::Tuple(shapes);
  Instruction* new_init = outside.Tuple(std::move(init_elements));
  new_init->mutable_shape() = new_state;
  Instruction* new_loop = outside.Add(Opcode::kWhile, new_state, {new_init}, loop->attrs());
  new_loop->set_name(names.Make(loop->name()));

  // The body reads the carried values from the state and passes them on.
  auto widen = [&](Instruction* parameter) {
    std::vector<Shape> elements = parameter->shape().tuple_shapes();
    for (Instruction* c : carried) elements.push_back(c->shape());
    parameter->mutable_shape() = Shape::Tuple(std::move(elements));
  };
  widen(body_state);
  widen(condition_state);
  HloBuilder inside(*body, names);
  std::vector<Instruction*> reads;
  for (size_t k = 0; k < carried.size(); ++k) {
    Instruction* read = inside.GetTupleElement(body_state, static_cast<int64_t>(n + k));
    read->mutable_shape() = carried[k]->shape();
    carried[k]->ReplaceAllUsesWith(read);
    reads.push_back(read);
  }
  std::vector<Instruction*> updates = next->operands();
  updates.insert(updates.end(), reads.begin(), reads.end());
  Instruction* new_next = inside.Tuple(std::move(updates));
  std::vector<Shape> next_shapes = next->shape().tuple_shapes();
  for (Instruction* c : carried) next_shapes.push_back(c->shape());
  new_next->mutable_shape() = Shape::Tuple(std::move(next_shapes));
  body->set_root(new_next);
  RemoveDeadInstructions(*body);

  // The caller reads the old elements from the new loop.
  Instruction* whole = nullptr;
  std::vector<Instruction*> users = loop->users();
  for (Instruction* user : users) {
    if (user->opcode() == Opcode::kGetTupleElement) {
      user->ReplaceOperand(0, new_loop);
      continue;
    }
    if (whole == nullptr) {
      std::vector<Instruction*> elements;
      for (size_t k = 0; k < n; ++k) {
        elements.push_back(outside.GetTupleElement(new_loop, static_cast<int64_t>(k)));
      }
      whole = outside.Tuple(std::move(elements));
      whole->mutable_shape() = state;
    }
    for (int k = 0; k < user->operand_count(); ++k) {
      if (user->operand(k) == loop) user->ReplaceOperand(k, whole);
    }
  }
  if (loop->IsRoot()) {
    std::vector<Instruction*> elements;
    for (size_t k = 0; k < n; ++k) {
      elements.push_back(outside.GetTupleElement(new_loop, static_cast<int64_t>(k)));
    }
    Instruction* root = outside.Tuple(std::move(elements));
    root->mutable_shape() = state;
    loop->parent()->set_root(root);
  }
  return true;
}

class WhileLoopInvariantCodeMotionPass : public Pass {
 public:
  absl::string_view name() const override { return "while-loop-invariant-code-motion"; }
  absl::StatusOr<bool> Run(Module& module) override {
    if (!ContainsOpcode(module, Opcode::kWhile)) return false;
    // Inner loops first: what leaves an inner loop may then leave the outer.
    absl::StatusOr<std::vector<Computation*>> order = module.MakeComputationPostOrder();
    if (!order.ok()) return order.status();
    absl::flat_hash_map<const Computation*, int> call_sites = CountCallSites(module);
    NameUniquer names(module);
    bool changed = false;
    for (Computation* computation : *order) {
      absl::flat_hash_set<Instruction*> removed;
      for (Instruction* loop : InstructionsWithOpcode(*computation, Opcode::kWhile)) {
        if (HoistInvariants(loop, call_sites, names)) removed.insert(loop);
      }
      if (removed.empty()) continue;
      computation->RemoveInstructions(removed);
      changed = true;
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeWhileLoopInvariantCodeMotionPass() {
  return std::make_unique<WhileLoopInvariantCodeMotionPass>();
}

}  // namespace seam
