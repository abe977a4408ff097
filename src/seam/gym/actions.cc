#include "seam/gym/actions.h"

#include "absl/strings/str_cat.h"
#include "seam/passes/registry.h"

namespace seam::gym {

int ActionCount() { return static_cast<int>(RegisteredPasses().size()) + 1; }

int StopAction() { return ActionCount() - 1; }

bool IsValidAction(int action) { return action >= 0 && action < ActionCount(); }

absl::string_view ActionName(int action) {
  return action == StopAction() ? "stop" : RegisteredPasses()[action].name;
}

absl::string_view ActionDescription(int action) {
  return action == StopAction() ? "Ends the episode, keeping the module as it is"
                                : RegisteredPasses()[action].description;
}

absl::StatusOr<int> ActionByName(absl::string_view name) {
  for (int a = 0; a < ActionCount(); ++a) {
    if (ActionName(a) == name) return a;
  }
  return absl::NotFoundError(absl::StrCat("no action '", name, "' (see `seam passes`, or 'stop')"));
}

std::unique_ptr<Pass> MakeActionPass(int action) { return RegisteredPasses()[action].Create(); }

}  // namespace seam::gym
