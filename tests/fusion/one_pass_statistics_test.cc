// Which sums of squared deviations fold in an earlier reduction's pass
// (one-pass statistics): the two-pass variance of batch norm over N, H, W
// on a CPU, where the estimate then reads the input from memory once
// fewer; not where the re-read comes from cache, not on a GPU, not when
// turned off, not where the reduced elements are not contiguous runs, and
// not for deviations from a value that varies along the reduced
// dimensions. At bf16 as JAX writes it (the squares bf16, converted to f32
// for the sum) only with excess precision, where the chain computes in
// float as the one-pass form does.
#include "seam/fusion/one_pass_statistics.h"
#include "../common/hlo_text.h"
#include "gtest/gtest.h"
#include "seam/fusion/planner.h"
#include "seam/text/parser.h"

namespace seam::fusion {
namespace {

using testing::FindInstruction;
using testing::ParseModule;

// Mean and two-pass variance over `dims` of x f32[16,8,32,32]; `kept` is
// the mean's shape and `spread` its broadcast back.
std::string Statistics(const std::string& dims, const std::string& kept,
                       const std::string& spread) {
  return R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[16,8,32,32] parameter(0)
  zero = f32[] constant(0)
  sum = )" +
         kept + " reduce(x, zero), dimensions={" + dims + R"(}, to_apply=add
  n = f32[] constant(4096)
  ns = )" +
         kept + R"( broadcast(n), dimensions={}
  mean = )" +
         kept + R"( divide(sum, ns)
  spread = f32[16,8,32,32] broadcast(mean), dimensions={)" +
         spread + R"(}
  centered = f32[16,8,32,32] subtract(x, spread)
  squared = f32[16,8,32,32] multiply(centered, centered)
  squares = )" +
         kept + " reduce(squared, zero), dimensions={" + dims + R"(}, to_apply=add
  ROOT out = ()" +
         kept + ", " + kept + R"() tuple(mean, squares)
}
)";
}

const std::string kBatchNorm = Statistics("0,2,3", "f32[8]", "1");

// This machine with caches smaller than x (512 KiB): the second read goes
// to memory.
target::DeviceSpec SmallCacheCpu() {
  target::DeviceSpec cpu = target::HostCpuSpec();
  cpu.onchip_bytes_per_block = 64 << 10;
  cpu.last_level_cache_bytes = 256 << 10;
  return cpu;
}

FusionPlan Plan(const Module& m, const target::DeviceSpec& device, bool one_pass = true,
               bool excess_precision = true) {
  PlanOptions options;
  options.device = device;
  options.one_pass_statistics = one_pass;
  options.excess_precision = excess_precision;
  absl::StatusOr<FusionPlan> plan = PlanModule(m, options);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return *std::move(plan);
}

TEST(OnePassStatistics, MatchesSquaredDeviationsFromAValueConstantAlongTheReduction) {
  std::unique_ptr<Module> m = ParseModule(kBatchNorm);
  ASSERT_NE(m, nullptr);
  std::optional<CenteredSquares> matched = MatchCenteredSquares(*FindInstruction(*m, "squares"));
  ASSERT_TRUE(matched.has_value());
  EXPECT_EQ(matched->value, FindInstruction(*m, "x"));
  EXPECT_EQ(matched->center, FindInstruction(*m, "spread"));
  EXPECT_FALSE(MatchCenteredSquares(*FindInstruction(*m, "sum")).has_value());

  // Deviations from another array, and from a value varying along the
  // reduced dimension: not a variance's numerator.
  std::unique_ptr<Module> other = ParseModule(R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4,8] parameter(0)
  y = f32[4,8] parameter(1)
  v = f32[4] parameter(2)
  zero = f32[] constant(0)
  d = f32[4,8] subtract(x, y)
  sq = f32[4,8] multiply(d, d)
  r = f32[8] reduce(sq, zero), dimensions={0}, to_apply=add
  along = f32[4,8] broadcast(v), dimensions={0}
  d2 = f32[4,8] subtract(along, x)
  sq2 = f32[4,8] multiply(d2, d2)
  r2 = f32[8] reduce(sq2, zero), dimensions={0}, to_apply=add
  r3 = f32[4] reduce(sq2, zero), dimensions={1}, to_apply=add
  ROOT out = (f32[8], f32[8], f32[4]) tuple(r, r2, r3)
}
)");
  ASSERT_NE(other, nullptr);
  EXPECT_FALSE(MatchCenteredSquares(*FindInstruction(*other, "r")).has_value());
  EXPECT_FALSE(MatchCenteredSquares(*FindInstruction(*other, "r2")).has_value());
  // Along the kept dimension it is one (centre first).
  std::optional<CenteredSquares> kept = MatchCenteredSquares(*FindInstruction(*other, "r3"));
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept->value, FindInstruction(*other, "x"));
  EXPECT_EQ(kept->center, FindInstruction(*other, "along"));
}

