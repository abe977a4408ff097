// Integer and pred elementwise ops against hand-worked values: two's-complement
// wrap-around, XLA's division and remainder by zero and INT_MIN / -1, shifts
// by the bit width or more, popcnt, count-leading-zeros, not, bitwise and
// pred logic, signed versus unsigned max/min/compare, integer power, sign and
// clamp.
#include <cstdint>
#include <limits>

#include "eval_test_util.h"

namespace seam::evaltest {
namespace {

using V = std::vector<int64_t>;
using U = std::vector<uint64_t>;

constexpr int64_t kS32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kS32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kS64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kS64Max = std::numeric_limits<int64_t>::max();

Literal Binary(const std::string& op, const Literal& a, const Literal& b) {
  return Ok(RunOp(a.shape().ToString(false), op, {a, b}));
}
Literal Unary(const std::string& op, const Literal& a) {
  return Ok(RunOp(a.shape().ToString(false), op, {a}));
}

// --- wrap-around.

TEST(IntWrap, S8AddSubtractMultiply) {
  EXPECT_EQ(IntsOf(Binary("add", Ints(DType::kS8, {127, -128, 100, -1}),
                          Ints(DType::kS8, {1, -1, 100, -128}))),
            (V{-128, 127, -56, 127}));
  EXPECT_EQ(
      IntsOf(Binary("subtract", Ints(DType::kS8, {-128, 127, 0}), Ints(DType::kS8, {1, -1, -128}))),
      (V{127, -128, -128}));
  EXPECT_EQ(IntsOf(Binary("multiply", Ints(DType::kS8, {64, -128, 16, -1}),
                          Ints(DType::kS8, {2, -1, 16, -128}))),
            (V{-128, -128, 0, -128}));
}

TEST(IntWrap, S8NegateAndAbsOfMin) {
  EXPECT_EQ(IntsOf(Unary("negate", Ints(DType::kS8, {-128, 127, 0, -1}))), (V{-128, -127, 0, 1}));
  EXPECT_EQ(IntsOf(Unary("abs", Ints(DType::kS8, {-128, -5, 5, 0}))), (V{-128, 5, 5, 0}));
}

TEST(IntWrap, U8) {
  EXPECT_EQ(IntsOf(Binary("add", Ints(DType::kU8, {255, 200}), Ints(DType::kU8, {1, 100}))),
            (V{0, 44}));
  EXPECT_EQ(IntsOf(Binary("subtract", Ints(DType::kU8, {0, 5}), Ints(DType::kU8, {1, 10}))),
            (V{255, 251}));
  // 255 * 255 = 65025 = 254 * 256 + 1; 15 * 17 = 255.
  EXPECT_EQ(
      IntsOf(Binary("multiply", Ints(DType::kU8, {16, 255, 15}), Ints(DType::kU8, {16, 255, 17}))),
      (V{0, 1, 255}));
  EXPECT_EQ(IntsOf(Unary("negate", Ints(DType::kU8, {1, 0, 128}))), (V{255, 0, 128}));
}

TEST(IntWrap, S32) {
  EXPECT_EQ(
      IntsOf(Binary("add", Ints(DType::kS32, {kS32Max, kS32Min}), Ints(DType::kS32, {1, -1}))),
      (V{kS32Min, kS32Max}));
  // 2^16 * 2^16 = 2^32 wraps to 0; INT_MIN * -1 = INT_MIN; INT_MAX * 2 = -2.
  EXPECT_EQ(IntsOf(Binary("multiply", Ints(DType::kS32, {65536, kS32Min, kS32Max}),
                          Ints(DType::kS32, {65536, -1, 2}))),
            (V{0, kS32Min, -2}));
  EXPECT_EQ(IntsOf(Unary("negate", Ints(DType::kS32, {kS32Min, kS32Max}))), (V{kS32Min, -kS32Max}));
  EXPECT_EQ(IntsOf(Unary("abs", Ints(DType::kS32, {kS32Min, -7}))), (V{kS32Min, 7}));
}

TEST(IntWrap, S16U16U32S64U64) {
  // 182 * 182 = 33124 = 65536 - 32412.
  EXPECT_EQ(IntsOf(Binary("multiply", Ints(DType::kS16, {256, 181, 182}),
                          Ints(DType::kS16, {256, 181, 182}))),
            (V{0, 32761, -32412}));
  // (2^16 - 1)^2 = 2^32 - 2^17 + 1 = 1 (mod 2^16): no signed-int overflow.
  EXPECT_EQ(IntsOf(Binary("multiply", Ints(DType::kU16, {65535}), Ints(DType::kU16, {65535}))),
            (V{1}));
  EXPECT_EQ(
      BitsOf(Binary("multiply", Ints(DType::kU32, {0xffffffff}), Ints(DType::kU32, {0xffffffff}))),
      (U{1}));
  EXPECT_EQ(
      IntsOf(Binary("add", Ints(DType::kS64, {kS64Max, kS64Min}), Ints(DType::kS64, {1, -1}))),
      (V{kS64Min, kS64Max}));
  EXPECT_EQ(IntsOf(Binary("multiply", Ints(DType::kS64, {kS64Min}), Ints(DType::kS64, {-1}))),
            (V{kS64Min}));
  EXPECT_EQ(BitsOf(Binary("multiply", FromBits(DType::kU64, {1}, {~uint64_t{0}}),
                          FromBits(DType::kU64, {1}, {2}))),
            (U{~uint64_t{1}}));
}

// --- division and remainder: truncate toward zero; x / 0 = -1 (all ones),
// x % 0 = x, INT_MIN / -1 = INT_MIN, INT_MIN % -1 = 0.

TEST(IntDivide, S32) {
  Literal a = Ints(DType::kS32, {7, -7, 7, -7, 5, -5, 0, kS32Min, kS32Min, kS32Max});
  Literal b = Ints(DType::kS32, {2, 2, -2, -2, 0, 0, 0, -1, 1, -1});
  EXPECT_EQ(IntsOf(Binary("divide", a, b)),
            (V{3, -3, -3, 3, -1, -1, -1, kS32Min, kS32Min, -kS32Max}));
  EXPECT_EQ(IntsOf(Binary("remainder", a, b)), (V{1, -1, 1, -1, 5, -5, 0, 0, 0, 0}));
}

TEST(IntDivide, S8AndS64) {
  Literal a = Ints(DType::kS8, {-128, -128, 100, -7});
  Literal b = Ints(DType::kS8, {-1, 0, 0, 3});
  EXPECT_EQ(IntsOf(Binary("divide", a, b)), (V{-128, -1, -1, -2}));
  EXPECT_EQ(IntsOf(Binary("remainder", a, b)), (V{0, -128, 100, -1}));
  Literal c = Ints(DType::kS64, {kS64Min, 9, -9});
  Literal d = Ints(DType::kS64, {-1, 0, 4});
  EXPECT_EQ(IntsOf(Binary("divide", c, d)), (V{kS64Min, -1, -2}));
  EXPECT_EQ(IntsOf(Binary("remainder", c, d)), (V{0, 9, -1}));
}

TEST(IntDivide, UnsignedByZeroIsAllOnes) {
  Literal a = Ints(DType::kU8, {5, 200, 0, 255});
  Literal b = Ints(DType::kU8, {0, 3, 0, 16});
  EXPECT_EQ(IntsOf(Binary("divide", a, b)), (V{255, 66, 255, 15}));
  EXPECT_EQ(IntsOf(Binary("remainder", a, b)), (V{5, 2, 0, 15}));
  EXPECT_EQ(BitsOf(Binary("divide", Ints(DType::kU32, {7, 0xffffffff}), Ints(DType::kU32, {0, 2}))),
            (U{0xffffffff, 0x7fffffff}));
}

// --- shifts: the amount is read as unsigned; >= the bit width gives 0, or
// the sign for arithmetic right shifts.

TEST(IntShift, S32) {
  EXPECT_EQ(IntsOf(Binary("shift-left", Ints(DType::kS32, {1, 1, 1, 1, -1, 3}),
                          Ints(DType::kS32, {31, 32, 33, -1, 4, 0}))),
            (V{kS32Min, 0, 0, 0, -16, 3}));
  EXPECT_EQ(IntsOf(Binary("shift-right-logical", Ints(DType::kS32, {-1, -1, kS32Min, 256, -1}),
                          Ints(DType::kS32, {28, 32, 31, 4, -1}))),
            (V{15, 0, 1, 16, 0}));
  EXPECT_EQ(IntsOf(Binary("shift-right-arithmetic",
                          Ints(DType::kS32, {-8, -8, 8, -1, kS32Min, 256, -256}),
                          Ints(DType::kS32, {1, 32, 32, 100, 31, 4, -1}))),
            (V{-4, -1, 0, -1, -1, 16, -1}));
}

TEST(IntShift, U8) {
  EXPECT_EQ(
      IntsOf(Binary("shift-left", Ints(DType::kU8, {1, 1, 255}), Ints(DType::kU8, {7, 8, 1}))),
      (V{128, 0, 254}));
  EXPECT_EQ(IntsOf(Binary("shift-right-logical", Ints(DType::kU8, {255, 255, 128}),
                          Ints(DType::kU8, {8, 7, 200}))),
            (V{0, 1, 0}));
  // Arithmetic shifts of unsigned values still copy the top bit.
  EXPECT_EQ(IntsOf(Binary("shift-right-arithmetic", Ints(DType::kU8, {128, 128, 127, 255}),
                          Ints(DType::kU8, {1, 8, 200, 3}))),
            (V{192, 255, 0, 255}));
}

TEST(IntShift, S8S16S64) {
  EXPECT_EQ(IntsOf(Binary("shift-left", Ints(DType::kS8, {1, 1}), Ints(DType::kS8, {7, -8}))),
            (V{-128, 0}));
  EXPECT_EQ(IntsOf(Binary("shift-right-arithmetic", Ints(DType::kS8, {-128, 64}),
                          Ints(DType::kS8, {7, 8}))),
            (V{-1, 0}));
  EXPECT_EQ(IntsOf(Binary("shift-right-logical", Ints(DType::kS8, {-128}), Ints(DType::kS8, {7}))),
            (V{1}));
  EXPECT_EQ(IntsOf(Binary("shift-left", Ints(DType::kS16, {1}), Ints(DType::kS16, {16}))), (V{0}));
  EXPECT_EQ(IntsOf(Binary("shift-right-logical", Ints(DType::kS16, {-2}), Ints(DType::kS16, {15}))),
            (V{1}));
  EXPECT_EQ(
      IntsOf(Binary("shift-right-arithmetic", Ints(DType::kS16, {-2}), Ints(DType::kS16, {15}))),
      (V{-1}));
  EXPECT_EQ(IntsOf(Binary("shift-left", Ints(DType::kS64, {1, 1}), Ints(DType::kS64, {63, 64}))),
            (V{kS64Min, 0}));
  EXPECT_EQ(IntsOf(Binary("shift-right-arithmetic", Ints(DType::kS64, {kS64Min}),
                          Ints(DType::kS64, {64}))),
            (V{-1}));
}

// --- bit counting and not.

TEST(IntBits, Popcnt) {
  EXPECT_EQ(IntsOf(Unary("popcnt", Ints(DType::kS32, {0, 1, -1, kS32Max, kS32Min, 0x0f0f}))),
            (V{0, 1, 32, 31, 1, 8}));
  // -1 in s8 has 8 bits set, not 32.
  EXPECT_EQ(IntsOf(Unary("popcnt", Ints(DType::kS8, {-1, -128, 0x55}))), (V{8, 1, 4}));
  EXPECT_EQ(IntsOf(Unary("popcnt", Ints(DType::kU8, {255, 0x80}))), (V{8, 1}));
  EXPECT_EQ(IntsOf(Unary("popcnt", FromBits(DType::kU64, {2}, {~uint64_t{0}, 0x8000000000000001}))),
            (V{64, 2}));
}

TEST(IntBits, CountLeadingZeros) {
  EXPECT_EQ(IntsOf(Unary("count-leading-zeros",
                         Ints(DType::kS32, {0, 1, -1, kS32Min, 0x00010000, kS32Max}))),
            (V{32, 31, 0, 0, 15, 1}));
  EXPECT_EQ(IntsOf(Unary("count-leading-zeros", Ints(DType::kS8, {0, 1, -1, 0x10}))),
            (V{8, 7, 0, 3}));
  EXPECT_EQ(IntsOf(Unary("count-leading-zeros", Ints(DType::kS16, {0, 0x00ff}))), (V{16, 8}));
  EXPECT_EQ(
      IntsOf(Unary("count-leading-zeros", FromBits(DType::kU64, {3}, {0, 1, uint64_t{1} << 40}))),
      (V{64, 63, 23}));
}

TEST(IntBits, Not) {
  EXPECT_EQ(IntsOf(Unary("not", Ints(DType::kS32, {0, -1, 5, kS32Min}))), (V{-1, 0, -6, kS32Max}));
  EXPECT_EQ(IntsOf(Unary("not", Ints(DType::kU8, {0, 0xf0}))), (V{255, 0x0f}));
  EXPECT_EQ(IntsOf(Unary("not", Ints(DType::kPred, {1, 0}))), (V{0, 1}));
}

TEST(IntBits, AndOrXor) {
  Literal a = Ints(DType::kS32, {12, -1, 0x0f0f});
  Literal b = Ints(DType::kS32, {10, 0x1234, 0x00ff});
  EXPECT_EQ(IntsOf(Binary("and", a, b)), (V{8, 0x1234, 0x000f}));
  EXPECT_EQ(IntsOf(Binary("or", a, b)), (V{14, -1, 0x0fff}));
  EXPECT_EQ(IntsOf(Binary("xor", a, b)), (V{6, -0x1235, 0x0ff0}));
}

TEST(PredOps, LogicAndArithmetic) {
  Literal a = Ints(DType::kPred, {0, 0, 1, 1});
  Literal b = Ints(DType::kPred, {0, 1, 0, 1});
  EXPECT_EQ(IntsOf(Binary("and", a, b)), (V{0, 0, 0, 1}));
  EXPECT_EQ(IntsOf(Binary("or", a, b)), (V{0, 1, 1, 1}));
  EXPECT_EQ(IntsOf(Binary("xor", a, b)), (V{0, 1, 1, 0}));
  // As XLA defines pred arithmetic: add and maximum are or, multiply and
  // minimum are and.
  EXPECT_EQ(IntsOf(Binary("add", a, b)), (V{0, 1, 1, 1}));
  EXPECT_EQ(IntsOf(Binary("maximum", a, b)), (V{0, 1, 1, 1}));
  EXPECT_EQ(IntsOf(Binary("multiply", a, b)), (V{0, 0, 0, 1}));
  EXPECT_EQ(IntsOf(Binary("minimum", a, b)), (V{0, 0, 0, 1}));
}

// --- signed versus unsigned order.

TEST(IntOrder, MaxMinCompare) {
  EXPECT_EQ(IntsOf(Binary("maximum", Ints(DType::kS8, {-1, -128}), Ints(DType::kS8, {1, 127}))),
            (V{1, 127}));
  EXPECT_EQ(IntsOf(Binary("minimum", Ints(DType::kS8, {-1, -128}), Ints(DType::kS8, {1, 127}))),
            (V{-1, -128}));
  EXPECT_EQ(IntsOf(Binary("maximum", Ints(DType::kU8, {255, 0}), Ints(DType::kU8, {1, 1}))),
            (V{255, 1}));
  EXPECT_EQ(IntsOf(Binary("minimum", Ints(DType::kU8, {255, 0}), Ints(DType::kU8, {1, 1}))),
            (V{1, 0}));
  Literal s = Ok(RunOp("pred[2]", "compare",
                       {Ints(DType::kS32, {-1, kS32Min}), Ints(DType::kS32, {1, kS32Max})},
                       "direction=LT"));
  EXPECT_EQ(IntsOf(s), (V{1, 1}));
  Literal u = Ok(RunOp("pred[2]", "compare",
                       {Ints(DType::kU32, {0xffffffff, 0x80000000}), Ints(DType::kU32, {1, 1})},
                       "direction=LT"));
  EXPECT_EQ(IntsOf(u), (V{0, 0}));
  Literal ge =
      Ok(RunOp("pred[3]", "compare", {Ints(DType::kU8, {255, 3, 2}), Ints(DType::kU8, {0, 3, 4})},
               "direction=GE"));
  EXPECT_EQ(IntsOf(ge), (V{1, 1, 0}));
}

// --- integer power: exponentiation by squaring, wrapping; a negative
// exponent gives 0 except for bases 1 and -1. XLA's CPU backend (the pow_s32
// conformance golden) gives (-1)^-3 = -1 and (-1)^-4 = 1.

TEST(IntPower, S32) {
  Literal a = Ints(DType::kS32, {2, 3, 0, -2, 2, 2, 2, 1, 0, 3, -3, 7, 5, -1, -1, 1});
  Literal b = Ints(DType::kS32, {10, 0, 0, 3, 31, 32, -1, -3, -1, 5, 3, 0, 13, -3, -4, kS32Min});
  EXPECT_EQ(IntsOf(Binary("power", a, b)),
            (V{1024, 1, 1, -8, kS32Min, 0, 0, 1, 0, 243, -27, 1, 1220703125, -1, 1, 1}));
}

TEST(IntPower, U8AndS8) {
  // 255^2 = 65025 = 1 (mod 256); 2^200 wraps to 0; 1^200 = 1.
  EXPECT_EQ(IntsOf(Binary("power", Ints(DType::kU8, {2, 3, 2, 255, 0, 1, 2}),
                          Ints(DType::kU8, {8, 5, 7, 2, 0, 200, 200}))),
            (V{0, 243, 128, 1, 1, 1, 0}));
  EXPECT_EQ(IntsOf(Binary("power", Ints(DType::kS8, {-2, 2, -3}), Ints(DType::kS8, {7, 7, 4}))),
            (V{-128, -128, 81}));
}

// --- sign, clamp, select.

TEST(IntMisc, Sign) {
  EXPECT_EQ(IntsOf(Unary("sign", Ints(DType::kS32, {-5, 0, 7, kS32Min, kS32Max}))),
            (V{-1, 0, 1, -1, 1}));
  EXPECT_EQ(IntsOf(Unary("sign", Ints(DType::kS8, {-128, 127, 0}))), (V{-1, 1, 0}));
}

TEST(IntMisc, Clamp) {
  Literal r = Ok(RunOp("s32[4]", "clamp",
                       {IntScalar(DType::kS32, 0), Ints(DType::kS32, {-5, 3, 100, kS32Min}),
                        IntScalar(DType::kS32, 10)}));
  EXPECT_EQ(IntsOf(r), (V{0, 3, 10, 0}));
  // Unsigned order: 200 is above 100.
  Literal u = Ok(RunOp("u8[3]", "clamp",
                       {Ints(DType::kU8, {1, 1, 1}), Ints(DType::kU8, {200, 0, 50}),
                        Ints(DType::kU8, {100, 100, 100})}));
  EXPECT_EQ(IntsOf(u), (V{100, 1, 50}));
  // A lower bound above the upper one: min(max(x, lo), hi) = hi.
  Literal inverted =
      Ok(RunOp("s32[2]", "clamp",
               {Ints(DType::kS32, {5, 5}), Ints(DType::kS32, {0, 9}), Ints(DType::kS32, {3, 3})}));
  EXPECT_EQ(IntsOf(inverted), (V{3, 3}));
}

TEST(IntMisc, Select) {
  Literal r = Ok(RunOp("s8[4]", "select",
                       {Ints(DType::kPred, {1, 0, 0, 1}), Ints(DType::kS8, {1, 2, 3, 4}),
                        Ints(DType::kS8, {-1, -2, -3, -4})}));
  EXPECT_EQ(IntsOf(r), (V{1, -2, -3, 4}));
}

}  // namespace
}  // namespace seam::evaltest
