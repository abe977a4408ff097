// seam run --verify's comparison: bounds scaled to each array's magnitude,
// so that a deep network's rounding passes while a miscompiled element or
// array still fails.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "gtest/gtest.h"
#include "seam/eval/compare.h"
#include "seam/eval/random_fill.h"

namespace seam {
namespace {

Literal F32(const std::vector<float>& values) {
  Literal out(Shape::Array(DType::kF32, {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) out.SetDouble(static_cast<int64_t>(i), values[i]);
  return out;
}

// Activations of a deep network: most near the scale, some near zero.
std::vector<float> Activations(int n) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 30.0f);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

TEST(VerifyCompare, RoundingGrownThroughLayersPasses) {
  std::vector<float> want = Activations(4096);
  std::vector<float> got = want;
  std::mt19937 rng(1);
  std::normal_distribution<float> noise(0.0f, 1.0f);
  for (float& x : got) x += x * 2e-6f * noise(rng);
  // Cancellation left a few small elements with errors far past their own
  // size, though small against the array's scale.
  for (int i = 0; i < 8; ++i) got[i * 500] = want[i * 500] + 0.05f * (i % 2 ? 1 : -1);
  Literal g = F32(got), w = F32(want);
  // An elementwise tolerance cries wolf...
  EXPECT_NE(DescribeDifferences(g, w, &RewriteTolerance, "out"), "");
  // ...this does not.
  EXPECT_EQ(DescribeVerifyDifferences(g, w, "out"), "");
  ArrayError e = MeasureArrayError(g, w);
  EXPECT_GT(e.max_relative, 1e-4);
  EXPECT_LT(e.rms_relative, 1e-4);
  EXPECT_GT(e.max_ulps, 100);
}

TEST(VerifyCompare, OneWrongElementFails) {
  std::vector<float> want = Activations(4096);
  std::vector<float> got = want;
  got[1234] += 40.0f;  // a wrong read: off by a good part of the scale
  std::string d = DescribeVerifyDifferences(F32(got), F32(want), "out");
  EXPECT_NE(d, "");
  EXPECT_NE(d.find("worst at 1234"), std::string::npos) << d;
}

TEST(VerifyCompare, EveryElementSlightlyWrongFails) {
  std::vector<float> want = Activations(4096);
  std::vector<float> got = want;
  for (float& x : got) x *= 1.003f;  // a wrong constant, say
  EXPECT_NE(DescribeVerifyDifferences(F32(got), F32(want), "out"), "");
}

TEST(VerifyCompare, NonFiniteMustMatch) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(DescribeVerifyDifferences(F32({1, nan, inf, -inf}), F32({1, nan, inf, -inf}), "out"), "");
  std::string d = DescribeVerifyDifferences(F32({1, nan, 2}), F32({1, 3, 2}), "out");
  EXPECT_NE(d.find("NaN or infinite on one side only; first at 1"), std::string::npos) << d;
  EXPECT_NE(DescribeVerifyDifferences(F32({inf}), F32({-inf}), "out"), "");
}

TEST(VerifyCompare, IntegersAreExact) {
  Literal a(Shape::Array(DType::kS32, {3})), b(Shape::Array(DType::kS32, {3}));
  for (int i = 0; i < 3; ++i) a.SetBits(i, i), b.SetBits(i, i);
  EXPECT_EQ(DescribeVerifyDifferences(a, b, "out"), "");
  b.SetBits(2, 3);
  EXPECT_NE(DescribeVerifyDifferences(a, b, "out"), "");
}

TEST(VerifyCompare, TuplesElementByElement) {
  std::vector<Literal> got_elements, want_elements;
  got_elements.push_back(F32({1, 2}));
  want_elements.push_back(F32({1, 2}));
  got_elements.push_back(F32({5, 9}));
  want_elements.push_back(F32({5, 6}));
  Shape shape = Shape::Tuple({got_elements[0].shape(), got_elements[1].shape()});
  std::string d = DescribeVerifyDifferences(Literal::Tuple(shape, std::move(got_elements)),
                                            Literal::Tuple(shape, std::move(want_elements)), "out");
  EXPECT_NE(d.find("out{1}"), std::string::npos) << d;
  EXPECT_EQ(d.find("out{0}"), std::string::npos) << d;
}

ArrayError Error(double max_relative, double rms_relative) {
  ArrayError e;
  e.max_relative = max_relative;
  e.rms_relative = rms_relative;
  return e;
}

TEST(VerifyCompare, AnOutputThatAmplifiesRoundingPassesWithinItsMove) {
  // MobileNetV2's training step: a batch-norm gradient 1.2e-2 of its largest
  // magnitude from the oracle (rms 3.6e-3), which moves by 5.9e-3 (1.4e-3)
  // when the inputs move by one ulp.
  const ArrayError error = Error(1.2e-2, 3.6e-3);
  EXPECT_TRUE(WithinSensitivity(error, Error(5.9e-3, 1.4e-3), DType::kF32));
  // The same error on an output that rounding does not move is a miscompile.
  EXPECT_FALSE(WithinSensitivity(error, Error(6e-8, 3e-8), DType::kF32));
  // Either measure past kSensitivityFactor times its move fails.
  EXPECT_FALSE(WithinSensitivity(error, Error(5.9e-3, 1e-4), DType::kF32));
  EXPECT_FALSE(WithinSensitivity(error, Error(1e-3, 1.4e-3), DType::kF32));
  // A measure within its own bound needs no slack: rms 1.27e-4 is past
  // 1e-4, the worst element's 1.8e-4 well within 1e-2.
  EXPECT_TRUE(WithinSensitivity(Error(1.8e-4, 1.27e-4), Error(3.7e-5, 2.8e-5), DType::kF32));
}

TEST(VerifyCompare, AnOutputWithNoSignificantDigitPassesWhateverItsError) {
  // MobileNetV2's first batch-norm gradients on random weights: the oracle
  // itself moves by 4.7x its largest magnitude (rms 5x) under one-ulp nudges.
  EXPECT_TRUE(WithinSensitivity(Error(122, 144), Error(4.68, 4.99), DType::kF32));
  EXPECT_FALSE(WithinSensitivity(Error(122, 144), Error(4.68, 0.9), DType::kF32));
}

TEST(VerifyCompare, NonFiniteElementsGetNoSlack) {
  ArrayError error = Error(1e-3, 1e-4);
  error.nonfinite_mismatches = 1;
  EXPECT_FALSE(WithinSensitivity(error, Error(1, 1), DType::kF32));
}

uint32_t Bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

TEST(VerifyCompare, NudgeMovesEveryFiniteNonZeroElementOneUlp) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float largest = std::numeric_limits<float>::max();
  const float tiniest = std::numeric_limits<float>::denorm_min();
  std::vector<float> values = {0.0f, -0.0f, inf, -inf, nan, largest, tiniest, -tiniest};
  for (int i = 0; i < 64; ++i) values.push_back((i % 2 ? -1.0f : 1.0f) * (0.37f + i));
  const Literal before = F32(values);
  Literal after = F32(values);
  NudgeByOneUlp(after, 3);
  int up = 0, down = 0;
  for (int64_t i = 0; i < before.element_count(); ++i) {
    const double was = before.GetDouble(i), is = after.GetDouble(i);
    if (was == 0 || !std::isfinite(was)) {
      EXPECT_EQ(Bits(static_cast<float>(is)), Bits(static_cast<float>(was))) << i;
      continue;
    }
    ASSERT_TRUE(std::isfinite(is)) << i;
    const float toward = is > was ? inf : -inf;
    EXPECT_EQ(static_cast<float>(is), std::nextafter(static_cast<float>(was), toward)) << i;
    EXPECT_EQ(std::signbit(is), std::signbit(was)) << i;
    (std::abs(is) > std::abs(was) ? up : down) += 1;
  }
  EXPECT_GT(up, 16);  // both directions, pseudo-randomly
  EXPECT_GT(down, 16);
  Literal again = F32(values);
  NudgeByOneUlp(again, 3);
  EXPECT_EQ(again.bytes(), after.bytes());  // a pure function of the seed
}

TEST(VerifyCompare, NudgeMovesBF16ByItsOwnUlp) {
  Literal value(Shape::Array(DType::kBF16, {16}));
  for (int i = 0; i < 16; ++i) value.SetDouble(i, 1.0 + i);
  Literal nudged = value;
  NudgeByOneUlp(nudged, 0);
  for (int i = 0; i < 16; ++i) {
    const uint64_t a = value.GetBits(i), b = nudged.GetBits(i);
    EXPECT_EQ(a > b ? a - b : b - a, 1u) << i;
  }
}

}  // namespace
}  // namespace seam
