// The gym's actions: every pass of the registry (passes.def order, so the
// list is data, not code), then the default pipeline's fixpoint phases
// (named pipelines: one step runs a loop that single passes would take
// more steps than an episode has to reach), and STOP, the last action,
// which ends an episode.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "seam/passes/pass.h"

namespace seam::gym {

// Registered passes + phases + 1.
int ActionCount();
// The index of STOP (== ActionCount() - 1).
int StopAction();
bool IsValidAction(int action);
// The pass or phase name, or "stop".
absl::string_view ActionName(int action);
absl::string_view ActionDescription(int action);
// By name: a registered pass, a phase or "stop".
absl::StatusOr<int> ActionByName(absl::string_view name);
// A fresh instance of the pass (or phase) behind a (non-STOP) action.
std::unique_ptr<Pass> MakeActionPass(int action);

}  // namespace seam::gym
