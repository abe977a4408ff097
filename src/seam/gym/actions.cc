#include "seam/gym/actions.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "seam/passes/pipeline.h"
#include "seam/passes/registry.h"

namespace seam::gym {
namespace {

// The default pipeline's fixpoint phases (every named pipeline but
// `default` itself), after the passes.
const std::vector<const NamedPipeline*>& Phases() {
  static const auto* phases = [] {
    auto* list = new std::vector<const NamedPipeline*>();
    for (const NamedPipeline& named : NamedPipelines()) {
      if (named.name != "default") list->push_back(&named);
    }
    return list;
  }();
  return *phases;
}

int PassCount() { return static_cast<int>(RegisteredPasses().size()); }

// A phase run as one action.
class PhasePass : public Pass {
 public:
  explicit PhasePass(Pipeline pipeline) : pipeline_(std::move(pipeline)) {}
  absl::StatusOr<bool> Run(Module& module) override { return pipeline_.Run(module); }

 private:
  Pipeline pipeline_;
};

}  // namespace

int ActionCount() { return PassCount() + static_cast<int>(Phases().size()) + 1; }

int StopAction() { return ActionCount() - 1; }

bool IsValidAction(int action) { return action >= 0 && action < ActionCount(); }

absl::string_view ActionName(int action) {
  if (action == StopAction()) return "stop";
  return action < PassCount() ? RegisteredPasses()[action].name
                              : Phases()[action - PassCount()]->name;
}

absl::string_view ActionDescription(int action) {
  if (action == StopAction()) return "Ends the episode, keeping the module as it is";
  return action < PassCount() ? RegisteredPasses()[action].description
                              : Phases()[action - PassCount()]->description;
}

absl::StatusOr<int> ActionByName(absl::string_view name) {
  for (int a = 0; a < ActionCount(); ++a) {
    if (ActionName(a) == name) return a;
  }
  return absl::NotFoundError(absl::StrCat("no action '", name, "' (see `seam passes`, or 'stop')"));
}

std::unique_ptr<Pass> MakeActionPass(int action) {
  if (action < PassCount()) return RegisteredPasses()[action].Create();
  // The phases' specs are Seam's own and parse.
  absl::StatusOr<Pipeline> phase = Pipeline::Parse(Phases()[action - PassCount()]->spec);
  return std::make_unique<PhasePass>(*std::move(phase));
}

}  // namespace seam::gym