TEST(OnePassStatistics, TheBatchNormVarianceFoldsInTheMeansPassOnACpu) {
  std::unique_ptr<Module> m = ParseModule(kBatchNorm);
  ASSERT_NE(m, nullptr);
  const FusionPlan on = Plan(*m, SmallCacheCpu());
  const FusionPlan off = Plan(*m, SmallCacheCpu(), /*one_pass=*/false);
  ASSERT_EQ(on.computations[0].kernels.size(), 1u);
  const Kernel& k = on.computations[0].kernels[0];
  ASSERT_EQ(k.one_pass.size(), 1u);
  EXPECT_EQ(k.groups[k.one_pass[0].group].dominant, FindInstruction(*m, "squares"));
  EXPECT_EQ(k.groups[k.one_pass[0].host].dominant, FindInstruction(*m, "sum"));
  // One read of x (16*8*32*32 f32: 512 KiB) fewer in the estimate.
  const Kernel& two = off.computations[0].kernels[0];
  EXPECT_TRUE(two.one_pass.empty());
  EXPECT_LT(k.cost.time_us, two.cost.time_us);
  EXPECT_DOUBLE_EQ(two.cost.dram_read_bytes - k.cost.dram_read_bytes, 16 * 8 * 32 * 32 * 4);
  // Where x stays in the last-level cache, the re-read costs about what
  // the fold's own pass over each run does: two passes as written.
  EXPECT_TRUE(Plan(*m, target::HostCpuSpec()).computations[0].kernels[0].one_pass.empty());
}

TEST(OnePassStatistics, ABf16VarianceFoldsOnlyWithExcessPrecision) {
  std::unique_ptr<Module> m = ParseModule(testing::Bf16BatchStatisticsText(16, 8, 32, 32));
  ASSERT_NE(m, nullptr);
  const Instruction* squares = FindInstruction(*m, "squares");
  EXPECT_FALSE(MatchCenteredSquares(*squares).has_value());
  std::optional<CenteredSquares> matched = MatchCenteredSquares(*squares, /*half_chains=*/true);
  ASSERT_TRUE(matched.has_value());
  EXPECT_EQ(matched->value, FindInstruction(*m, "x"));
  EXPECT_EQ(matched->center, FindInstruction(*m, "spread"));
  const FusionPlan excess = Plan(*m, SmallCacheCpu());
  ASSERT_EQ(excess.computations[0].kernels.size(), 1u);
  EXPECT_EQ(excess.computations[0].kernels[0].one_pass.size(), 1u);
  const FusionPlan rounded = Plan(*m, SmallCacheCpu(), /*one_pass=*/true, /*excess_precision=*/false);
  for (const Kernel& k : rounded.computations[0].kernels) EXPECT_TRUE(k.one_pass.empty());
}

TEST(OnePassStatistics, NotOnAGpuNorWithoutContiguousRuns) {
  std::unique_ptr<Module> m = ParseModule(kBatchNorm);
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(Plan(*m, target::H100Spec()).computations[0].kernels[0].one_pass.empty());
  // Channels last in effect: kept dimension 3 is innermost, the reduced
  // elements of a channel are strided.
  std::unique_ptr<Module> strided = ParseModule(Statistics("0,1,2", "f32[32]", "3"));
  ASSERT_NE(strided, nullptr);
  EXPECT_TRUE(MatchCenteredSquares(*FindInstruction(*strided, "squares")).has_value());
  const FusionPlan plan = Plan(*strided, SmallCacheCpu());
  for (const Kernel& k : plan.computations[0].kernels) {
    EXPECT_TRUE(k.one_pass.empty());
  }
}

}  // namespace
}  // namespace seam::fusion
