// dce: removes instructions whose values nothing uses (unless they have side
// effects) and computations no instruction calls. Every other pass leaves
// dead code behind it and relies on this one to sweep it up.
#include "absl/container/flat_hash_set.h"
#include "seam/passes/hlo_builder.h"
#include "seam/passes/pass.h"

namespace seam {
namespace {

// Live instructions: reachable from the root through operands and control
// predecessors, or side-effecting.
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

bool RemoveUncalledComputations(Module& module) {
  absl::flat_hash_set<const Computation*> reachable;
  std::vector<const Computation*> stack;
  auto mark = [&](const Computation* c) {
    if (c != nullptr && reachable.insert(c).second) stack.push_back(c);
  };
  mark(module.entry());
  while (!stack.empty()) {
    const Computation* c = stack.back();
    stack.pop_back();
    for (const auto& i : c->instructions()) {
      for (const Computation* called : i->CalledComputations()) mark(called);
    }
  }
  std::vector<Computation*> dead;
  for (const auto& c : module.computations()) {
    if (!reachable.contains(c.get())) dead.push_back(c.get());
  }
  for (Computation* c : dead) module.RemoveComputation(c);
  return !dead.empty();
}

class DcePass : public Pass {
 public:
  absl::string_view name() const override { return "dce"; }
  absl::StatusOr<bool> Run(Module& module) override {
    bool changed = false;
    for (const auto& computation : module.computations()) {
      changed |= RemoveDeadInstructions(*computation);
    }
    changed |= RemoveUncalledComputations(module);
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeDcePass() { return std::make_unique<DcePass>(); }

}  // namespace seam
