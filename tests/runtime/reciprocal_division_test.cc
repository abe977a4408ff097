// CPU kernels divide by a value constant along a row (a softmax's sum) as
// a multiplication by its reciprocal, which the loop along the row computes
// once; a division by a value that varies along the row (a per-column
// scale) stays a division, as do divisions on a GPU. The results stay
// within an ulp and a half of the division's. A bf16 division does so
// only with excess precision, where the chain computes in float.
#include <cmath>

#include "absl/strings/match.h"
#include "backends.h"
#include "gtest/gtest.h"
#include "seam/codegen/kernel_ir.h"
#include "seam/eval/arguments.h"
#include "seam/eval/evaluator.h"
#include "seam/fusion/planner.h"

namespace seam::runtime {
namespace {

constexpr char kSoftmaxThenScale[] = R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[64,256] parameter(0)
  scale = f32[256] parameter(1)
  e = f32[64,256] exponential(x)
  zero = f32[] constant(0)
  sum = f32[64] reduce(e, zero), dimensions={1}, to_apply=add
  sums = f32[64,256] broadcast(sum), dimensions={0}
  by_row = f32[64,256] divide(e, sums)
  scales = f32[64,256] broadcast(scale), dimensions={1}
  ROOT by_column = f32[64,256] divide(by_row, scales)
}
)";

// The divisions of `module`'s kernels lowered for `device` that multiply
// by a reciprocal.
std::vector<std::string> ReciprocalDivisions(const Module& module,
                                             const target::DeviceSpec& device) {
  fusion::PlanOptions options;
  options.device = device;
  absl::StatusOr<fusion::FusionPlan> plan = fusion::PlanModule(module, options);
  EXPECT_TRUE(plan.ok()) << plan.status();
  std::vector<std::string> names;
  for (const fusion::Kernel& k : plan->computations[0].kernels) {
    absl::StatusOr<codegen::KernelIr> ir = codegen::LowerKernel(k, device, "k");
    EXPECT_TRUE(ir.ok()) << ir.status();
    for (const Instruction* d : ir->reciprocal_divisions) names.push_back(d->name());
  }
  return names;
}

TEST(ReciprocalDivision, OnlyARowsDivisorOnACpu) {
  std::unique_ptr<Module> module = testing::ParseFirst(kSoftmaxThenScale, "m");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(ReciprocalDivisions(*module, target::HostCpuSpec()),
            std::vector<std::string>{"by_row"});
  EXPECT_TRUE(ReciprocalDivisions(*module, target::H100Spec()).empty());
}

TEST(ReciprocalDivision, StaysWithinAnUlpAndAHalfOfTheDivision) {
  std::unique_ptr<Module> module = testing::ParseFirst(R"(HloModule m
ENTRY e {
  x = f32[64,256] parameter(0)
  s = f32[64] parameter(1)
  by = f32[64,256] broadcast(s), dimensions={0}
  ROOT q = f32[64,256] divide(x, by)
}
)",
                                                       "m");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(ReciprocalDivisions(*module, target::HostCpuSpec()), std::vector<std::string>{"q"});
  const std::vector<Literal> arguments = RandomArguments(*module->entry(), /*seed=*/7);
  Evaluator oracle;
  absl::StatusOr<Literal> want = oracle.Run(*module, arguments);
  ASSERT_TRUE(want.ok()) << want.status();
  testing::CompiledRun got =
      testing::CompileAndRun(testing::Backend::kCpu, *module, fusion::Strategy::kStitch, arguments);
  ASSERT_TRUE(got.result.ok()) << got.result.status();
  int64_t rounded_apart = 0;
  for (int64_t i = 0; i < want->element_count(); ++i) {
    const double w = want->GetDouble(i), g = got.result->GetDouble(i);
    // The reciprocal and the product each round: 1.5 ulp of the quotient.
    EXPECT_LE(std::abs(g - w), 1.5 * std::ldexp(1.0, std::ilogb(w) - 23)) << "element " << i;
    rounded_apart += g != w;
  }
  // The kernel multiplied (a division would round every quotient alike).
  EXPECT_GT(rounded_apart, 0);
}

// A bf16 division by a scalar (an optimizer's bias correction).
constexpr char kBf16ScalarDivisor[] = R"(HloModule m
ENTRY e {
  x = bf16[64,256] parameter(0)
  s = bf16[] parameter(1)
  by = bf16[64,256] broadcast(s), dimensions={}
  ROOT q = bf16[64,256] divide(x, by)
}
)";

TEST(ReciprocalDivision, Bf16OnlyWithExcessPrecision) {
  compiler::CpuOptions options;
  options.plan.excess_precision = true;
  const std::string excess = testing::CpuKernelsChecked(kBf16ScalarDivisor, "bf16_excess", options);
  EXPECT_TRUE(absl::StrContains(excess, "(float(1) / ")) << excess;
  options.plan.excess_precision = false;
  const std::string rounded = testing::CpuKernelsChecked(kBf16ScalarDivisor, "bf16_rounded", options);
  ASSERT_FALSE(rounded.empty());
  EXPECT_FALSE(absl::StrContains(rounded, "(float(1) / ")) << rounded;
}

}  // namespace
}  // namespace seam::runtime
