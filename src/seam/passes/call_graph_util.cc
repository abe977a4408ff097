#include "seam/passes/call_graph_util.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "seam/util/status_macros.h"

namespace seam {
namespace {

// The dimensions from minor to major as the interpreter reads them (see
// eval/data_movement.cc): the layout's, or row-major.
std::vector<int64_t> MinorToMajor(const Shape& shape) {
  if (shape.layout().has_value() &&
      shape.layout()->minor_to_major.size() == static_cast<size_t>(shape.rank())) {
    return shape.layout()->minor_to_major;
  }
  std::vector<int64_t> order;
  for (int d = shape.rank() - 1; d >= 0; --d) order.push_back(d);
  return order;
}

}  // namespace

bool InterchangeableShapes(const Shape& a, const Shape& b) {
  if (a.IsTuple() != b.IsTuple()) return false;
  if (a.IsTuple()) {
    if (a.tuple_shapes().size() != b.tuple_shapes().size()) return false;
    for (size_t k = 0; k < a.tuple_shapes().size(); ++k) {
      if (!InterchangeableShapes(a.tuple_shapes()[k], b.tuple_shapes()[k])) return false;
    }
    return true;
  }
  if (a.dtype() != b.dtype() || a.dims() != b.dims()) return false;
  for (int d = 0; d < a.rank(); ++d) {
    if (a.IsDynamicDim(d) != b.IsDynamicDim(d)) return false;
  }
  return a.IsToken() || MinorToMajor(a) == MinorToMajor(b);
}

Instruction* AdaptLayout(Instruction* value, const Shape& want, HloBuilder& builder) {
  if (InterchangeableShapes(value->shape(), want)) return value;
  if (!want.IsTuple()) return builder.Add(Opcode::kCopy, want, {value});
  std::vector<Instruction*> elements;
  for (size_t k = 0; k < want.tuple_shapes().size(); ++k) {
    Instruction* element = builder.GetTupleElement(value, static_cast<int64_t>(k));
    elements.push_back(AdaptLayout(element, want.tuple_shapes()[k], builder));
  }
  Instruction* tuple = builder.Tuple(std::move(elements));
  tuple->mutable_shape() = want;
  return tuple;
}

bool HasControlEdges(const Instruction& instruction) {
  return !instruction.control_predecessors().empty() ||
         !instruction.control_successors().empty();
}

std::vector<Instruction*> InstructionsWithOpcode(const Computation& computation, Opcode opcode) {
  std::vector<Instruction*> found;
  for (const auto& i : computation.instructions()) {
    if (i->opcode() == opcode) found.push_back(i.get());
  }
  return found;
}

bool ContainsOpcode(const Module& module, Opcode opcode) {
  for (const auto& computation : module.computations()) {
    for (const auto& i : computation->instructions()) {
      if (i->opcode() == opcode) return true;
    }
  }
  return false;
}

Instruction* InlineComputation(const Computation& callee,
                               const std::vector<Instruction*>& arguments,
                               const Shape& result_shape, HloBuilder& builder,
                               const std::vector<Instruction*>& predecessors,
                               const std::vector<Instruction*>& successors) {
  absl::flat_hash_map<const Instruction*, Instruction*> map;
  absl::flat_hash_set<const Instruction*> cloned;
  std::vector<Instruction*> order = callee.MakePostOrder();
  for (Instruction* i : order) {
    if (i->opcode() == Opcode::kParameter) {
      size_t n = static_cast<size_t>(i->parameter_number());
      SEAM_CHECK(n < arguments.size());
      map[i] = AdaptLayout(arguments[n], i->shape(), builder);
      continue;
    }
    std::vector<Instruction*> operands;
    for (const Instruction* operand : i->operands()) operands.push_back(map.at(operand));
    Instruction* copy = builder.Clone(*i, std::move(operands));
    for (const Instruction* predecessor : i->control_predecessors()) {
      copy->AddControlPredecessor(map.at(predecessor));
    }
    map[i] = copy;
    cloned.insert(copy);
  }
  // Ordering of the replaced instruction: its predecessors before the
  // clones that depend on no other clone, its successors after the clones
  // nothing cloned uses (every clone lies between some such pair).
  if (!predecessors.empty() || !successors.empty()) {
    for (const Instruction* i : order) {
      Instruction* copy = map.at(i);
      if (!cloned.contains(copy)) continue;
      bool source = true;
      for (const Instruction* operand : copy->operands()) source &= !cloned.contains(operand);
      for (const Instruction* p : copy->control_predecessors()) source &= !cloned.contains(p);
      bool sink = true;
      for (const Instruction* user : copy->users()) sink &= !cloned.contains(user);
      for (const Instruction* s : copy->control_successors()) sink &= !cloned.contains(s);
      if (source) {
        for (Instruction* p : predecessors) copy->AddControlPredecessor(p);
      }
      if (sink) {
        for (Instruction* s : successors) s->AddControlPredecessor(copy);
      }
    }
  }
  Instruction* root = AdaptLayout(map.at(callee.root()), result_shape, builder);
  if (!cloned.contains(root)) {
    for (Instruction* s : successors) s->AddControlPredecessor(root);
  }
  return root;
}

void ReplaceWithInlinedComputation(Instruction* old, const Computation& callee,
                                   const std::vector<Instruction*>& arguments,
                                   NameUniquer& names) {
  HloBuilder builder(*old->parent(), names);
  std::vector<Instruction*> predecessors = old->control_predecessors();
  std::vector<Instruction*> successors = old->control_successors();
  Instruction* value =
      InlineComputation(callee, arguments, old->shape(), builder, predecessors, successors);
  old->ReplaceAllUsesWith(value);
  old->DetachControlEdges();
}

ComputationNameUniquer::ComputationNameUniquer(const Module& module) {
  for (const auto& computation : module.computations()) used_.insert(computation->name());
}

std::string ComputationNameUniquer::Make(absl::string_view base) {
  size_t dot = base.rfind('.');
  int64_t ignored;
  if (dot != absl::string_view::npos && absl::SimpleAtoi(base.substr(dot + 1), &ignored)) {
    base = base.substr(0, dot);
  }
  for (int64_t n = 1;; ++n) {
    std::string name = absl::StrCat(base, ".clone.", n);
    if (used_.insert(name).second) return name;
  }
}

Computation* CloneComputation(const Computation& original, Module& module,
                              NameUniquer& names, ComputationNameUniquer& computation_names) {
  auto owned = std::make_unique<Computation>(computation_names.Make(original.name()));
  owned->set_has_signature(original.has_signature());
  owned->set_location(original.location());
  Computation* copy = module.AddComputation(std::move(owned));
  HloBuilder builder(*copy, names);
  absl::flat_hash_map<const Instruction*, Instruction*> map;
  for (Instruction* i : original.MakePostOrder()) {
    std::vector<Instruction*> operands;
    for (const Instruction* operand : i->operands()) operands.push_back(map.at(operand));
    Instruction* clone = builder.Clone(*i, std::move(operands));
    for (const Instruction* predecessor : i->control_predecessors()) {
      clone->AddControlPredecessor(map.at(predecessor));
    }
    map[i] = clone;
  }
  if (original.root() != nullptr) copy->set_root(map.at(original.root()));
  return copy;
}

absl::flat_hash_map<const Computation*, int> CountCallSites(const Module& module) {
  absl::flat_hash_map<const Computation*, int> counts;
  if (module.entry() != nullptr) ++counts[module.entry()];
  for (const auto& computation : module.computations()) {
    for (const auto& i : computation->instructions()) {
      for (const Computation* called : i->CalledComputations()) ++counts[called];
    }
  }
  return counts;
}

int CallSites(const absl::flat_hash_map<const Computation*, int>& counts,
              const Computation* computation) {
  auto it = counts.find(computation);
  return it == counts.end() ? 0 : it->second;
}

Instruction* LoopStateParameter(const Computation& c, size_t elements) {
  if (c.parameter_count() != 1 || c.parameter(0) == nullptr) return nullptr;
  Instruction* state = c.parameter(0);
  if (state->IsRoot() || HasControlEdges(*state) || !state->shape().IsTuple() ||
      state->shape().tuple_shapes().size() != elements) {
    return nullptr;
  }
  for (const Instruction* user : state->users()) {
    if (user->opcode() != Opcode::kGetTupleElement || !user->attrs().index.has_value() ||
        *user->attrs().index < 0 || static_cast<size_t>(*user->attrs().index) >= elements) {
      return nullptr;
    }
  }
  return state;
}

std::optional<ReshapableLoop> MatchReshapableLoop(
    const Instruction& loop, const absl::flat_hash_map<const Computation*, int>& call_sites) {
  if (loop.attrs().condition.value_or(nullptr) == nullptr ||
      loop.attrs().body.value_or(nullptr) == nullptr) {
    return std::nullopt;
  }
  ReshapableLoop parts;
  parts.condition = *loop.attrs().condition;
  parts.body = *loop.attrs().body;
  const Shape& state = loop.shape();
  if (parts.condition == parts.body || CallSites(call_sites, parts.condition) != 1 ||
      CallSites(call_sites, parts.body) != 1 || HasControlEdges(loop) || !state.IsTuple()) {
    return std::nullopt;
  }
  parts.elements = state.tuple_shapes().size();
  parts.body_state = LoopStateParameter(*parts.body, parts.elements);
  parts.condition_state = LoopStateParameter(*parts.condition, parts.elements);
  parts.next = parts.body->root();
  if (parts.body_state == nullptr || parts.condition_state == nullptr ||
      parts.next->opcode() != Opcode::kTuple ||
      static_cast<size_t>(parts.next->operand_count()) != parts.elements ||
      !parts.next->users().empty() || HasControlEdges(*parts.next)) {
    return std::nullopt;
  }
  return parts;
}

Instruction* InitialStateElement(const Instruction& loop, size_t k, HloBuilder& outside) {
  Instruction* init = loop.operand(0);
  Instruction* element = init->opcode() == Opcode::kTuple
                             ? init->operand(static_cast<int>(k))
                             : outside.GetTupleElement(init, static_cast<int64_t>(k));
  return AdaptLayout(element, loop.shape().tuple_shapes()[k], outside);
}

bool ReplaceEach(Computation& computation, const std::vector<Instruction*>& candidates,
                 absl::FunctionRef<Instruction*(Instruction*)> replacement) {
  absl::flat_hash_set<Instruction*> replaced;
  for (Instruction* i : candidates) {
    Instruction* value = replacement(i);
    if (value == nullptr) continue;
    i->ReplaceAllUsesWith(value);
    replaced.insert(i);
  }
  if (replaced.empty()) return false;
  computation.RemoveInstructions(replaced);
  return true;
}

bool ReplaceByOperand(Module& module, bool (*is_identity)(const Instruction&)) {
  bool changed = false;
  for (const auto& computation : module.computations()) {
    std::vector<Instruction*> identities;
    for (const auto& i : computation->instructions()) {
      if (is_identity(*i)) identities.push_back(i.get());
    }
    changed |= ReplaceEach(*computation, identities, [](Instruction* i) { return i->operand(0); });
  }
  return changed;
}

bool RemoveDeadInstructions(Computation& computation) {
  absl::flat_hash_set<const Instruction*> live;
  std::vector<const Instruction*> stack;
  auto mark = [&](const Instruction* i) {
    if (live.insert(i).second) stack.push_back(i);
  };
  if (computation.root() != nullptr) mark(computation.root());
  for (const auto& i : computation.instructions()) {
    if (!IsRemovableWhenDead(*i)) mark(i.get());
  }
  while (!stack.empty()) {
    const Instruction* i = stack.back();
    stack.pop_back();
    for (const Instruction* operand : i->operands()) mark(operand);
    for (const Instruction* predecessor : i->control_predecessors()) mark(predecessor);
  }
  absl::flat_hash_set<Instruction*> dead;
  for (const auto& i : computation.instructions()) {
    if (!live.contains(i.get())) dead.insert(i.get());
  }
  if (dead.empty()) return false;
  computation.RemoveInstructions(dead);
  return true;
}

}  // namespace seam
