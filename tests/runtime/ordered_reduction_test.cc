// A reducer that is not one of the combiners (add, multiply, max, min, and,
// or) need not be associative or commutative: subtract folded as
// init - x0 - x1 - ... is not (x0 - x1 - ...) subtracted from init, nor the
// difference of two halves. Compiled paths fold such reductions as the
// interpreter does, from the init value through the reduced elements in
// row-major order: rows, columns and everything, short and long, on every
// backend under every strategy, bit for bit.
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends.h"
#include "gtest/gtest.h"
#include "seam/fusion/strategies.h"

namespace seam::testing {
namespace {

struct Case {
  std::string name;     // the test's name
  std::string reducer;  // the reducer's body after its parameters a and b
  std::string input, result, dimensions;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

std::string ModuleText(const Case& c) {
  return absl::StrCat(
      "HloModule ordered\n\nreducer {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n",
      c.reducer, "}\n\nENTRY e {\n  x = ", c.input,
      " parameter(0)\n  init = f32[] constant(0.5)\n  ROOT r = ", c.result,
      " reduce(x, init), dimensions={", c.dimensions, "}, to_apply=reducer\n}\n");
}

class OrderedReduction : public ::testing::TestWithParam<std::tuple<Case, Backend>> {};

TEST_P(OrderedReduction, FoldsInTheInterpretersOrder) {
  const auto& [c, backend] = GetParam();
  if (absl::Status present = BackendPresent(backend); !present.ok()) {
    GTEST_SKIP() << present;
  }
  std::unique_ptr<Module> module = ParseFirst(ModuleText(c), c.name);
  ASSERT_NE(module, nullptr);
  Literal argument = Literal::Uninitialized(module->entry()->parameters()[0]->shape());
  // Values whose sums and differences are exact in f32: any other order of
  // folding gives another number, not a rounding of the same one.
  for (int64_t i = 0; i < argument.element_count(); ++i) argument.SetDouble(i, (i % 13) * 0.25);
  std::vector<Literal> arguments;
  arguments.push_back(std::move(argument));
  absl::StatusOr<Literal> expected = Evaluator().Run(*module, arguments);
  ASSERT_TRUE(expected.ok()) << expected.status();
  for (fusion::Strategy strategy :
       {fusion::Strategy::kNone, fusion::Strategy::kXla, fusion::Strategy::kStitch}) {
    CompiledRun run = CompileAndRun(backend, *module, strategy, arguments);
    ASSERT_TRUE(run.result.ok()) << run.result.status();
    for (int64_t i = 0; i < expected->element_count(); ++i) {
      EXPECT_EQ(run.result->GetDouble(i), expected->GetDouble(i))
          << fusion::StrategyName(strategy) << ", element " << i;
    }
  }
}

std::vector<Case> Cases() {
  const std::string subtract = "  ROOT s = f32[] subtract(a, b)\n";
  // Neither associative nor a single op: b - 2a, whose fold doubles each
  // step (so short rows keep it exact).
  const std::string two_ops =
      "  two = f32[] constant(2)\n  twice = f32[] multiply(a, two)\n"
      "  ROOT s = f32[] subtract(b, twice)\n";
  return {
      {"RowsSubtract", subtract, "f32[4,1000]", "f32[4]", "1"},
      {"ALongRowSubtract", subtract, "f32[2,20000]", "f32[2]", "1"},
      {"ColumnsSubtract", subtract, "f32[10000,4]", "f32[4]", "0"},
      {"MiddleSubtract", subtract, "f32[3,500,4]", "f32[3,4]", "1"},
      {"EverythingSubtract", subtract, "f32[64]", "f32[]", "0"},
      {"EverythingLongSubtract", subtract, "f32[100000]", "f32[]", "0"},
      {"RowsTwoOps", two_ops, "f32[8,16]", "f32[8]", "1"},
      {"ColumnsTwoOps", two_ops, "f32[16,8]", "f32[8]", "0"},
  };
}

INSTANTIATE_TEST_SUITE_P(Reducers, OrderedReduction,
                         ::testing::Combine(::testing::ValuesIn(Cases()),
                                            ::testing::ValuesIn(AllBackends())),
                         [](const ::testing::TestParamInfo<OrderedReduction::ParamType>& info) {
                           return std::get<0>(info.param).name +
                                  BackendSuffix(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace seam::testing
