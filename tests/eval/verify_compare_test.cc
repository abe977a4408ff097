// seam run --verify's comparison: bounds scaled to each array's magnitude,
// so that a deep network's rounding passes while a miscompiled element or
// array still fails.
#include <cmath>
#include <limits>
#include <random>

#include "gtest/gtest.h"
#include "seam/eval/compare.h"

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

}  // namespace
}  // namespace seam
