// A pass-ordering session (after CompilerGym's CompilationSession): a module
// that actions (passes, or STOP) rewrite step by step, with observations and
// rewards of the current state. Fork() copies a session cheaply: forks share
// the module until one of them changes it (copy on write).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "seam/gym/cost_analysis.h"
#include "seam/gym/observations.h"
#include "seam/gym/spaces.h"
#include "seam/ir/module.h"
#include "seam/target/device_spec.h"

namespace seam::gym {

struct SessionOptions {
  // Steps after which an episode is truncated.
  int max_steps = 50;
  // What Reward() returns; the cost rewards and the shaped reward make every
  // step measure the state before and after it (a fusion plan, or a count).
  RewardSpace reward_space = RewardSpace::kOpsVsDefault;
  // The device the cost model plans for (cost_time, dram_bytes_after_stitch).
  target::DeviceSpec device = target::HostCpuSpec();
  // Run the verifier after every step that changes the module.
  bool verify_each = false;
  // Start episodes from the planner's canonical forms (the gym's
  // kPlanningPrerequisites), so that op counts compare with the default
  // pipeline like for like: it expands batch norms into the ops the kernels
  // compute, and a raw count calls each of them one op.
  bool canonical_start = false;
};

struct StepResult {
  bool changed = false;     // the pass rewrote the module
  bool terminated = false;  // STOP was taken
  bool truncated = false;   // max_steps reached
};

class Session {
 public:
  explicit Session(SessionOptions options = {});

  // Starts an episode on a benchmark URI. The initial and
  // default-pipeline op counts are computed once per URI and process.
  absl::Status Reset(absl::string_view benchmark);
  // Starts an episode on a module given directly; `name` labels it.
  absl::Status Reset(std::unique_ptr<Module> module, std::string name);

  // Applies an action. Errors: no episode, an ended episode, an action out
  // of range, or a pass failing (which ends the episode).
  absl::StatusOr<StepResult> Step(int action);

  // An independent copy of the session, sharing the module until either
  // side steps.
  Session Fork() const { return *this; }

  absl::StatusOr<Observation> Observe(ObservationSpace space);
  // The reward of the last step (0 before the first) in a space; cost_time
  // and the shaped reward need options.reward_space set to them.
  absl::StatusOr<double> Reward(RewardSpace space) const;
  absl::StatusOr<double> Reward() const { return Reward(options_.reward_space); }

  const SessionOptions& options() const { return options_; }
  bool has_episode() const { return module_ != nullptr; }
  const std::string& benchmark() const;
  const Module& module() const { return *module_; }
  int64_t ops() const { return current_.ops; }
  // The cost model's time after stitch fusion of the current state, when
  // the session measures it (a cost reward space).
  std::optional<double> cost_us() const {
    return current_.stitch.has_value() ? std::optional<double>(current_.stitch->time_us) : std::nullopt;
  }
  int64_t initial_ops() const;
  int64_t default_ops() const;
  // The cost model's times of the episode's start and of the default
  // pipeline's result, when the session measures cost.
  std::optional<double> initial_cost_us() const;
  std::optional<double> default_cost_us() const;
  int steps() const { return steps_; }
  bool done() const { return terminated_ || truncated_; }
  // Every action taken, in order.
  const std::vector<int>& actions() const { return actions_; }
  // The actions that changed the module, as a pipeline spec ("" if none),
  // after the canonical forms when episodes start from them: running it
  // from the benchmark reproduces the current module.
  std::string PassSpec() const;
  // Per action: false where the pass is known to leave the current module
  // unchanged (it ran on this state and did nothing); STOP is always true.
  std::vector<bool> ActionMask() const;

 private:
  // Per benchmark: what every episode on it measures against.
  struct Baseline {
    std::string benchmark;
    int64_t initial_ops = 0;
    int64_t default_ops = 0;
    double initial_potential = 0;
    std::optional<double> initial_cost_us;  // when the reward space measures cost
    std::optional<double> default_cost_us;
    std::shared_ptr<Module> initial;  // shared by every episode until it steps
  };
  absl::StatusOr<std::shared_ptr<const Baseline>> MakeBaseline(std::unique_ptr<Module> module,
                                                               std::string benchmark) const;
  // What the rewards compare between the states before and after a step.
  struct Metrics {
    int64_t ops = 0;
    std::optional<double> potential;
    std::optional<StitchEstimate> stitch;
  };

  absl::Status Start(std::shared_ptr<const Baseline> baseline);
  // Computes what the reward space needs of the current state.
  absl::Status MeasureCurrent();
  absl::StatusOr<StitchEstimate> CurrentStitch();
  // What an episode's op-count rewards are normalised by: I - D, or I when
  // the default pipeline removes nothing.
  double DefaultGain() const;
  // The same of cost_vs_default: C_I - C_D, at least 1% of C_I.
  double DefaultCostGain() const;
  Module& MutableModule();

  SessionOptions options_;
  std::shared_ptr<Module> module_;
  std::shared_ptr<const Baseline> baseline_;
  Metrics previous_;
  Metrics current_;
  std::vector<bool> known_unchanging_;  // per pass
  std::vector<int> actions_;
  std::vector<int> changing_actions_;
  int steps_ = 0;
  int64_t last_pass_edits_ = 0;
  bool terminated_ = false;
  bool truncated_ = false;
};

}  // namespace seam::gym
