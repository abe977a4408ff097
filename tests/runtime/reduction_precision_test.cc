// A float sum of a million elements keeps its precision in compiled
// kernels: column reductions fold rows into partials of at most a few
// thousand rows (a batch-norm statistic of a channels-last activation sums
// 1.2M rows per channel; run down in one accumulator it lost 60x the
// precision of the same sum channel-major, compounding to 1e-2 over
// MobileNetV2's layers), and a sum of everything split over threads adds
// each share up in blocks (a LAMB norm of 488K squares, BERT's optimizer
// step). The interpreter, as their oracle, sums f32 in f64.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "backends.h"
#include "gtest/gtest.h"
#include "seam/compiler/cpu_compiler.h"
#include "seam/eval/evaluator.h"
#include "seam/fusion/strategies.h"
#include "seam/runtime/executable.h"

namespace seam::runtime {
namespace {

// Sums `shape` of 2^20 elements (per result element) of 0.1f over
// `dimensions` under each strategy and expects every result within 1e-4
// of the exact sum: 0.1f throughout is the worst case (each add rounds the
// same way at the sum's growing ulp), where one accumulator per thread run
// down half of them drifts by 4.1e-3 of the sum.
void ExpectSumsNearTheExactOne(const std::string& shape, const std::string& result,
                               const std::string& dimensions) {
  constexpr int64_t kSummed = int64_t{1} << 20;
  const std::string text = absl::StrCat(
      "HloModule sum\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
      "  ROOT s = f32[] add(a, b)\n}\n\nENTRY e {\n  x = ",
      shape, " parameter(0)\n  z = f32[] constant(0)\n  ROOT r = ", result,
      " reduce(x, z), dimensions={", dimensions, "}, to_apply=add\n}\n");
  std::unique_ptr<Module> module = testing::ParseFirst(text, "sum");
  ASSERT_NE(module, nullptr);
  Literal argument = Literal::Uninitialized(module->entry()->parameters()[0]->shape());
  for (int64_t i = 0; i < argument.element_count(); ++i) argument.SetDouble(i, 0.1f);
  std::vector<Literal> arguments;
  arguments.push_back(std::move(argument));
  const double exact = static_cast<double>(0.1f) * kSummed;
  for (fusion::Strategy strategy : {fusion::Strategy::kXla, fusion::Strategy::kStitch}) {
    compiler::CpuOptions options;
    options.plan.strategy = strategy;
    absl::StatusOr<compiler::Compiled<runtime::Executable>> executable =
        compiler::CompileForCpu(*module, options);
    ASSERT_TRUE(executable.ok()) << executable.status();
    absl::StatusOr<Literal> sums = (*executable)->Run(arguments);
    ASSERT_TRUE(sums.ok()) << sums.status();
    for (int64_t i = 0; i < sums->element_count(); ++i) {
      EXPECT_LT(std::abs(sums->GetDouble(i) - exact) / exact, 1e-4)
          << fusion::StrategyName(strategy) << ", element " << i;
    }
  }
  // The oracle of compiled paths (`seam run --verify`, the differential
  // tests) accumulates f32 in f64: one rounding from the exact sum, so an
  // accurate kernel is not failed against a drifting sequential sum.
  Evaluator oracle;
  oracle.set_wide_accumulation(true);
  absl::StatusOr<Literal> sums = oracle.Run(*module, arguments);
  ASSERT_TRUE(sums.ok()) << sums.status();
  for (int64_t i = 0; i < sums->element_count(); ++i) {
    EXPECT_EQ(sums->GetDouble(i), static_cast<float>(exact)) << "oracle, element " << i;
  }
}

TEST(ReductionPrecision, ALongColumnSumStaysNearTheExactOne) {
  // Partials of 4096 rows drift by 4.1e-5.
  ExpectSumsNearTheExactOne("f32[1048576,16]", "f32[16]", "0");
}

TEST(ReductionPrecision, AFullSumStaysNearTheExactOne) {
  // Blocks of 4096 elements: ~1e-6.
  ExpectSumsNearTheExactOne("f32[1048576]", "f32[]", "0");
}

}  // namespace
}  // namespace seam::runtime
