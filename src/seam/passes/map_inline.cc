// map-inline: map(a, b, ...) whose to_apply computation is one elementwise
// instruction on its parameters -> that instruction applied to the arrays
// directly, as XLA's MapInliner does (a constant root becomes a broadcast,
// a parameter root the matching operand). Front ends emit map for
// jnp.vectorize-style code; an opaque map blocks every simplifier and the
// fusion planner, while `add(a, b)` does not.
//
// Not inlined: computations with more than the root beyond their
// parameters, roots that are not elementwise (a map inside a map, a
// reduce...), maps with control edges.
#include "seam/passes/call_graph_util.h"
#include "seam/passes/pass.h"

namespace seam {
namespace {

// The one instruction of `f` that is neither a parameter nor dead, when
// every other instruction is a parameter.
const Instruction* SingleInstruction(const Computation& f) {
  const Instruction* root = f.root();
  if (root == nullptr || root->opcode() == Opcode::kParameter) return root;
  for (const auto& i : f.instructions()) {
    if (i.get() != root && i->opcode() != Opcode::kParameter) return nullptr;
  }
  return root;
}

Instruction* Inlined(Instruction* map, HloBuilder& builder) {
  if (!map->attrs().to_apply.has_value() || *map->attrs().to_apply == nullptr) return nullptr;
  const Instruction* root = SingleInstruction(**map->attrs().to_apply);
  if (root == nullptr || !root->control_predecessors().empty()) return nullptr;
  auto operand_for = [&](const Instruction* parameter) -> Instruction* {
    int64_t n = parameter->parameter_number();
    return n >= 0 && n < map->operand_count() ? map->operand(static_cast<int>(n)) : nullptr;
  };
  if (root->opcode() == Opcode::kParameter) {
    Instruction* x = operand_for(root);
    return x != nullptr && InterchangeableShapes(x->shape(), map->shape()) ? x : nullptr;
  }
  if (root->opcode() == Opcode::kConstant) {
    if (!root->shape().IsArray() || root->shape().rank() != 0) return nullptr;
    Instruction* scalar = builder.Clone(*root, {});
    Instruction* splat = builder.Broadcast(scalar, map->shape().dims(), {});
    splat->mutable_shape() = map->shape();
    return splat;
  }
  if (OpcodeCategory(root->opcode()) != OpCategory::kElementwise ||
      root->opcode() == Opcode::kMap || !IsRemovableWhenDead(*root)) {
    return nullptr;
  }
  std::vector<Instruction*> operands;
  for (const Instruction* parameter : root->operands()) {
    Instruction* x = operand_for(parameter);
    if (x == nullptr) return nullptr;
    operands.push_back(x);
  }
  Instruction* inlined = builder.Clone(*root, std::move(operands));
  inlined->mutable_shape() = map->shape();
  return inlined;
}

class MapInlinePass : public ComputationPass {
  std::vector<Opcode> Triggers() const override { return {Opcode::kMap}; }
  void Prepare(Module& module) override { names_.emplace(module); }
  absl::StatusOr<bool> RunOnComputation(Computation& computation) override {
    HloBuilder builder(computation, *names_);
    std::vector<Instruction*> maps;
    for (const auto& i : computation.instructions()) {
      if (i->opcode() == Opcode::kMap && !HasControlEdges(*i)) maps.push_back(i.get());
    }
    return ReplaceEach(computation, maps, [&](Instruction* map) { return Inlined(map, builder); });
  }

  std::optional<NameUniquer> names_;
};

}  // namespace

std::unique_ptr<Pass> MakeMapInlinePass() { return std::make_unique<MapInlinePass>(); }

}  // namespace seam
