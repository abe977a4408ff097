// A rounding to bf16 whose value a broadcast lays along the rows is
// computed once, as a group of its own, on a CPU: a column normalization's
// column sums rounded before they divide every row. Not a row's value
// broadcast along its row (the loop along the row hoists its rounding), not
// a rounding no broadcast reuses, not on a GPU, not under the xla strategy
// (which recomputes).
#include <algorithm>
#include <string>

#include "../common/hlo_text.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "seam/fusion/planner.h"

namespace seam::fusion {
namespace {

using testing::ParseModule;

// x - bf16(mean of the row) over bf16[512,1024], and the mean itself
// rounded for an output of its own (no broadcast reuses that one).
constexpr char kRows[] = R"(HloModule rows
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = bf16[512,1024] parameter(0)
  xf = f32[512,1024] convert(x)
  zero = f32[] constant(0)
  s = f32[512] reduce(xf, zero), dimensions={1}, to_apply=add
  n = f32[] constant(0.0009765625)
  nb = f32[512] broadcast(n), dimensions={}
  m = f32[512] multiply(s, nb)
  mb16 = bf16[512] convert(m)
  mb = bf16[512,1024] broadcast(mb16), dimensions={0}
  y = bf16[512,1024] subtract(x, mb)
  m2 = f32[512] multiply(m, m)
  out = bf16[512] convert(m2)
  ROOT t = (bf16[512,1024], bf16[512]) tuple(y, out)
}
)";

// Each group's dominant and why it is one, "name: why".
std::vector<std::string> Dominants(const std::string& text, const target::DeviceSpec& device,
                                   Strategy strategy = Strategy::kStitch) {
  std::unique_ptr<Module> m = ParseModule(text);
  if (m == nullptr) return {};
  PlanOptions options;
  options.device = device;
  options.strategy = strategy;
  absl::StatusOr<FusionPlan> plan = PlanModule(*m, options);
  EXPECT_TRUE(plan.ok()) << plan.status();
  if (!plan.ok()) return {};
  std::vector<std::string> dominants;
  for (const Kernel& k : plan->computations[0].kernels) {
    for (const Group& g : k.groups) dominants.push_back(g.dominant->name() + ": " + g.why);
  }
  return dominants;
}

bool Has(const std::vector<std::string>& dominants, const std::string& entry) {
  return std::find(dominants.begin(), dominants.end(), entry) != dominants.end();
}

constexpr char kWhy[] = "rounded to a half type, elements reused";

TEST(HalfRounding, RoundedColumnSumsAreAGroupOfTheirOwnOnACpu) {
  const std::vector<std::string> dominants = Dominants(testing::kRoundedColumnSums, target::HostCpuSpec());
  EXPECT_TRUE(Has(dominants, absl::StrCat("sb: ", kWhy))) << ::testing::PrintToString(dominants);
}

TEST(HalfRounding, NotARowsValueAlongItsRowNorAnUnreusedRounding) {
  const std::vector<std::string> dominants = Dominants(kRows, target::HostCpuSpec());
  EXPECT_FALSE(Has(dominants, absl::StrCat("mb16: ", kWhy))) << ::testing::PrintToString(dominants);
  EXPECT_FALSE(Has(dominants, absl::StrCat("out: ", kWhy))) << ::testing::PrintToString(dominants);
}

TEST(HalfRounding, NotOnAGpuNorUnderXla) {
  for (const std::string& d : Dominants(testing::kRoundedColumnSums, target::H100Spec())) {
    EXPECT_EQ(d.find(kWhy), std::string::npos) << d;
  }
  for (const std::string& d : Dominants(testing::kRoundedColumnSums, target::HostCpuSpec(), Strategy::kXla)) {
    EXPECT_EQ(d.find(kWhy), std::string::npos) << d;
  }
}

}  // namespace
}  // namespace seam::fusion
