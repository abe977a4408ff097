// Which softmax sums fold in their max's pass (online softmax): on a CPU,
// where a row does not fit a tile and the exps would go through global
// memory (a 262144-word vocabulary in f32); then the exps are recomputed
// where read, not passed on. Not for rows that fit a tile, not on a GPU,
// not when turned off; log-softmax's sum is matched too, and a sum of
// exps shifted by something other than the row's max is not.
#include "seam/fusion/online_softmax.h"

#include <string>

#include "../common/hlo_text.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "seam/fusion/planner.h"

namespace seam::fusion {
namespace {

using testing::FindInstruction;
using testing::ParseModule;

FusionPlan Plan(const Module& m, const target::DeviceSpec& device, bool online = true) {
  PlanOptions options;
  options.device = device;
  options.online_softmax = online;
  absl::StatusOr<FusionPlan> plan = PlanModule(m, options);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return *std::move(plan);
}

// The dominants of the groups whose sums fold in another's pass, and of
// those hosts, as "sum in max".
std::vector<std::string> Folds(const FusionPlan& plan) {
  std::vector<std::string> folds;
  for (const Kernel& k : plan.computations[0].kernels) {
    for (const OnlineSoftmax& o : k.online_softmax) {
      folds.push_back(absl::StrCat(k.groups[o.group].dominant->name(), " in ",
                                   k.groups[o.host].dominant->name()));
    }
  }
  return folds;
}

// Whether a group of the plan passes the exps on (as a dominant).
bool PassesOn(const FusionPlan& plan, const std::string& name) {
  for (const Kernel& k : plan.computations[0].kernels) {
    for (const Group& g : k.groups) {
      if (g.dominant->name() == name) return true;
      for (const Instruction* d : g.sub_dominants) {
        if (d->name() == name) return true;
      }
    }
  }
  return false;
}

TEST(OnlineSoftmax, MatchesASumOfExpsShiftedByTheRowsMax) {
  std::unique_ptr<Module> m = ParseModule(testing::SoftmaxText("f32", 4, 8));
  ASSERT_NE(m, nullptr);
  std::optional<ShiftedExpSum> matched = MatchShiftedExpSum(*FindInstruction(*m, "s"));
  ASSERT_TRUE(matched.has_value());
  EXPECT_EQ(matched->exp, FindInstruction(*m, "e"));
  EXPECT_EQ(matched->max, FindInstruction(*m, "m"));
  EXPECT_FALSE(MatchShiftedExpSum(*FindInstruction(*m, "m")).has_value());
}

TEST(OnlineSoftmax, NotForExpsShiftedByAnotherValue) {
  std::unique_ptr<Module> m = ParseModule(R"(HloModule shifted
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[4,8] parameter(0)
  z = f32[4,8] parameter(1)
  ninf = f32[] constant(-inf)
  zero = f32[] constant(0)
  m = f32[4] reduce(z, ninf), dimensions={1}, to_apply=max
  mb = f32[4,8] broadcast(m), dimensions={0}
  d = f32[4,8] subtract(x, mb)
  e = f32[4,8] exponential(d)
  ROOT s = f32[4] reduce(e, zero), dimensions={1}, to_apply=add
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_FALSE(MatchShiftedExpSum(*FindInstruction(*m, "s")).has_value());
}

TEST(OnlineSoftmax, AVocabularyRowFoldsItsSumInItsMaxsPass) {
  for (bool log : {false, true}) {
    std::unique_ptr<Module> m = ParseModule(testing::SoftmaxText("f32", 64, 262144, log));
    ASSERT_NE(m, nullptr);
    const FusionPlan plan = Plan(*m, target::HostCpuSpec());
    EXPECT_EQ(Folds(plan), std::vector<std::string>{"s in m"}) << (log ? "log-softmax" : "");
    EXPECT_FALSE(PassesOn(plan, "e"));
    // x is read twice, the output written once: no exps through memory.
    EXPECT_EQ(plan.Totals().cost.dram_bytes(), 3.0 * 64 * 262144 * 4);
  }
}

TEST(OnlineSoftmax, NotForRowsThatFitATileNorOnAGpuNorWhenOff) {
  std::unique_ptr<Module> fits = ParseModule(testing::SoftmaxText("f32", 2000, 256));
  std::unique_ptr<Module> vocabulary = ParseModule(testing::SoftmaxText("f32", 64, 262144));
  ASSERT_NE(fits, nullptr);
  ASSERT_NE(vocabulary, nullptr);
  EXPECT_TRUE(Folds(Plan(*fits, target::HostCpuSpec())).empty());
  EXPECT_TRUE(Folds(Plan(*vocabulary, target::H100Spec())).empty());
  EXPECT_TRUE(Folds(Plan(*vocabulary, target::HostCpuSpec(), /*online=*/false)).empty());
}

}  // namespace
}  // namespace seam::fusion
