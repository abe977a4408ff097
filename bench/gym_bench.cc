// Pass-ordering environment throughput: random episodes (uniform over every
// action, STOP included, as an untrained agent plays; the opcode histogram
// observed after each step, as the Python env does) on corpus modules.
// Prints steps/s over all steps and over the steps that ran a pass (a pass
// known not to change the state returns at once), Fork() against a step,
// and the features observation (which plans the state's stitch fusion).
// Usage: seam_gym_bench [--seconds S] [BENCHMARK...]; default: GPT-2
// (2 layers), BERT fwd+bwd, ResNet-50.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "bench_util.h"
#include "seam/gym/actions.h"
#include "seam/gym/session.h"

namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0 : values[values.size() / 2];
}

struct Throughput {
  int64_t steps = 0;
  int64_t pass_runs = 0;
  int64_t episodes = 0;
  double seconds = 0;
  double pass_seconds = 0;
};

Throughput RandomEpisodes(const std::string& benchmark, double budget_s) {
  using namespace seam::gym;
  std::mt19937_64 random(0);
  std::uniform_int_distribution<int> pick(0, ActionCount() - 1);
  Session session;
  Throughput t;
  Clock::time_point start = Clock::now();
  while (Since(start) < budget_s) {
    if (absl::Status reset = session.Reset(benchmark); !reset.ok()) seam::bench::Die(reset);
    ++t.episodes;
    while (!session.done()) {
      int action = pick(random);
      bool runs_pass = action != StopAction() && session.ActionMask()[action];
      Clock::time_point step_start = Clock::now();
      absl::StatusOr<StepResult> step = session.Step(action);
      if (!step.ok()) seam::bench::Die(step.status());
      absl::StatusOr<Observation> histogram = session.Observe(ObservationSpace::kOpcodeHistogram);
      if (!histogram.ok()) seam::bench::Die(histogram.status());
      if (runs_pass) {
        ++t.pass_runs;
        t.pass_seconds += Since(step_start);
      }
      ++t.steps;
    }
  }
  t.seconds = Since(start);
  return t;
}

// Median microseconds of observing the features (a stitch plan of the state).
double FeaturesCost(const std::string& benchmark) {
  using namespace seam::gym;
  std::vector<double> us;
  for (int r = 0; r < 21; ++r) {
    Session session;
    if (absl::Status reset = session.Reset(benchmark); !reset.ok()) seam::bench::Die(reset);
    Clock::time_point start = Clock::now();
    absl::StatusOr<Observation> features = session.Observe(ObservationSpace::kFeatures);
    if (!features.ok()) seam::bench::Die(features.status());
    us.push_back(1e6 * Since(start));
  }
  return Median(us);
}

// Median microseconds of Fork(), and of Fork() then a step that changes the
// module (which pays the copy the fork deferred).
std::pair<double, double> ForkCost(const std::string& benchmark) {
  using namespace seam::gym;
  Session session;
  if (absl::Status reset = session.Reset(benchmark); !reset.ok()) seam::bench::Die(reset);
  absl::StatusOr<int> cse = ActionByName("cse");
  std::vector<double> fork_us, fork_step_us;
  for (int r = 0; r < 201; ++r) {
    Clock::time_point start = Clock::now();
    Session fork = session.Fork();
    fork_us.push_back(1e6 * Since(start));
    start = Clock::now();
    Session stepped = session.Fork();
    if (!stepped.Step(*cse).ok()) std::abort();
    fork_step_us.push_back(1e6 * Since(start));
  }
  return {Median(fork_us), Median(fork_step_us)};
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 3;
  std::vector<std::string> benchmarks;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--seconds" && i + 1 < argc) {
      seconds = std::max(0.1, std::atof(argv[++i]));
    } else {
      benchmarks.push_back(arg);
    }
  }
  if (benchmarks.empty()) {
    benchmarks = {"corpus/gh_ptxla_gpt2_tp1_n_layer2.hlo",
                  "corpus/gh_ptxla_bert_single_device_training_fwd_bwd.hlo",
                  "corpus/xla_resnet50_keras_jax_f32.hlo"};
  }
  std::printf("%-52s %6s %10s %10s %12s %9s %13s %12s\n", "benchmark", "ops", "steps/s", "episodes",
              "pass runs/s", "fork us", "fork+step us", "features us");
  for (const std::string& benchmark : benchmarks) {
    seam::gym::Session probe;
    if (absl::Status reset = probe.Reset(benchmark); !reset.ok()) seam::bench::Die(reset);
    Throughput t = RandomEpisodes(benchmark, seconds);
    auto [fork_us, fork_step_us] = ForkCost(benchmark);
    std::printf("%-52s %6lld %10.0f %10lld %12.0f %9.2f %13.1f %12.0f\n", benchmark.substr(0, 52).c_str(),
                static_cast<long long>(probe.initial_ops()), static_cast<double>(t.steps) / t.seconds,
                static_cast<long long>(t.episodes),
                t.pass_seconds > 0 ? static_cast<double>(t.pass_runs) / t.pass_seconds : 0.0, fork_us,
                fork_step_us, FeaturesCost(benchmark));
  }
  return 0;
}
