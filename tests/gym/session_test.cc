// The Session's contract: resets, steps, forks, observations, rewards and
// the errors an RL loop meets.
#include "seam/gym/session.h"

#include <cmath>

#include "gtest/gtest.h"
#include "seam/gym/actions.h"
#include "seam/gym/benchmarks.h"
#include "seam/passes/pipeline.h"
#include "seam/text/printer.h"

namespace seam::gym {
namespace {

constexpr char kLayerNorm[] = "corpus/xla_layer_norm_1x4096x768_bf16.hlo";
// A small JAX loss the default pipeline makes faster under the cost model.
constexpr char kToyLoss[] = "corpus/hloenv_toy_nn_module_0093.jit_loss.44.before_optimizations.txt";

int Action(absl::string_view name) {
  absl::StatusOr<int> action = ActionByName(name);
  EXPECT_TRUE(action.ok()) << action.status();
  return action.value_or(0);
}

Session Started(SessionOptions options = {}, absl::string_view benchmark = kLayerNorm) {
  Session session(std::move(options));
  absl::Status reset = session.Reset(benchmark);
  EXPECT_TRUE(reset.ok()) << reset;
  return session;
}

TEST(Session, ActionsAreThePassRegistryThenStop) {
  EXPECT_EQ(ActionName(StopAction()), "stop");
  EXPECT_EQ(ActionName(Action("cse")), "cse");
  EXPECT_FALSE(ActionByName("no-such-pass").ok());
  EXPECT_FALSE(IsValidAction(ActionCount()));
}

TEST(Session, ThePhasesAreActionsThatSpellTheDefaultPipeline) {
  EXPECT_GT(Action("simplify"), Action("cse"));
  EXPECT_EQ(Action("cleanup"), StopAction() - 1);
  EXPECT_FALSE(ActionByName("default").ok());  // the whole pipeline is no action
  // The default pipeline's top-level steps, its phases one action each.
  Session session = Started({.max_steps = 40}, kToyLoss);
  for (const char* step :
       {"layout-normalization", "sharding-remover", "transfer-remover", "collective-simplifier",
        "optimization-barrier-expander", "call-inliner", "map-inline", "flatten-call-graph",
        "batchnorm-expander", "gelu-expander", "computation-deduplicator", "dce", "simplify",
        "while-loop-invariant-code-motion", "channels-last", "sink-data-movement",
        "dot-strength-reduction", "broadcast-canonicalizer", "cleanup"}) {
    ASSERT_TRUE(session.Step(Action(step)).ok()) << step;
  }
  absl::StatusOr<std::unique_ptr<Module>> fresh = LoadBenchmark(kToyLoss);
  ASSERT_TRUE(fresh.ok());
  absl::StatusOr<Pipeline> pipeline = Pipeline::Parse("default");
  ASSERT_TRUE(pipeline.ok() && pipeline->Run(**fresh).ok());
  EXPECT_EQ(PrintModule(session.module()), PrintModule(**fresh));
  EXPECT_EQ(session.ops(), session.default_ops());
}

TEST(Session, ResetMeasuresInitialAndDefaultCounts) {
  Session session = Started();
  EXPECT_EQ(session.ops(), session.initial_ops());
  EXPECT_LT(session.default_ops(), session.initial_ops());
  EXPECT_EQ(session.steps(), 0);
  EXPECT_EQ(session.PassSpec(), "");
  EXPECT_DOUBLE_EQ(*session.Reward(RewardSpace::kOpsDelta), 0);
}

TEST(Session, BadBenchmarksSayWhy) {
  Session session;
  for (const char* uri : {"corpus/missing.hlo", "nope://x", "generator/random/abc", "corpus/../x",
                          "corpus/xla_layer_norm_1x4096x768_bf16.hlo#3"}) {
    absl::Status reset = session.Reset(uri);
    EXPECT_FALSE(reset.ok()) << uri;
    EXPECT_NE(reset.message().find(uri), std::string::npos) << reset;
  }
  EXPECT_FALSE(session.has_episode());
  EXPECT_FALSE(session.Step(0).ok());
  EXPECT_FALSE(session.Observe(ObservationSpace::kFeatures).ok());
}

TEST(Session, StepsRewriteAndRewardOpCounts) {
  Session session = Started();
  int64_t before = session.ops();
  absl::StatusOr<StepResult> step = session.Step(Action("algsimp"));
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_TRUE(step->changed);
  EXPECT_FALSE(step->terminated || step->truncated);
  double removed = static_cast<double>(before - session.ops());
  EXPECT_DOUBLE_EQ(*session.Reward(RewardSpace::kOpsDelta), removed);
  EXPECT_DOUBLE_EQ(*session.Reward(RewardSpace::kOpsNormalized),
                   removed / static_cast<double>(session.initial_ops()));
  EXPECT_EQ(session.PassSpec(), "algsimp");
}

TEST(Session, EpisodeRewardsSumToThePapersMetric) {
  Session session = Started();
  double total = 0;
  for (const char* pass : {"algsimp", "cse", "dce", "algsimp", "dce"}) {
    ASSERT_TRUE(session.Step(Action(pass)).ok());
    total += *session.Reward(RewardSpace::kOpsVsDefault);
  }
  double metric = static_cast<double>(session.initial_ops() - session.ops()) /
                  static_cast<double>(session.initial_ops() - session.default_ops());
  EXPECT_NEAR(total, metric, 1e-9);
}

TEST(Session, ThePassSpecReproducesTheModule) {
  Session session = Started();
  for (const char* pass : {"cse", "tuple-simplifier", "algsimp", "reshape-mover", "dce"}) {
    ASSERT_TRUE(session.Step(Action(pass)).ok());
  }
  absl::StatusOr<std::unique_ptr<Module>> fresh = LoadBenchmark(kLayerNorm);
  ASSERT_TRUE(fresh.ok());
  absl::StatusOr<Pipeline> pipeline = Pipeline::Parse(session.PassSpec());
  ASSERT_TRUE(pipeline.ok()) << session.PassSpec();
  ASSERT_TRUE(pipeline->Run(**fresh).ok());
  EXPECT_EQ(PrintModule(**fresh), PrintModule(session.module()));
}

TEST(Session, ForksAreIndependent) {
  Session original = Started();
  std::string text = PrintModule(original.module());
  Session fork = original.Fork();
  ASSERT_TRUE(fork.Step(Action("algsimp")).ok());
  EXPECT_LT(fork.ops(), original.ops());
  EXPECT_EQ(PrintModule(original.module()), text);
  EXPECT_EQ(original.steps(), 0);
  // And the other way round.
  Session second = original.Fork();
  ASSERT_TRUE(original.Step(Action("cse")).ok());
  EXPECT_EQ(PrintModule(second.module()), text);
  // A new episode starts from the benchmark, not from what earlier ones did.
  ASSERT_TRUE(fork.Reset(kLayerNorm).ok());
  EXPECT_EQ(PrintModule(fork.module()), text);
}

TEST(Session, PassesThatDidNothingAreMaskedUntilTheModuleChanges) {
  Session session = Started();
  int cse = Action("cse");
  int algsimp = Action("algsimp");
  absl::StatusOr<StepResult> first = session.Step(cse);
  ASSERT_TRUE(first.ok() && first->changed);
  EXPECT_TRUE(session.ActionMask()[cse]);  // a pass that changed the module may change it again
  absl::StatusOr<StepResult> again = session.Step(cse);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->changed);
  EXPECT_FALSE(session.ActionMask()[cse]);
  EXPECT_TRUE(session.ActionMask()[StopAction()]);
  absl::StatusOr<StepResult> changed = session.Step(algsimp);
  ASSERT_TRUE(changed.ok() && changed->changed);
  EXPECT_TRUE(session.ActionMask()[cse]);
  EXPECT_TRUE(session.ActionMask()[algsimp]);
}

TEST(Session, StopTerminatesAndTheStepLimitTruncates) {
  Session stopped = Started();
  absl::StatusOr<StepResult> stop = stopped.Step(StopAction());
  ASSERT_TRUE(stop.ok());
  EXPECT_TRUE(stop->terminated);
  absl::StatusOr<StepResult> after = stopped.Step(Action("dce"));
  EXPECT_FALSE(after.ok());
  EXPECT_NE(after.status().message().find("Reset"), std::string::npos) << after.status();

  SessionOptions options;
  options.max_steps = 3;
  Session limited = Started(options);
  for (int t = 1; t <= 3; ++t) {
    absl::StatusOr<StepResult> step = limited.Step(Action("dce"));
    ASSERT_TRUE(step.ok());
    EXPECT_EQ(step->truncated, t == 3);
  }
  EXPECT_TRUE(limited.done());
  EXPECT_FALSE(limited.Step(Action("dce")).ok());
  EXPECT_FALSE(limited.Step(-1).ok());
}

TEST(Session, ObservationsDescribeTheModule) {
  Session session = Started();
  absl::StatusOr<Observation> histogram = session.Observe(ObservationSpace::kOpcodeHistogram);
  ASSERT_TRUE(histogram.ok());
  const auto& counts = std::get<std::vector<int64_t>>(*histogram);
  EXPECT_EQ(counts.size(), static_cast<size_t>(kOpcodeCount));
  int64_t total = 0;
  for (int64_t c : counts) total += c;
  EXPECT_EQ(total, session.ops());

  ASSERT_TRUE(session.Step(Action("algsimp")).ok());
  absl::StatusOr<Observation> features = session.Observe(ObservationSpace::kFeatures);
  ASSERT_TRUE(features.ok()) << features.status();
  const auto& values = std::get<std::vector<double>>(*features);
  ASSERT_EQ(values.size(), FeatureNames().size());
  auto feature = [&](absl::string_view name) {
    for (size_t k = 0; k < values.size(); ++k) {
      if (FeatureNames()[k] == name) return values[k];
    }
    ADD_FAILURE() << "no feature " << name;
    return 0.0;
  };
  EXPECT_EQ(feature("instructions"), static_cast<double>(session.ops()));
  EXPECT_EQ(feature("step"), 1);
  EXPECT_GT(feature("last_pass_edits"), 0);
  EXPECT_EQ(feature("parameter_bytes"), 4096 * 768 * 2);  // bf16 x
  EXPECT_EQ(feature("output_bytes"), 4096 * 768 * 2);
  EXPECT_EQ(feature("transcendentals"), 4096);  // a sqrt per row
  EXPECT_GT(feature("dram_bytes_after_stitch"), feature("parameter_bytes"));

  absl::StatusOr<Observation> text = session.Observe(ObservationSpace::kHloText);
  ASSERT_TRUE(text.ok());
  EXPECT_NE(std::get<std::string>(*text).find("HloModule"), std::string::npos);
}

TEST(Session, CostRewardComesFromTheStitchPlan) {
  SessionOptions options;
  options.reward_space = RewardSpace::kCostTime;
  Session session = Started(options);
  ASSERT_TRUE(session.Step(Action("algsimp")).ok());
  absl::StatusOr<double> saved = session.Reward();
  ASSERT_TRUE(saved.ok()) << saved.status();
  EXPECT_TRUE(std::isfinite(*saved));
  // Spaces it was not set up for say so rather than guess.
  Session plain = Started();
  EXPECT_FALSE(plain.Reward(RewardSpace::kCostTime).ok());
}

TEST(Session, CostVsDefaultSumsToTheShareOfTheDefaultPipelinesSaving) {
  SessionOptions options;
  options.reward_space = RewardSpace::kCostVsDefault;
  Session session = Started(options, kToyLoss);
  ASSERT_TRUE(session.initial_cost_us().has_value() && session.default_cost_us().has_value());
  const double initial = *session.initial_cost_us(), gain = initial - *session.default_cost_us();
  ASSERT_GT(gain, 0.01 * initial);  // the default pipeline saves time on this module
  double sum = 0;
  for (const char* pass : {"algsimp", "dce", "cse", "algsimp"}) {
    ASSERT_TRUE(session.Step(Action(pass)).ok());
    absl::StatusOr<double> reward = session.Reward();
    ASSERT_TRUE(reward.ok()) << reward.status();
    EXPECT_NEAR(*reward, *session.Reward(RewardSpace::kCostTime) / gain, 1e-12);
    sum += *reward;
  }
  // The return is (C_I - C_R) / (C_I - C_D): 1 once as fast as the default.
  EXPECT_NEAR(sum, (initial - *session.cost_us()) / gain, 1e-9);
  EXPECT_GT(sum, 0);
  Session plain = Started();
  EXPECT_FALSE(plain.initial_cost_us().has_value());
  EXPECT_FALSE(plain.Reward(RewardSpace::kCostVsDefault).ok());
}

TEST(Session, CostVsDefaultIsOverAHundredthOfTheStartWhereTheDefaultSavesNothing) {
  SessionOptions options;
  options.reward_space = RewardSpace::kCostVsDefault;
  Session session = Started(options);  // layer norm: one kernel, whatever the passes
  ASSERT_TRUE(session.initial_cost_us().has_value());
  ASSERT_NEAR(*session.initial_cost_us(), *session.default_cost_us(), 1e-9);
  ASSERT_TRUE(session.Step(Action("algsimp")).ok());
  EXPECT_NEAR(*session.Reward(),
              *session.Reward(RewardSpace::kCostTime) / (0.01 * *session.initial_cost_us()), 1e-12);
}

TEST(Session, ShapedRewardAddsThePotentialDifference) {
  SessionOptions options;
  options.reward_space = RewardSpace::kShapedOpsVsDefault;
  Session session = Started(options);
  ASSERT_TRUE(session.Step(Action("algsimp")).ok());
  absl::StatusOr<double> shaped = session.Reward();
  ASSERT_TRUE(shaped.ok()) << shaped.status();
  double plain = *session.Reward(RewardSpace::kOpsVsDefault);
  // algsimp removes arithmetic here, so the potential rises.
  EXPECT_GE(*shaped, plain);
}

TEST(Session, RandomBenchmarksAreReproducible) {
  Session a = Started({}, "generator/random/7");
  Session b = Started({}, "generator/random/7");
  EXPECT_EQ(PrintModule(a.module()), PrintModule(b.module()));
  Session c = Started({}, "generator/random/8");
  EXPECT_NE(PrintModule(a.module()), PrintModule(c.module()));
}

TEST(Session, CorpusListsEveryModuleFile) {
  std::vector<std::string> corpus = CorpusBenchmarks();
  EXPECT_GE(corpus.size(), 20u);
  for (const std::string& uri : corpus) EXPECT_EQ(uri.rfind("corpus/", 0), 0u) << uri;
}

}  // namespace
}  // namespace seam::gym
