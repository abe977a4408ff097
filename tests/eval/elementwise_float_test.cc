// Float elementwise ops against hand-worked values: NaN propagation, signed
// zeros, infinities, both roundings, is-finite, atan2 quadrants, pow and rem
// edge cases, compare (IEEE and total order), select and clamp, and the
// per-op rounding of bf16/f16 arithmetic.
#include <cmath>

#include "eval_test_util.h"

namespace seam::evaltest {
namespace {

constexpr double kPi = 3.14159265358979323846;

Literal Binary(const std::string& op, Literal a, Literal b) {
  std::string shape = a.shape().ToString(false);
  return Ok(RunOp(shape, op, {a, b}));
}
Literal Unary(const std::string& op, Literal a) {
  std::string shape = a.shape().ToString(false);
  return Ok(RunOp(shape, op, {a}));
}

// --- maximum / minimum: XLA propagates NaN from either side, and (as XLA's
// CPU backend lowers them to llvm.maximum/minimum, IEEE 754-2019) orders
// -0 below +0 whatever the operand order.

TEST(FloatMaxMin, PropagatesNaNFromEitherOperand) {
  Literal a = F32({kNaN, 1, kNaN, -kInf, kInf, kNaN});
  Literal b = F32({1, kNaN, kNaN, kNaN, kNaN, -kInf});
  EXPECT_TRUE(SameFloats(Binary("maximum", a, b), {kNaND, kNaND, kNaND, kNaND, kNaND, kNaND}));
  EXPECT_TRUE(SameFloats(Binary("minimum", a, b), {kNaND, kNaND, kNaND, kNaND, kNaND, kNaND}));
}

TEST(FloatMaxMin, OrdinaryValuesAndInfinities) {
  Literal a = F32({1, -1, 2.5f, -kInf, kInf, -3});
  Literal b = F32({2, -2, 2.5f, 7, -7, -kInf});
  EXPECT_TRUE(SameFloats(Binary("maximum", a, b), {2, -1, 2.5, 7, kInfD, -3}));
  EXPECT_TRUE(SameFloats(Binary("minimum", a, b), {1, -2, 2.5, -kInfD, -7, -kInfD}));
}

TEST(FloatMaxMin, NegativeZeroIsBelowPositiveZeroInBothOrders) {
  Literal a = F32({-0.0f, 0.0f, -0.0f, 0.0f});
  Literal b = F32({0.0f, -0.0f, -0.0f, 0.0f});
  EXPECT_TRUE(SameFloats(Binary("maximum", a, b), {0.0, 0.0, -0.0, 0.0}));
  EXPECT_TRUE(SameFloats(Binary("minimum", a, b), {-0.0, -0.0, -0.0, 0.0}));
}

TEST(FloatMaxMin, SignedZerosAndNaNInF64AndBF16) {
  Literal a = F64({-0.0, 0.0, kNaND, 1});
  Literal b = F64({0.0, -0.0, 1, kNaND});
  EXPECT_TRUE(SameFloats(Binary("maximum", a, b), {0.0, 0.0, kNaND, kNaND}));
  EXPECT_TRUE(SameFloats(Binary("minimum", a, b), {-0.0, -0.0, kNaND, kNaND}));
  // bf16: -0 = 0x8000, +0 = 0x0000, NaN = 0x7fc0, 1 = 0x3f80.
  Literal c = Half(DType::kBF16, {0x8000, 0x0000, 0x7fc0, 0x3f80});
  Literal d = Half(DType::kBF16, {0x0000, 0x8000, 0x3f80, 0x7fc0});
  EXPECT_TRUE(SameFloats(Binary("maximum", c, d), {0.0, 0.0, kNaND, kNaND}));
  EXPECT_TRUE(SameFloats(Binary("minimum", c, d), {-0.0, -0.0, kNaND, kNaND}));
}

// --- signed zeros through arithmetic.

TEST(FloatSignedZero, NegateAbsSign) {
  Literal x = F32({0.0f, -0.0f, 3, -3, kInf, kNaN});
  EXPECT_TRUE(SameFloats(Unary("negate", x), {-0.0, 0.0, -3, 3, -kInfD, kNaND}));
  EXPECT_TRUE(SameFloats(Unary("abs", x), {0.0, 0.0, 3, 3, kInfD, kNaND}));
  // sign keeps the zero's sign and NaN; otherwise +-1.
  EXPECT_TRUE(SameFloats(Unary("sign", x), {0.0, -0.0, 1, -1, 1, kNaND}));
}

TEST(FloatSignedZero, MultiplyAddSubtract) {
  Literal a = F32({-0.0f, -0.0f, -1, 0.0f, -0.0f, -0.0f, 0.0f});
  Literal b = F32({5, -3, 0.0f, -0.0f, -0.0f, 0.0f, 0.0f});
  EXPECT_TRUE(SameFloats(Binary("multiply", a, b), {-0.0, 0.0, -0.0, -0.0, 0.0, -0.0, 0.0}));
  // -0 + -0 = -0; every other sum of zeros is +0 (round to nearest).
  EXPECT_TRUE(SameFloats(Binary("add", a, b), {5, -3, -1, 0.0, -0.0, 0.0, 0.0}));
  // x - y = x + (-y): -0 - +0 = -0, +0 - +0 = +0, -0 - -0 = +0.
  EXPECT_TRUE(SameFloats(Binary("subtract", a, b), {-5, 3, -1, 0.0, 0.0, -0.0, 0.0}));
}

// --- infinities and division by zero.

TEST(FloatInfinity, Arithmetic) {
  Literal a = F32({kInf, 0, kInf, kInf, -kInf, 1, -1, kInf});
  Literal b = F32({kInf, kInf, -kInf, -2, -kInf, kInf, kInf, 0});
  EXPECT_TRUE(SameFloats(Binary("subtract", a, b),
                         {kNaND, -kInfD, kInfD, kInfD, kNaND, -kInfD, -kInfD, kInfD}));
  EXPECT_TRUE(SameFloats(Binary("multiply", a, b),
                         {kInfD, kNaND, -kInfD, -kInfD, kInfD, kInfD, -kInfD, kNaND}));
  EXPECT_TRUE(
      SameFloats(Binary("add", a, b), {kInfD, kInfD, kNaND, kInfD, -kInfD, kInfD, kInfD, kInfD}));
}

TEST(FloatInfinity, DivisionByZeroAndByInfinity) {
  Literal a = F32({1, -1, 1, 0, -0.0f, kInf, 1, -1, kInf});
  Literal b = F32({0, 0, -0.0f, 0, 0, 0, kInf, kInf, kInf});
  EXPECT_TRUE(SameFloats(Binary("divide", a, b),
                         {kInfD, -kInfD, -kInfD, kNaND, kNaND, kInfD, 0.0, -0.0, kNaND}));
}

// --- rounding to integral values.

TEST(FloatRounding, RoundNearestEvenBreaksTiesToEven) {
  Literal x = F32({0.5f, 1.5f, 2.5f, 3.5f, -0.5f, -1.5f, -2.5f, 2.4f, -2.6f, 0.49999997f,
                   8388609.0f, kInf, kNaN, -0.0f});
  EXPECT_TRUE(SameFloats(Unary("round-nearest-even", x),
                         {0.0, 2, 2, 4, -0.0, -2, -2, 2, -3, 0.0, 8388609, kInfD, kNaND, -0.0}));
}

TEST(FloatRounding, RoundNearestAfzBreaksTiesAwayFromZero) {
  // 0.49999997 is the float just below 0.5: it must round to 0, not 1.
  Literal x = F32({0.5f, 1.5f, 2.5f, 3.5f, -0.5f, -1.5f, -2.5f, 2.4f, -2.6f, 0.49999997f,
                   8388609.0f, kInf, kNaN, -0.0f, -0.4f});
  EXPECT_TRUE(SameFloats(Unary("round-nearest-afz", x),
                         {1, 2, 3, 4, -1, -2, -3, 2, -3, 0.0, 8388609, kInfD, kNaND, -0.0, -0.0}));
}

TEST(FloatRounding, FloorAndCeil) {
  Literal x = F32({-0.5f, 0.5f, -1.0f, 1.5f, -0.0f, -kInf});
  EXPECT_TRUE(SameFloats(Unary("floor", x), {-1, 0.0, -1, 1, -0.0, -kInfD}));
  EXPECT_TRUE(SameFloats(Unary("ceil", x), {-0.0, 1, -1, 2, -0.0, -kInfD}));
}

TEST(FloatRounding, RoundNearestEvenInBF16) {
  // bf16 2.5 = 0x4020, -3.5 = 0xc060, 0.5 = 0x3f00.
  Literal x = Half(DType::kBF16, {0x4020, 0xc060, 0x3f00});
  EXPECT_TRUE(SameFloats(Unary("round-nearest-even", x), {2, -4, 0.0}));
  EXPECT_TRUE(SameFloats(Unary("round-nearest-afz", x), {3, -4, 1}));
}

// --- is-finite.

TEST(FloatIsFinite, ClassifiesSpecials) {
  Literal x =
      F32({1, kInf, -kInf, kNaN, -0.0f, 3.40282347e38f, BitsF32(0x00000001), BitsF32(0xffc00000)});
  Literal r = Ok(RunOp("pred[8]", "is-finite", {x}));
  EXPECT_EQ(IntsOf(r), (std::vector<int64_t>{1, 0, 0, 0, 1, 1, 1, 0}));
  // f16: 65504 = 0x7bff is finite, 0x7c00 is inf, 0x7e00 NaN.
  Literal h = Half(DType::kF16, {0x7bff, 0x7c00, 0x7e00, 0x0001});
  Literal rh = Ok(RunOp("pred[4]", "is-finite", {h}));
  EXPECT_EQ(IntsOf(rh), (std::vector<int64_t>{1, 0, 0, 1}));
}

// --- atan2(y, x): the quadrant follows the signs of both operands.

TEST(FloatAtan2, Quadrants) {
  Literal y = F32({1, 1, -1, -1, 1, -1, 2});
  Literal x = F32({1, -1, -1, 1, 0, 0, 2});
  Literal r = Binary("atan2", y, x);
  std::vector<double> want = {kPi / 4, 3 * kPi / 4, -3 * kPi / 4, -kPi / 4,
                              kPi / 2, -kPi / 2,    kPi / 4};
  std::vector<double> got = FloatsOf(r);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_FLOAT_EQ(static_cast<float>(got[i]), static_cast<float>(want[i])) << "element " << i;
  }
}

TEST(FloatAtan2, SignedZerosAndInfinities) {
  // atan2(+-0, +0) = +-0; atan2(+-0, -0) = +-pi; atan2(+-0, x<0) = +-pi.
  Literal y = F32({0.0f, -0.0f, 0.0f, -0.0f, 0.0f, -0.0f, kInf, 1});
  Literal x = F32({0.0f, 0.0f, -0.0f, -0.0f, -1, -1, kInf, -kInf});
  std::vector<double> got = FloatsOf(Binary("atan2", y, x));
  ASSERT_EQ(got.size(), 8u);
  EXPECT_TRUE(SameFloats({got[0], got[1]}, {0.0, -0.0}));
  float pi = static_cast<float>(kPi);
  EXPECT_FLOAT_EQ(static_cast<float>(got[2]), pi);
  EXPECT_FLOAT_EQ(static_cast<float>(got[3]), -pi);
  EXPECT_FLOAT_EQ(static_cast<float>(got[4]), pi);
  EXPECT_FLOAT_EQ(static_cast<float>(got[5]), -pi);
  EXPECT_FLOAT_EQ(static_cast<float>(got[6]), pi / 4);
  EXPECT_FLOAT_EQ(static_cast<float>(got[7]), pi);
}

// --- power.

TEST(FloatPower, EdgeCases) {
  Literal a = F32({0, kNaN, 1, -8, 2, 2, -2, 0, -0.0f, -0.0f, -kInf, kInf, -1, 4, 0.5f});
  Literal b = F32({0, 0, kNaN, 0.5f, 10, -1, 3, -1, -1, -2, 3, -1, kInf, 0.5f, -kInf});
  EXPECT_TRUE(SameFloats(Binary("power", a, b), {1, 1, 1, kNaND, 1024, 0.5, -8, kInfD, -kInfD,
                                                 kInfD, -kInfD, 0.0, 1, 2, kInfD}));
}

// --- remainder: fmod, the sign follows the dividend.

TEST(FloatRemainder, SignFollowsDividend) {
  Literal a = F32({5.5f, -5.5f, 5.5f, -5.5f, 6, -6, 1, kInf, 3, -0.0f, 7.25f});
  Literal b = F32({2, 2, -2, -2, 3, 3, 0, 2, kInf, 1, 0.5f});
  EXPECT_TRUE(SameFloats(Binary("remainder", a, b),
                         {1.5, -1.5, 1.5, -1.5, 0.0, -0.0, kNaND, kNaND, 3, -0.0, 0.25}));
}

// --- transcendental edge values that are exact by definition.

TEST(FloatTranscendental, ExactSpecialValues) {
  Literal x = F32({0, -0.0f, -1, kInf, -kInf, kNaN});
  EXPECT_TRUE(SameFloats(Unary("log", x), {-kInfD, -kInfD, kNaND, kInfD, kNaND, kNaND}));
  EXPECT_TRUE(SameFloats(Unary("exponential", F32({0, -0.0f, kInf, -kInf, kNaN})),
                         {1, 1, kInfD, 0.0, kNaND}));
  EXPECT_TRUE(SameFloats(Unary("sqrt", x), {0.0, -0.0, kNaND, kInfD, kNaND, kNaND}));
  EXPECT_TRUE(SameFloats(Unary("rsqrt", F32({0, 4, 0.25f, kInf})), {kInfD, 0.5, 2, 0.0}));
  EXPECT_TRUE(
      SameFloats(Unary("log-plus-one", F32({-1, 0, -0.0f, -2})), {-kInfD, 0.0, -0.0, kNaND}));
  EXPECT_TRUE(SameFloats(Unary("exponential-minus-one", F32({0, -0.0f, -kInf, kInf})),
                         {0.0, -0.0, -1, kInfD}));
  EXPECT_TRUE(SameFloats(Unary("tanh", F32({kInf, -kInf, -0.0f})), {1, -1, -0.0}));
  EXPECT_TRUE(SameFloats(Unary("logistic", F32({0, kInf, -kInf})), {0.5, 1, 0.0}));
  EXPECT_TRUE(SameFloats(Unary("cbrt", F32({-8, 27, -0.0f, -kInf})), {-2, 3, -0.0, -kInfD}));
}

// --- compare: IEEE semantics by default.

TEST(FloatCompare, NaNIsUnorderedAndZerosAreEqual) {
  Literal a = F32({kNaN, kNaN, 1, -0.0f, -0.0f, -kInf});
  Literal b = F32({kNaN, 1, kNaN, 0.0f, 0.0f, kNaN});
  auto cmp = [&](const std::string& dir) {
    return IntsOf(Ok(RunOp("pred[6]", "compare", {a, b}, "direction=" + dir)));
  };
  using V = std::vector<int64_t>;
  EXPECT_EQ(cmp("EQ"), (V{0, 0, 0, 1, 1, 0}));
  EXPECT_EQ(cmp("NE"), (V{1, 1, 1, 0, 0, 1}));
  EXPECT_EQ(cmp("LT"), (V{0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(cmp("LE"), (V{0, 0, 0, 1, 1, 0}));
  EXPECT_EQ(cmp("GT"), (V{0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(cmp("GE"), (V{0, 0, 0, 1, 1, 0}));
}

// type=TOTALORDER: -NaN < -inf < -finite < -0 < +0 < +finite < +inf < +NaN,
// and a value equals only itself (NaNs with the same sign compare equal here
// as both are the canonical quiet NaN).
TEST(FloatCompare, TotalOrder) {
  float neg_nan = BitsF32(0xffc00000);
  Literal a = F32({-0.0f, 0.0f, -0.0f, kNaN, kNaN, neg_nan, 1, neg_nan, kNaN, -1, -kInf});
  Literal b = F32({0.0f, -0.0f, -0.0f, kNaN, kInf, -kInf, kNaN, 1, neg_nan, -2, neg_nan});
  auto cmp = [&](const std::string& dir) {
    return IntsOf(
        Ok(RunOp("pred[11]", "compare", {a, b}, "direction=" + dir + ", type=TOTALORDER")));
  };
  using V = std::vector<int64_t>;
  EXPECT_EQ(cmp("LT"), (V{1, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0}));
  EXPECT_EQ(cmp("EQ"), (V{0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(cmp("GT"), (V{0, 1, 0, 0, 1, 0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(cmp("NE"), (V{1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(cmp("LE"), (V{1, 0, 1, 1, 0, 1, 1, 1, 0, 0, 0}));
  EXPECT_EQ(cmp("GE"), (V{0, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1}));
}

TEST(FloatCompare, TotalOrderInBF16AndF64) {
  // bf16: -0 = 0x8000, +0 = 0x0000, NaN = 0x7fc0, inf = 0x7f80, -NaN = 0xffc0.
  Literal a = Half(DType::kBF16, {0x8000, 0x7fc0, 0xffc0});
  Literal b = Half(DType::kBF16, {0x0000, 0x7f80, 0xff80});
  Literal r = Ok(RunOp("pred[3]", "compare", {a, b}, "direction=LT, type=TOTALORDER"));
  EXPECT_EQ(IntsOf(r), (std::vector<int64_t>{1, 0, 1}));
  Literal c = F64({-0.0, kNaND, -kInfD});
  Literal d = F64({0.0, kInfD, -1e308});
  Literal s = Ok(RunOp("pred[3]", "compare", {c, d}, "direction=LT, type=TOTALORDER"));
  EXPECT_EQ(IntsOf(s), (std::vector<int64_t>{1, 0, 1}));
}

// --- select and clamp.

TEST(FloatSelect, PicksPerElementAndKeepsBits) {
  Literal p = Ints(DType::kPred, {1, 0, 1, 0});
  Literal t = F32({-0.0f, 1, kNaN, 3});
  Literal f = F32({10, -0.0f, 30, kInf});
  Literal r = Ok(RunOp("f32[4]", "select", {p, t, f}));
  EXPECT_TRUE(SameFloats(r, {-0.0, -0.0, kNaND, kInfD}));
}

TEST(FloatClamp, ClampsAndPropagatesNaN) {
  Literal lo = F32({0, 0, 0, 0, 0, 0, 5});
  Literal x = F32({-1, 0.5f, 2, kNaN, -0.0f, kInf, 0});
  Literal hi = F32({1, 1, 1, 1, 1, 1, 3});
  // clamp = min(max(x, lo), hi): NaN stays NaN, max(-0, +0) = +0, and a lower
  // bound above the upper one gives the upper bound.
  Literal r = Ok(RunOp("f32[7]", "clamp", {lo, x, hi}));
  EXPECT_TRUE(SameFloats(r, {0.0, 0.5, 1, kNaND, 0.0, 1, 3}));
}

TEST(FloatClamp, ScalarBounds) {
  Literal lo = F32Scalar(-1);
  Literal x = F32({-5, 0.25f, 5, -kInf});
  Literal hi = F32Scalar(2);
  Literal r = Ok(RunOp("f32[4]", "clamp", {lo, x, hi}));
  EXPECT_TRUE(SameFloats(r, {-1, 0.25, 2, -1}));
}

// --- bf16 and f16 arithmetic rounds each result to nearest even.

TEST(HalfArithmetic, BF16AddRoundsTiesToEven) {
  // 1 = 0x3f80; 2^-8 = 0x3b80; 3*2^-8 = 0x3c40; 2^-7 = 0x3c00.
  // 1 + 2^-8 is halfway between 1 and 1+2^-7: ties to even -> 1 (0x3f80).
  // 1 + 3*2^-8 is halfway between 1+2^-7 (odd) and 1+2^-6 (even) -> 0x3f82.
  // 1 + 2^-7 is exact -> 0x3f81.
  Literal a = Half(DType::kBF16, {0x3f80, 0x3f80, 0x3f80});
  Literal b = Half(DType::kBF16, {0x3b80, 0x3c40, 0x3c00});
  Literal r = Binary("add", a, b);
  EXPECT_EQ(BitsOf(r), (std::vector<uint64_t>{0x3f80, 0x3f82, 0x3f81}));
}

TEST(HalfArithmetic, F16OverflowsToInfinity) {
  // 65504 (0x7bff) is the largest f16. 65504 + 16 = 65520 is exactly halfway to
  // 65536 and rounds to even, i.e. up, to inf; 65504 + 8 rounds back to 65504.
  // 60000 = 0x7b53 doubled overflows.
  Literal a = Half(DType::kF16, {0x7bff, 0x7bff, 0x7b53, 0xfbff});
  Literal b = Half(DType::kF16, {0x4c00, 0x4800, 0x7b53, 0xcc00});  // 16, 8, 60000, -16
  Literal r = Binary("add", a, b);
  EXPECT_EQ(BitsOf(r), (std::vector<uint64_t>{0x7c00, 0x7bff, 0x7c00, 0xfc00}));
}

TEST(HalfArithmetic, F16SubnormalProduct) {
  // 2^-14 (0x0400, smallest normal) * 0.5 (0x3800) = 2^-15 = subnormal 0x0200;
  // 2^-24 (0x0001) * 0.5 = 2^-25, halfway to 0, ties to even -> 0.
  Literal a = Half(DType::kF16, {0x0400, 0x0001, 0x8001});
  Literal b = Half(DType::kF16, {0x3800, 0x3800, 0x3800});
  Literal r = Binary("multiply", a, b);
  EXPECT_EQ(BitsOf(r), (std::vector<uint64_t>{0x0200, 0x0000, 0x8000}));
}

// --- map applies a scalar computation per element.

TEST(Map, AppliesTheComputationElementwise) {
  const std::string fn =
      "fn {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
      "  m = f32[] multiply(a, b)\n  ROOT s = f32[] subtract(m, a)\n}\n";
  // a * b - a
  Literal r = Ok(RunOp("f32[3]", "map", {F32({1, 2, -3}), F32({4, 0.5f, 2})},
                       "dimensions={0}, to_apply=fn", fn));
  EXPECT_TRUE(SameFloats(r, {3, -1, -3}));
}

// --- complex values.

TEST(Complex, MultiplyAbsRealImag) {
  Literal a(Shape::Array(DType::kC64, {2}));
  a.SetComplex(0, {1, 2});
  a.SetComplex(1, {3, -4});
  Literal b(Shape::Array(DType::kC64, {2}));
  b.SetComplex(0, {3, 4});
  b.SetComplex(1, {0, 1});
  Literal m = Ok(RunOp("c64[2]", "multiply", {a, b}));
  // (1+2i)(3+4i) = 3 + 4i + 6i - 8 = -5 + 10i; (3-4i) i = 4 + 3i.
  EXPECT_EQ(m.GetComplex(0), std::complex<double>(-5, 10));
  EXPECT_EQ(m.GetComplex(1), std::complex<double>(4, 3));
  EXPECT_TRUE(SameFloats(Ok(RunOp("f32[2]", "abs", {a})), {std::sqrt(5.0f), 5}));
  EXPECT_TRUE(SameFloats(Ok(RunOp("f32[2]", "real", {a})), {1, 3}));
  EXPECT_TRUE(SameFloats(Ok(RunOp("f32[2]", "imag", {a})), {2, -4}));
}

TEST(Complex, ComposesRealAndImaginaryParts) {
  Literal c = Ok(RunOp("c64[2]", "complex", {F32({1, -0.0f}), F32({2, kInf})}));
  EXPECT_EQ(c.GetComplex(0), std::complex<double>(1, 2));
  EXPECT_TRUE(std::signbit(c.GetComplex(1).real()));
  EXPECT_EQ(c.GetComplex(1).imag(), kInfD);
}

}  // namespace
}  // namespace seam::evaltest
