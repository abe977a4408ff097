#include "seam/gym/session.h"

#include <cmath>
#include <mutex>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "seam/gym/actions.h"
#include "seam/gym/benchmarks.h"
#include "seam/ir/module_clone.h"
#include "seam/ir/verifier.h"
#include "seam/passes/pipeline.h"
#include "seam/text/printer.h"
#include "seam/util/status_macros.h"

namespace seam::gym {
namespace {

absl::Status WithContext(const absl::Status& status, absl::string_view context) {
  return absl::Status(status.code(), absl::StrCat(context, ": ", status.message()));
}

bool NeedsPotential(RewardSpace space) { return space == RewardSpace::kShapedOpsVsDefault; }
bool NeedsStitch(RewardSpace space) {
  return space == RewardSpace::kCostTime || space == RewardSpace::kCostVsDefault;
}

// What cost_vs_default normalises by is at least this share of the start's
// time: where the default pipeline saves less (a third of the corpus: it
// saves nothing or slows the module), a step that gains 1% of the start
// earns 1, and an order slightly worse than the start costs a bounded
// return, not one divided by a rounding error.
constexpr double kMinCostGainShare = 0.01;

}  // namespace

Session::Session(SessionOptions options) : options_(std::move(options)) {}

absl::StatusOr<std::shared_ptr<const Session::Baseline>> Session::MakeBaseline(
    std::unique_ptr<Module> module, std::string benchmark) const {
  auto baseline = std::make_shared<Baseline>();
  baseline->benchmark = std::move(benchmark);
  if (options_.canonical_start) {
    SEAM_ASSIGN_OR_RETURN(Pipeline canonical, Pipeline::Parse(kPlanningPrerequisites));
    if (absl::StatusOr<bool> ran = canonical.Run(*module); !ran.ok()) {
      return WithContext(ran.status(), absl::StrCat(baseline->benchmark, ": the canonical forms failed"));
    }
  }
  baseline->initial_ops = module->InstructionCount();
  baseline->initial_potential = Potential(CountArithmetic(*module));
  std::unique_ptr<Module> optimised = CloneModule(*module);
  SEAM_ASSIGN_OR_RETURN(Pipeline pipeline, Pipeline::Parse("default"));
  if (absl::StatusOr<bool> ran = pipeline.Run(*optimised); !ran.ok()) {
    return WithContext(ran.status(), absl::StrCat(baseline->benchmark, ": the default pipeline failed"));
  }
  baseline->default_ops = optimised->InstructionCount();
  if (NeedsStitch(options_.reward_space)) {
    for (auto [state, cost] : {std::pair{module.get(), &baseline->initial_cost_us},
                               std::pair{optimised.get(), &baseline->default_cost_us}}) {
      absl::StatusOr<StitchEstimate> estimate = EstimateAfterStitch(*state, options_.device);
      if (!estimate.ok()) {
        return WithContext(estimate.status(), absl::StrCat(baseline->benchmark,
                                                           ": planning the stitch fusion failed"));
      }
      *cost = estimate->time_us;
    }
  }
  baseline->initial = std::move(module);
  return std::shared_ptr<const Baseline>(std::move(baseline));
}

absl::Status Session::Reset(absl::string_view benchmark) {
  static std::mutex mutex;
  static auto* baselines = new absl::flat_hash_map<std::string, std::shared_ptr<const Baseline>>();
  // Baselines measuring cost hold the plan's times for one device.
  std::string key =
      absl::StrCat(options_.canonical_start ? "canonical:" : "raw:",
                   NeedsStitch(options_.reward_space) ? options_.device.name : "", ":", benchmark);
  std::shared_ptr<const Baseline> baseline;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = baselines->find(key);
    if (it != baselines->end()) baseline = it->second;
  }
  if (baseline == nullptr) {
    SEAM_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, LoadBenchmark(benchmark));
    SEAM_ASSIGN_OR_RETURN(baseline, MakeBaseline(std::move(module), std::string(benchmark)));
    std::lock_guard<std::mutex> lock(mutex);
    baselines->emplace(key, baseline);
  }
  return Start(std::move(baseline));
}

