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

// Hoisting out of one loop, in phases: check the loop's form, find the
// values worth carrying in the state, build the new loop around them, make
// the body read them from the state, and point the loop's users at the new
// loop.
class LoopHoister {
 public:
  LoopHoister(Instruction* loop, NameUniquer& names) : loop_(loop), names_(names) {}

  bool Matches(const absl::flat_hash_map<const Computation*, int>& call_sites) {
    std::optional<ReshapableLoop> parts = MatchReshapableLoop(*loop_, call_sites);
    if (!parts) return false;
    body_ = parts->body;
    n_ = parts->elements;
    body_state_ = parts->body_state;
    condition_state_ = parts->condition_state;
    next_ = parts->next;
    return true;
  }

  // The hoisted values the body still reads and that are worth a state
  // element each; empty when nothing is worth hoisting.
  std::vector<Instruction*> Carried() {
    order_ = body_->MakePostOrder();
    absl::flat_hash_set<const Instruction*> hoisted = Hoisted();
    // Users first: a hoisted value still read in the body becomes a state
    // element when it is worth one, else it stays (a copy runs outside too).
    absl::flat_hash_set<const Instruction*> in_body;
    std::vector<Instruction*> carried;
    for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
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
    return carried;
  }

  // The new loop, its initial state extended by the carried values computed
  // outside from the initial state.
  Instruction* NewLoop(const std::vector<Instruction*>& carried) {
    const Shape& state = loop_->shape();
    HloBuilder outside(*loop_->parent(), names_);
    std::vector<Instruction*> init_elements;
    for (size_t k = 0; k < n_; ++k)
      init_elements.push_back(InitialStateElement(*loop_, k, outside));
    absl::flat_hash_set<const Instruction*> cone = ConeOnState(carried);
    absl::flat_hash_map<const Instruction*, Instruction*> outside_value;
    for (Instruction* i : order_) {
      if (!cone.contains(i)) continue;
      if (ReadsState(i)) {
        outside_value[i] = AdaptLayout(init_elements[*i->attrs().index], i->shape(), outside);
        continue;
      }
      std::vector<Instruction*> operands;
      for (const Instruction* operand : i->operands())
        operands.push_back(outside_value.at(operand));
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
    Instruction* new_loop = outside.Add(Opcode::kWhile, new_state, {new_init}, loop_->attrs());
    new_loop->set_name(names_.Make(loop_->name()));
    return new_loop;
  }

  // The body reads the carried values from the state and passes them on.
  void ReadCarriedInBody(const std::vector<Instruction*>& carried) {
    auto widen = [&](Instruction* parameter) {
      std::vector<Shape> elements = parameter->shape().tuple_shapes();
      for (Instruction* c : carried) elements.push_back(c->shape());
      parameter->mutable_shape() = Shape::Tuple(std::move(elements));
    };
    widen(body_state_);
    widen(condition_state_);
    HloBuilder inside(*body_, names_);
    std::vector<Instruction*> reads;
    for (size_t k = 0; k < carried.size(); ++k) {
      Instruction* read = inside.GetTupleElement(body_state_, static_cast<int64_t>(n_ + k));
      read->mutable_shape() = carried[k]->shape();
      carried[k]->ReplaceAllUsesWith(read);
      reads.push_back(read);
    }
    std::vector<Instruction*> updates = next_->operands();
    updates.insert(updates.end(), reads.begin(), reads.end());
    Instruction* new_next = inside.Tuple(std::move(updates));
    std::vector<Shape> next_shapes = next_->shape().tuple_shapes();
    for (Instruction* c : carried) next_shapes.push_back(c->shape());
    new_next->mutable_shape() = Shape::Tuple(std::move(next_shapes));
    body_->set_root(new_next);
    RemoveDeadInstructions(*body_);
  }

  // The loop's users read the old elements from the new loop.
  void RedirectUsers(Instruction* new_loop) {
    HloBuilder outside(*loop_->parent(), names_);
    auto old_state = [&] {
      std::vector<Instruction*> elements;
      for (size_t k = 0; k < n_; ++k) {
        elements.push_back(outside.GetTupleElement(new_loop, static_cast<int64_t>(k)));
      }
      Instruction* tuple = outside.Tuple(std::move(elements));
      tuple->mutable_shape() = loop_->shape();
      return tuple;
    };
    Instruction* whole = nullptr;
    std::vector<Instruction*> users = loop_->users();
    for (Instruction* user : users) {
      if (user->opcode() == Opcode::kGetTupleElement) {
        user->ReplaceOperand(0, new_loop);
        continue;
      }
      if (whole == nullptr) whole = old_state();
      for (int k = 0; k < user->operand_count(); ++k) {
        if (user->operand(k) == loop_) user->ReplaceOperand(k, whole);
      }
    }
    if (loop_->IsRoot()) loop_->parent()->set_root(old_state());
  }

 private:
  bool ReadsState(const Instruction* i) const {
    return i->opcode() == Opcode::kGetTupleElement && i->operand(0) == body_state_;
  }

  // An element of the state the body passes on unchanged.
  bool PassedThrough(const Instruction* i) const {
    if (!ReadsState(i)) return false;
    const Instruction* update = next_->operand(static_cast<int>(*i->attrs().index));
    return ReadsState(update) && update->attrs().index == i->attrs().index;
  }

  // Invariant values, then the hoisted set: what is worth it and its cone.
  absl::flat_hash_set<const Instruction*> Hoisted() const {
    absl::flat_hash_set<const Instruction*> invariant, hoisted;
    for (Instruction* i : order_) {
      if (i == next_) continue;
      bool is_invariant =
          PassedThrough(i) || (i->opcode() == Opcode::kConstant && !HasControlEdges(*i));
      if (!is_invariant && MayMove(*i)) {
        is_invariant = true;
        for (const Instruction* operand : i->operands())
          is_invariant &= invariant.contains(operand);
      }
      if (!is_invariant) continue;
      invariant.insert(i);
      if (!WorthHoisting(*i) || i->opcode() == Opcode::kGetTupleElement) continue;
      std::vector<const Instruction*> stack = {i};
      hoisted.insert(i);
      while (!stack.empty()) {
        const Instruction* h = stack.back();
        stack.pop_back();
        if (PassedThrough(h)) continue;  // read from the initial state outside
        for (const Instruction* operand : h->operands()) {
          if (hoisted.insert(operand).second) stack.push_back(operand);
        }
      }
    }
    return hoisted;
  }

  // The carried values and what they compute from, down to the state.
  absl::flat_hash_set<const Instruction*> ConeOnState(
      const std::vector<Instruction*>& carried) const {
    absl::flat_hash_set<const Instruction*> cone(carried.begin(), carried.end());
    std::vector<const Instruction*> stack(carried.begin(), carried.end());
    while (!stack.empty()) {
      const Instruction* h = stack.back();
      stack.pop_back();
      if (ReadsState(h)) continue;
      for (const Instruction* operand : h->operands()) {
        if (cone.insert(operand).second) stack.push_back(operand);
      }
    }
    return cone;
  }

  Instruction* loop_;
  NameUniquer& names_;
  Computation* body_ = nullptr;
  size_t n_ = 0;  // state elements
  Instruction* body_state_ = nullptr;
  Instruction* condition_state_ = nullptr;
  Instruction* next_ = nullptr;      // the body's root: the next state
  std::vector<Instruction*> order_;  // the body in post order, before any change
};

// Hoists what it can out of `loop`. True when it did; `loop` is then
// unused, for the caller to remove.
bool HoistInvariants(Instruction* loop,
                     const absl::flat_hash_map<const Computation*, int>& call_sites,
                     NameUniquer& names) {
  LoopHoister hoister(loop, names);
  if (!hoister.Matches(call_sites)) return false;
  std::vector<Instruction*> carried = hoister.Carried();
  if (carried.empty()) return false;
  Instruction* new_loop = hoister.NewLoop(carried);
  hoister.ReadCarriedInBody(carried);
  hoister.RedirectUsers(new_loop);
  return true;
}

class WhileLoopInvariantCodeMotionPass : public Pass {
 public:
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
