// conv-operand-folding on random convolutions: a zero pad in front of the
// input (edge and interior) and a reverse of kernel dimensions, under random
// windows (stride, padding, base and window dilation, reversal) and both
// layouts. The folded convolution computes the same bits on finite inputs;
// the one documented difference, an infinite weight facing explicit zero
// padding, is pinned down too.
#include <cmath>
#include <limits>
#include <random>

#include "../common/hlo_text.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "pass_test_util.h"

namespace seam::testing {
namespace {

struct Case {
  std::string text;
  bool valid = false;
};

// One random convolution on pad(x) and reverse(k), or !valid where the
// window does not fit.
Case RandomCase(std::mt19937& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const bool channels_last = pick(0, 1) == 1;
  const int n = pick(1, 2), c = pick(1, 3), o = pick(1, 3);
  int in[2] = {pick(2, 6), pick(2, 6)};
  int padded[2];
  std::vector<std::string> pad_text = {"0_0"}, window_text, out_dims;
  std::string size, stride, wpad, lhs, rhs, reversal;
  for (int s = 0; s < 2; ++s) {
    const int lo = pick(0, 2), hi = pick(0, 2), interior = pick(0, 3) == 0 ? 1 : 0;
    padded[s] = lo + hi + (in[s] - 1) * (interior + 1) + 1;
    pad_text.push_back(interior ? absl::StrCat(lo, "_", hi, "_", interior)
                                : absl::StrCat(lo, "_", hi));
    const int k = pick(1, 3), st = pick(1, 2), pl = pick(0, 1), ph = pick(0, 1);
    const int ld = interior ? 1 : pick(1, 2), rd = pick(1, 2);
    const int dilated = (padded[s] - 1) * ld + 1 + pl + ph, extent = (k - 1) * rd + 1;
    if (dilated < extent) return {};
    out_dims.push_back(absl::StrCat((dilated - extent) / st + 1));
    absl::StrAppend(&size, s ? "x" : "", k);
    absl::StrAppend(&stride, s ? "x" : "", st);
    absl::StrAppend(&wpad, s ? "x" : "", pl, "_", ph);
    absl::StrAppend(&lhs, s ? "x" : "", ld);
    absl::StrAppend(&rhs, s ? "x" : "", rd);
    absl::StrAppend(&reversal, s ? "x" : "", pick(0, 1));
    window_text.push_back(absl::StrCat(k));
  }
  pad_text.push_back("0_0");
  if (!channels_last) std::swap(pad_text[1], pad_text[3]), std::swap(pad_text[2], pad_text[3]);
  auto dims = [&](int batch, int a, int b, int feature) {
    return channels_last ? absl::StrCat("[", batch, ",", a, ",", b, ",", feature, "]")
                         : absl::StrCat("[", batch, ",", feature, ",", a, ",", b, "]");
  };
  // Reversed kernel dimensions: one or both spatial ones (0 and 1 of 01io).
  std::vector<std::string> reversed;
  for (int d = 0; d < 2; ++d) {
    if (pick(0, 1)) reversed.push_back(absl::StrCat(d));
  }
  if (reversed.empty()) reversed.push_back("0");
  const std::string kernel =
      absl::StrCat("[", window_text[0], ",", window_text[1], ",", c, ",", o, "]");
  const std::string labels = channels_last ? "b01f_01io->b01f" : "bf01_01io->bf01";
  Case out;
  out.valid = true;
  out.text = absl::StrCat(
      "HloModule m\nENTRY e {\n  x = f32", dims(n, in[0], in[1], c), " parameter(0)\n  k = f32",
      kernel, " parameter(1)\n  zero = f32[] constant(0)\n  p = f32",
      dims(n, padded[0], padded[1], c), " pad(x, zero), padding=", absl::StrJoin(pad_text, "x"),
      "\n  r = f32", kernel, " reverse(k), dimensions={", absl::StrJoin(reversed, ","),
      "}\n  ROOT c = f32", dims(n, std::stoi(out_dims[0]), std::stoi(out_dims[1]), o),
      " convolution(p, r), window={size=", size, " stride=", stride, " pad=", wpad,
      " lhs_dilate=", lhs, " rhs_dilate=", rhs, " rhs_reversal=", reversal,
      "}, dim_labels=", labels, "\n}\n");
  return out;
}

using testing::ParseModule;

int CountOpcode(const Module& module, Opcode opcode) {
  int count = 0;
  for (const auto& i : module.entry()->instructions()) count += i->opcode() == opcode;
  return count;
}

TEST(ConvOperandFolding, RandomConvolutionsKeepTheirBits) {
  std::mt19937 rng(20261127);
  int checked = 0;
  while (checked < 200) {
    const Case c = RandomCase(rng);
    if (!c.valid) continue;
    std::unique_ptr<Module> module = ParseModule(c.text);
    ASSERT_NE(module, nullptr);
    const std::vector<Literal> arguments = RandomArguments(*module->entry(), checked);
    absl::StatusOr<Literal> before = Interpret(*module, arguments);
    ASSERT_TRUE(before.ok()) << before.status() << "\n" << c.text;
    absl::StatusOr<Pipeline> pipeline = Pipeline::Parse("conv-operand-folding,dce");
    ASSERT_TRUE(pipeline.ok());
    absl::StatusOr<bool> changed = pipeline->Run(*module);
    ASSERT_TRUE(changed.ok()) << changed.status();
    absl::Status valid = VerifyModule(*module);
    ASSERT_TRUE(valid.ok()) << valid << "\n" << c.text;
    // Both fold: the generator pads inside a dimension only where the
    // window does not dilate it already.
    EXPECT_EQ(CountOpcode(*module, Opcode::kReverse), 0) << c.text;
    EXPECT_EQ(CountOpcode(*module, Opcode::kPad), 0) << c.text;
    absl::StatusOr<Literal> after = Interpret(*module, arguments);
    ASSERT_TRUE(after.ok()) << after.status();
    ASSERT_EQ(after->bytes().size(), before->bytes().size());
    EXPECT_TRUE(std::equal(after->bytes().begin(), after->bytes().end(), before->bytes().begin()))
        << c.text;
    ++checked;
  }
}

// The fold's one difference: explicit zeros times an infinite weight are
// NaN, window padding contributes nothing (as in XLA, which folds the same).
TEST(ConvOperandFolding, AnInfiniteWeightFacingThePaddingIsNoLongerNaN) {
  std::unique_ptr<Module> module = ParseModule(R"(HloModule m
ENTRY e {
  x = f32[1,1,1,1] parameter(0)
  k = f32[3,1,1,1] parameter(1)
  zero = f32[] constant(0)
  p = f32[1,3,1,1] pad(x, zero), padding=0_0x1_1x0_0x0_0
  ROOT c = f32[1,1,1,1] convolution(p, k), window={size=3x1}, dim_labels=b01f_01io->b01f
})");
  ASSERT_NE(module, nullptr);
  std::vector<Literal> arguments;
  arguments.emplace_back(module->entry()->parameters()[0]->shape());
  arguments.emplace_back(module->entry()->parameters()[1]->shape());
  arguments[0].SetDouble(0, 2.0);
  arguments[1].SetDouble(0, std::numeric_limits<double>::infinity());
  arguments[1].SetDouble(1, 3.0);
  arguments[1].SetDouble(2, 1.0);
  absl::StatusOr<Literal> before = Interpret(*module, arguments);
  ASSERT_TRUE(before.ok());
  EXPECT_TRUE(std::isnan(before->GetDouble(0)));
  absl::StatusOr<Pipeline> pipeline = Pipeline::Parse("conv-operand-folding,dce");
  ASSERT_TRUE(pipeline.ok());
  ASSERT_TRUE(pipeline->Run(*module).ok());
  EXPECT_EQ(CountOpcode(*module, Opcode::kPad), 0);
  absl::StatusOr<Literal> after = Interpret(*module, arguments);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->GetDouble(0), 6.0);
}

}  // namespace
}  // namespace seam::testing