absl::Status Session::Reset(std::unique_ptr<Module> module, std::string name) {
  if (module == nullptr) return absl::InvalidArgumentError("Reset: no module");
  SEAM_ASSIGN_OR_RETURN(std::shared_ptr<const Baseline> baseline, MakeBaseline(std::move(module), std::move(name)));
  return Start(std::move(baseline));
}

absl::Status Session::Start(std::shared_ptr<const Baseline> baseline) {
  baseline_ = std::move(baseline);
  module_ = baseline_->initial;
  known_unchanging_.assign(ActionCount() - 1, false);
  actions_.clear();
  changing_actions_.clear();
  steps_ = 0;
  last_pass_edits_ = 0;
  terminated_ = truncated_ = false;
  current_ = Metrics{module_->InstructionCount(), std::nullopt, std::nullopt};
  SEAM_RETURN_IF_ERROR(MeasureCurrent());
  previous_ = current_;
  return absl::OkStatus();
}

Module& Session::MutableModule() {
  // Copy on write: another fork (or the benchmark's cached module) holds it.
  if (module_.use_count() > 1) module_ = CloneModule(*module_);
  return *module_;
}

absl::Status Session::MeasureCurrent() {
  if (NeedsPotential(options_.reward_space) && !current_.potential.has_value()) {
    current_.potential = Potential(CountArithmetic(*module_));
  }
  if (NeedsStitch(options_.reward_space)) return CurrentStitch().status();
  return absl::OkStatus();
}

absl::StatusOr<StitchEstimate> Session::CurrentStitch() {
  if (!current_.stitch.has_value()) {
    absl::StatusOr<StitchEstimate> estimate = EstimateAfterStitch(*module_, options_.device);
    if (!estimate.ok()) {
      return WithContext(estimate.status(), absl::StrCat(benchmark(), " after step ", steps_,
                                                         ": planning the stitch fusion failed"));
    }
    current_.stitch = *estimate;
  }
  return *current_.stitch;
}

absl::StatusOr<StepResult> Session::Step(int action) {
  if (module_ == nullptr) return absl::FailedPreconditionError("Step: no episode; call Reset first");
  if (done()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "Step: the episode on ", benchmark(), " has ended (", terminated_ ? "STOP" : "step limit",
        " after ", steps_, " steps); call Reset"));
  }
  if (!IsValidAction(action)) {
    return absl::InvalidArgumentError(
        absl::StrCat("Step: action ", action, " is out of range [0, ", ActionCount(), ")"));
  }
  previous_ = current_;
  ++steps_;
  actions_.push_back(action);
  last_pass_edits_ = 0;
  StepResult result;
  if (action == StopAction()) {
    terminated_ = result.terminated = true;
  } else if (!known_unchanging_[action]) {
    Module& module = MutableModule();
    int64_t edits_before = module.edit_count();
    absl::StatusOr<bool> changed = MakeActionPass(action)->Run(module);
    std::string context = absl::StrCat(benchmark(), ": step ", steps_, " (", ActionName(action), ")");
    if (!changed.ok()) {
      terminated_ = true;
      return WithContext(changed.status(), context);
    }
    last_pass_edits_ = module.edit_count() - edits_before;
    result.changed = *changed;
    if (*changed) {
      if (options_.verify_each) {
        if (absl::Status valid = VerifyModule(module); !valid.ok()) {
          terminated_ = true;
          return WithContext(valid, absl::StrCat(context, " left an invalid module"));
        }
      }
      known_unchanging_.assign(known_unchanging_.size(), false);
      changing_actions_.push_back(action);
      current_ = Metrics{module.InstructionCount(), std::nullopt, std::nullopt};
      SEAM_RETURN_IF_ERROR(MeasureCurrent());
    } else {
      // Passes are deterministic: unchanged now, unchanged until something else changes it.
      // A pass that did change the module may change it again (algsimp, say), so it stays open.
      known_unchanging_[action] = true;
    }
  }
  if (!terminated_ && steps_ >= options_.max_steps) truncated_ = result.truncated = true;
  return result;
}

