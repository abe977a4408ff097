#include "seam/passes/pass.h"

#include <algorithm>

#include "seam/util/status_macros.h"

namespace seam {

absl::StatusOr<bool> ComputationPass::Run(Module& module) {
  const std::vector<Opcode> triggers = Triggers();
  auto triggered = [&](const Computation& c) {
    if (triggers.empty()) return true;
    return std::any_of(c.instructions().begin(), c.instructions().end(), [&](const auto& i) {
      return std::find(triggers.begin(), triggers.end(), i->opcode()) != triggers.end();
    });
  };
  std::vector<Computation*> computations;
  for (const auto& c : module.computations()) {
    if (triggered(*c)) computations.push_back(c.get());
  }
  if (!computations.empty()) Prepare(module);
  bool changed = false;
  for (Computation* c : computations) {
    SEAM_ASSIGN_OR_RETURN(bool changed_here, RunOnComputation(*c));
    changed |= changed_here;
  }
  return changed;
}

}  // namespace seam
