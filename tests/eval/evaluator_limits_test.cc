// What stops a run cleanly: a deadline (a loop that runs too long or
// forever) and a value of another form than its instruction declares (what
// a gap in the verifier would let through), each named in the error.
#include "absl/time/clock.h"
#include "eval_test_util.h"
#include "seam/eval/evaluator.h"
#include "seam/text/parser.h"

namespace seam::evaltest {
namespace {

std::unique_ptr<Module> Parse(absl::string_view text) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? *std::move(module) : nullptr;
}

TEST(EvaluatorLimits, ALoopPastTheDeadlineStopsNamingAnInstruction) {
  std::unique_ptr<Module> module = Parse(R"(HloModule m
cond {
  p = s32[] parameter(0)
  ROOT t = pred[] constant(true)
}
body {
  p = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT n = s32[] add(p, one)
}
ENTRY e {
  z = s32[] constant(0)
  ROOT w = s32[] while(z), condition=cond, body=body
}
)");
  ASSERT_NE(module, nullptr);
  Evaluator evaluator;
  evaluator.set_deadline(absl::Now() + absl::Milliseconds(50));
  const absl::Time start = absl::Now();
  absl::StatusOr<Literal> result = evaluator.Run(*module, {});
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("time limit"), absl::string_view::npos)
      << result.status();
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

TEST(EvaluatorLimits, AValueOfAnotherFormThanDeclaredStopsTheRun) {
  std::unique_ptr<Module> module = Parse(R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  b = f32[4] opt-barrier(p)
  ROOT a = f32[4] abs(b)
}
)");
  ASSERT_NE(module, nullptr);
  // As if the verifier had let through a declared shape the op does not
  // make (a barrier passes its operand on as it is).
  module->entry()->root()->operand(0)->mutable_shape() = Shape::Array(DType::kF32, {8});
  Literal x(Shape::Array(DType::kF32, {4}));
  absl::StatusOr<Literal> result = Evaluator().Run(*module, {x});
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("the interpreter made f32[4] where f32[8] is declared"),
            absl::string_view::npos)
      << result.status();
}

}  // namespace
}  // namespace seam::evaltest
