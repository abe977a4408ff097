// Flops and transcendentals as XLA's cost analysis counts them, on modules
// small enough to count by hand.
#include "seam/gym/cost_analysis.h"

#include "gtest/gtest.h"
#include "seam/text/parser.h"

namespace seam::gym {
namespace {

std::unique_ptr<Module> Parse(absl::string_view text) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? std::move(*module) : nullptr;
}

TEST(CostAnalysis, CountsElementwiseDotsAndReductions) {
  std::unique_ptr<Module> module = Parse(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[8,16] parameter(0)
  w = f32[16,4] parameter(1)
  d = f32[8,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[8,4] exponential(d)
  q = f32[8,4] divide(t, t)
  z = f32[] constant(0)
  ROOT r = f32[8] reduce(q, z), dimensions={1}, to_apply=add
})");
  ASSERT_NE(module, nullptr);
  ArithmeticCounts counts = CountArithmetic(*module);
  // dot 2*8*4*16, divide 32, reduce (32 - 8) adds; the reducer's own add is
  // counted through the reduce, not as a computation of its own.
  EXPECT_DOUBLE_EQ(counts.flops, 2 * 8 * 4 * 16 + 32 + 24);
  EXPECT_DOUBLE_EQ(counts.transcendentals, 32);
  EXPECT_DOUBLE_EQ(Potential(counts), -(1024 + 32 + 24) - 2 * 32);
}

TEST(CostAnalysis, LoopBodiesCountOnce) {
  std::unique_ptr<Module> module = Parse(R"(
HloModule m
body {
  p = f32[4] parameter(0)
  ROOT n = f32[4] tanh(p)
}
cond {
  p = f32[4] parameter(0)
  ROOT t = pred[] constant(false)
}
ENTRY e {
  x = f32[4] parameter(0)
  ROOT w = f32[4] while(x), condition=cond, body=body
})");
  ASSERT_NE(module, nullptr);
  ArithmeticCounts counts = CountArithmetic(*module);
  EXPECT_DOUBLE_EQ(counts.transcendentals, 4);
  EXPECT_DOUBLE_EQ(counts.flops, 0);
}

TEST(CostAnalysis, StitchEstimateIsPositive) {
  std::unique_ptr<Module> module = Parse(R"(
HloModule m
ENTRY e {
  x = f32[1024,256] parameter(0)
  ROOT y = f32[1024,256] exponential(x)
})");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<StitchEstimate> estimate = EstimateAfterStitch(*module, target::HostCpuSpec());
  ASSERT_TRUE(estimate.ok()) << estimate.status();
  EXPECT_GT(estimate->time_us, 0);
  EXPECT_DOUBLE_EQ(estimate->dram_bytes, 2 * 1024 * 256 * 4);
  EXPECT_EQ(estimate->kernels, 1);
}

}  // namespace
}  // namespace seam::gym
