// Random action sequences, as an untrained agent plays: 1,000 episodes of
// up to 25 actions (STOP included) over small corpus modules and random
// graphs, the verifier after every changing step, and at the end the
// module interpreted against the benchmark on the same inputs and the pass
// spec replayed from scratch to the same op count.
#include <random>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "seam/eval/arguments.h"
#include "seam/eval/compare.h"
#include "seam/eval/evaluator.h"
#include "seam/gym/actions.h"
#include "seam/gym/benchmarks.h"
#include "seam/gym/session.h"
#include "seam/gym/validation.h"

namespace seam::gym {
namespace {

constexpr int kShards = 10;
constexpr int kEpisodesPerShard = 100;
constexpr int kMaxActions = 25;

struct Subject {
  std::string benchmark;
  std::vector<Literal> arguments;
  Literal expected;
};

const std::vector<Subject>& Subjects() {
  static auto* subjects = [] {
    std::vector<std::string> uris = {
        "corpus/xla_layer_norm_1x4096x768_bf16.hlo",
        "corpus/xla_mha_block_1x12x128x64_bf16.hlo",
        "corpus/hloenv_toy_nn_module_0093.jit_loss.44.before_optimizations.txt",
        "corpus/hloenv_maml_flax_module_0067.jit_train_step.26.before_optimizations.txt",
        "corpus/gh_ptxla_linear_module_adam.hlo",
        "corpus/xla_gpu_tests_memory_bandwidth_fusion.hlo",
        "corpus/hloenv_hlo_test_jit_train_step.151.txt",
    };
    for (int seed = 0; seed < 8; ++seed) uris.push_back(absl::StrCat("generator/random/", seed));
    auto* all = new std::vector<Subject>();
    for (const std::string& uri : uris) {
      absl::StatusOr<std::unique_ptr<Module>> module = LoadBenchmark(uri);
      EXPECT_TRUE(module.ok()) << module.status();
      if (!module.ok()) continue;
      std::vector<Literal> arguments = RandomArguments(*(*module)->entry(), /*seed=*/0);
      Evaluator evaluator;
      absl::StatusOr<Literal> expected = evaluator.Run(**module, arguments);
      EXPECT_TRUE(expected.ok()) << uri << ": " << expected.status();
      if (!expected.ok()) continue;
      all->push_back(Subject{uri, std::move(arguments), std::move(*expected)});
    }
    return all;
  }();
  return *subjects;
}

class RandomActions : public ::testing::TestWithParam<int> {};

TEST_P(RandomActions, KeepModulesValidAndEqual) {
  const std::vector<Subject>& subjects = Subjects();
  ASSERT_FALSE(subjects.empty());
  std::mt19937_64 random(2000 + GetParam());
  std::uniform_int_distribution<int> pick_action(0, ActionCount() - 1);
  SessionOptions options;
  options.verify_each = true;
  options.max_steps = kMaxActions;
  int failures = 0;
  for (int e = 0; e < kEpisodesPerShard && failures < 3; ++e) {
    const Subject& subject = subjects[(GetParam() * kEpisodesPerShard + e) % subjects.size()];
    Session session(options);
    ASSERT_TRUE(session.Reset(subject.benchmark).ok());
    std::string problem;
    while (!session.done() && problem.empty()) {
      // STOP as often as any pass: some episodes end early.
      absl::StatusOr<StepResult> step = session.Step(pick_action(random));
      if (!step.ok()) problem = std::string(step.status().message());
    }
    if (problem.empty() && session.ops() != session.initial_ops()) {
      Evaluator evaluator;
      absl::StatusOr<Literal> got = evaluator.Run(session.module(), subject.arguments);
      problem = got.ok() ? DescribeDifferences(*got, subject.expected, &RewriteTolerance, "result")
                         : std::string(got.status().message());
    }
    if (problem.empty()) {
      absl::StatusOr<Validation> replay = ValidatePassOrder(subject.benchmark, session.PassSpec(), false);
      if (!replay.ok()) {
        problem = absl::StrCat("replay: ", replay.status().message());
      } else if (replay->ops != session.ops()) {
        problem = absl::StrCat("replay gives ", replay->ops, " ops, the session ", session.ops());
      }
    }
    if (!problem.empty()) {
      ++failures;
      std::string actions;
      for (int a : session.actions()) absl::StrAppend(&actions, actions.empty() ? "" : ",", ActionName(a));
      ADD_FAILURE() << subject.benchmark << " after " << actions << ": " << problem;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shards, RandomActions, ::testing::Range(0, kShards));

}  // namespace
}  // namespace seam::gym
