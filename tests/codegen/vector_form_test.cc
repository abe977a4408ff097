// The vector form each op's generated code carries: what decides whether a
// vectorized CPU loop calls the twins of exp and tanh.
#include "seam/codegen/vector_form.h"

#include <map>
#include <string>

#include "gtest/gtest.h"
#include "seam/codegen/c_types.h"
#include "seam/codegen/scalar_expr.h"
#include "seam/text/parser.h"

namespace seam::codegen {
namespace {

constexpr char kOps[] = R"(
HloModule forms

ENTRY e {
  x = f32[8] parameter(0)
  y = f32[8] parameter(1)
  d = f64[8] parameter(2)
  i = s32[8] parameter(3)
  p = pred[8] parameter(4)
  add = f32[8] add(x, y)
  div = f32[8] divide(x, y)
  sqrt = f32[8] sqrt(x)
  rsqrt = f32[8] rsqrt(x)
  exp = f32[8] exponential(x)
  tanh = f32[8] tanh(x)
  logistic = f32[8] logistic(x)
  exp64 = f64[8] exponential(d)
  log = f32[8] log(x)
  max = f32[8] maximum(x, y)
  lt = pred[8] compare(x, y), direction=LT
  select = f32[8] select(p, x, y)
  iadd = s32[8] add(i, i)
  toint = s32[8] convert(x)
  tofloat = f32[8] convert(i)
  ROOT t = (f32[8]) tuple(add)
}
)";

TEST(VectorForm, EachOpsCodeCarriesItsForm) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(kOps);
  ASSERT_TRUE(module.ok()) << module.status();
  const std::map<std::string, VectorForm> expected = {
      {"add", VectorForm::kPlain},        {"div", VectorForm::kPlain},
      {"sqrt", VectorForm::kPlain},       {"rsqrt", VectorForm::kPlain},
      {"exp", VectorForm::kTwinned},      {"tanh", VectorForm::kTwinned},
      {"logistic", VectorForm::kTwinned}, {"exp64", VectorForm::kBranchy},
      {"log", VectorForm::kBranchy},      {"max", VectorForm::kBranchy},
      {"lt", VectorForm::kPlain},         {"select", VectorForm::kBranchy},
      {"iadd", VectorForm::kBranchy},     {"toint", VectorForm::kBranchy},
      {"tofloat", VectorForm::kPlain},
  };
  int checked = 0;
  for (const auto& i : (*module)->entry()->instructions()) {
    auto form = expected.find(i->name());
    if (form == expected.end()) continue;
    absl::StatusOr<ScalarCode> code = ScalarCodeOf(*i, {"a", "b", "c"});
    ASSERT_TRUE(code.ok()) << i->name() << ": " << code.status();
    EXPECT_EQ(code->form, form->second) << i->name() << ": " << code->text;
    ++checked;
  }
  EXPECT_EQ(checked, static_cast<int>(expected.size()));
}

TEST(VectorForm, TwinsAreCalledByName) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(kOps);
  ASSERT_TRUE(module.ok()) << module.status();
  for (const auto& i : (*module)->entry()->instructions()) {
    if (i->name() != "logistic") continue;
    EXPECT_EQ(ScalarCodeOf(*i, {"a"}, /*twins=*/true)->text, "(1.0f / (1.0f + seam_exp_simd(-a)))");
    EXPECT_EQ(ScalarCodeOf(*i, {"a"})->text, "(1.0f / (1.0f + seam_exp(-a)))");
  }
  EXPECT_EQ(CalledFunction("seam_tanh", true), "seam_tanh_simd");
  EXPECT_EQ(CalledFunction("seam_erf", true), "seam_erf");
}

TEST(VectorForm, ConversionsAndLiterals) {
  EXPECT_EQ(ConversionForm(DType::kBF16), VectorForm::kPlain);
  EXPECT_EQ(ConversionForm(DType::kF16), VectorForm::kBranchy);
  EXPECT_EQ(LiteralForm(DType::kF32), VectorForm::kPlain);
  EXPECT_EQ(LiteralForm(DType::kS32), VectorForm::kBranchy);
  EXPECT_EQ(VectorForm::kPlain | VectorForm::kTwinned, VectorForm::kTwinned);
  EXPECT_EQ(VectorForm::kTwinned | VectorForm::kBranchy, VectorForm::kBranchy);
}

}  // namespace
}  // namespace seam::codegen
