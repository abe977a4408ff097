// A float sum down a million rows keeps its precision in compiled kernels:
// column reductions fold rows into partials of at most a few thousand rows
// (a batch-norm statistic of a channels-last activation sums 1.2M rows per
// channel; run down in one accumulator it lost 60x the precision of the
// same sum channel-major, compounding to 1e-2 over MobileNetV2's layers).
#include <cmath>

#include "backends.h"
#include "gtest/gtest.h"
#include "seam/fusion/strategies.h"
#include "seam/runtime/executable.h"

namespace seam::runtime {
namespace {

TEST(ReductionPrecision, ALongColumnSumStaysNearTheExactOne) {
  // 2^20 rows of 0.1f per column, the worst case (each add rounds the same
  // way at the sum's growing ulp): one accumulator per thread run down
  // half of them drifts by 4.1e-3 of the sum, partials of 4096 rows by
  // 4.1e-5.
  constexpr int64_t kRows = int64_t{1} << 20;
  const std::string text =
      "HloModule column_sum\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
      "  ROOT s = f32[] add(a, b)\n}\n\nENTRY e {\n  x = f32[1048576,16] parameter(0)\n"
      "  z = f32[] constant(0)\n  ROOT r = f32[16] reduce(x, z), dimensions={0}, to_apply=add\n}\n";
  std::unique_ptr<Module> module = testing::ParseFirst(text, "column_sum");
  ASSERT_NE(module, nullptr);
  Literal argument = Literal::Uninitialized(module->entry()->parameters()[0]->shape());
  for (int64_t i = 0; i < argument.element_count(); ++i) argument.SetDouble(i, 0.1f);
  std::vector<Literal> arguments;
  arguments.push_back(std::move(argument));
  const double exact = static_cast<double>(0.1f) * kRows;
  for (fusion::Strategy strategy : {fusion::Strategy::kXla, fusion::Strategy::kStitch}) {
    ExecutableOptions options;
    options.plan.strategy = strategy;
    absl::StatusOr<std::unique_ptr<Executable>> executable = Executable::Compile(*module, options);
    ASSERT_TRUE(executable.ok()) << executable.status();
    absl::StatusOr<Literal> result = (*executable)->Run(arguments);
    ASSERT_TRUE(result.ok()) << result.status();
    for (int64_t i = 0; i < result->element_count(); ++i) {
      EXPECT_LT(std::abs(result->GetDouble(i) - exact) / exact, 1e-4) << "column " << i;
    }
  }
}

// The same for a sum of everything (a LAMB norm of 488K squares, BERT's
// optimizer step): the threads' shares of 2^20 elements are summed in
// blocks, not run down in one accumulator each (4.1e-3 of the sum).
TEST(ReductionPrecision, AFullSumStaysNearTheExactOne) {
  constexpr int64_t kElements = int64_t{1} << 20;
  const std::string text =
      "HloModule full_sum\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
      "  ROOT s = f32[] add(a, b)\n}\n\nENTRY e {\n  x = f32[1048576] parameter(0)\n"
      "  z = f32[] constant(0)\n  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=add\n}\n";
  std::unique_ptr<Module> module = testing::ParseFirst(text, "full_sum");
  ASSERT_NE(module, nullptr);
  Literal argument = Literal::Uninitialized(module->entry()->parameters()[0]->shape());
  for (int64_t i = 0; i < argument.element_count(); ++i) argument.SetDouble(i, 0.1f);
  std::vector<Literal> arguments;
  arguments.push_back(std::move(argument));
  const double exact = static_cast<double>(0.1f) * kElements;
  for (fusion::Strategy strategy : {fusion::Strategy::kXla, fusion::Strategy::kStitch}) {
    ExecutableOptions options;
    options.plan.strategy = strategy;
    absl::StatusOr<std::unique_ptr<Executable>> executable = Executable::Compile(*module, options);
    ASSERT_TRUE(executable.ok()) << executable.status();
    absl::StatusOr<Literal> result = (*executable)->Run(arguments);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_LT(std::abs(result->GetDouble(0) - exact) / exact, 1e-4)
        << fusion::StrategyName(strategy);
  }
}

}  // namespace
}  // namespace seam::runtime
