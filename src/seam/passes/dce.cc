// dce: removes instructions whose values nothing uses (unless they have side
// effects) and computations no instruction calls. Every other pass leaves
// dead code behind it and relies on this one to sweep it up.
#include "absl/container/flat_hash_set.h"
#include "seam/ir/hlo_builder.h"
#include "seam/passes/call_graph_util.h"
#include "seam/passes/pass.h"

namespace seam {
namespace {

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