absl::StatusOr<Observation> Session::Observe(ObservationSpace space) {
  if (module_ == nullptr) return absl::FailedPreconditionError("Observe: no episode; call Reset first");
  switch (space) {
    case ObservationSpace::kOpcodeHistogram:
      return Observation(OpcodeHistogram(*module_));
    case ObservationSpace::kHloText:
      return Observation(PrintModule(*module_));
    case ObservationSpace::kFeatures: {
      SEAM_ASSIGN_OR_RETURN(StitchEstimate stitch, CurrentStitch());
      FeatureContext context{last_pass_edits_, steps_, stitch.dram_bytes};
      return Observation(GraphFeatures(*module_, context));
    }
  }
  return absl::InvalidArgumentError("Observe: unknown observation space");
}

double Session::DefaultGain() const {
  int64_t gain = baseline_->initial_ops - baseline_->default_ops;
  return static_cast<double>(gain > 0 ? gain : std::max<int64_t>(1, baseline_->initial_ops));
}

double Session::DefaultCostGain() const {
  double initial = baseline_->initial_cost_us.value_or(0),
         gain = initial - baseline_->default_cost_us.value_or(0);
  double floor = kMinCostGainShare * initial;
  return std::max(gain, floor > 0 ? floor : 1.0);
}

absl::StatusOr<double> Session::Reward(RewardSpace space) const {
  if (module_ == nullptr) return absl::FailedPreconditionError("Reward: no episode; call Reset first");
  double removed = static_cast<double>(previous_.ops - current_.ops);
  switch (space) {
    case RewardSpace::kOpsDelta:
      return removed;
    case RewardSpace::kOpsNormalized:
      return removed / static_cast<double>(std::max<int64_t>(1, baseline_->initial_ops));
    case RewardSpace::kOpsVsDefault:
      return removed / DefaultGain();
    case RewardSpace::kCostTime:
    case RewardSpace::kCostVsDefault: {
      if (!previous_.stitch.has_value() || !current_.stitch.has_value() ||
          !baseline_->initial_cost_us.has_value()) {
        break;
      }
      double saved = previous_.stitch->time_us - current_.stitch->time_us;
      return space == RewardSpace::kCostTime ? saved : saved / DefaultCostGain();
    }
    case RewardSpace::kShapedOpsVsDefault: {
      if (!previous_.potential.has_value() || !current_.potential.has_value()) break;
      double scale = std::max(1.0, std::abs(baseline_->initial_potential));
      return removed / DefaultGain() + (*current_.potential - *previous_.potential) / scale;
    }
  }
  return absl::FailedPreconditionError(absl::StrCat("Reward: the session measures ",
                                                    RewardSpaceName(space), " only when it is the options' reward_space"));
}

const std::string& Session::benchmark() const {
  static const std::string kNone = "<no episode>";
  return baseline_ == nullptr ? kNone : baseline_->benchmark;
}

int64_t Session::initial_ops() const { return baseline_ == nullptr ? 0 : baseline_->initial_ops; }
int64_t Session::default_ops() const { return baseline_ == nullptr ? 0 : baseline_->default_ops; }
std::optional<double> Session::initial_cost_us() const {
  return baseline_ == nullptr ? std::nullopt : baseline_->initial_cost_us;
}
std::optional<double> Session::default_cost_us() const {
  return baseline_ == nullptr ? std::nullopt : baseline_->default_cost_us;
}

std::string Session::PassSpec() const {
  std::vector<std::string> names;
  if (options_.canonical_start) names.emplace_back(kPlanningPrerequisites);
  for (int action : changing_actions_) names.emplace_back(ActionName(action));
  return absl::StrJoin(names, ",");
}

std::vector<bool> Session::ActionMask() const {
  std::vector<bool> mask(ActionCount(), true);
  for (size_t a = 0; a < known_unchanging_.size(); ++a) mask[a] = !known_unchanging_[a];
  return mask;
}

}  // namespace seam::gym
