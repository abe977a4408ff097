// convert, bitcast-convert and reduce-precision against hand-worked bit
// patterns: round to nearest even (ties included) and overflow to infinity
// for f32 -> bf16/f16, subnormals, saturating float -> int with NaN -> 0,
// int -> float rounding, int -> int wrap, conversions to pred.
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

// f32 elements from raw bits.
Literal F32FromBits(const U& bits) {
  return FromBits(DType::kF32, {static_cast<int64_t>(bits.size())}, bits);
}
Literal F64FromBits(const U& bits) {
  return FromBits(DType::kF64, {static_cast<int64_t>(bits.size())}, bits);
}

Literal Convert(const std::string& to, const Literal& x) {
  std::string shape = absl::StrCat(to, "[", x.element_count(), "]");
  return Ok(RunOp(shape, "convert", {x}));
}

bool IsHalfNaN(uint64_t bits, DType type) {
  uint64_t exponent = type == DType::kBF16 ? 0x7f80 : 0x7c00;
  uint64_t mantissa = type == DType::kBF16 ? 0x007f : 0x03ff;
  return (bits & exponent) == exponent && (bits & mantissa) != 0;
}

// --- f32 -> bf16.

TEST(ConvertToBF16, RoundsToNearestEven) {
  Literal x = F32FromBits({
      0x3f800000,  // 1.0 exact
      0x3f808000,  // 1 + 2^-8: halfway, 0x3f80 is even -> down
      0x3f818000,  // halfway above 0x3f81 (odd) -> up to 0x3f82
      0x3f808001,  // just above halfway -> up
      0x3f807fff,  // just below halfway -> down
      0xbf818000,  // negative tie -> 0xbf82
      0x80000000,  // -0
      0x00000001,  // smallest subnormal -> +0
      0x00008000,  // halfway to 0x0001 with 0x0000 even -> 0
      0x00018000,  // halfway above 0x0001 (odd) -> 0x0002
  });
  EXPECT_EQ(BitsOf(Convert("bf16", x)),
            (U{0x3f80, 0x3f80, 0x3f82, 0x3f81, 0x3f80, 0xbf82, 0x8000, 0x0000, 0x0000, 0x0002}));
}

TEST(ConvertToBF16, OverflowsToInfinity) {
  Literal x = F32FromBits({
      0x7f7fffff,  // FLT_MAX rounds up past bf16's max -> inf
      0x7f7f7fff,  // below the tie -> bf16 max 0x7f7f
      0x7f7f8000,  // tie above 0x7f7f (odd) -> inf
      0xff7fffff,  // -FLT_MAX -> -inf
      0x7f800000,  // inf
      0xff800000,  // -inf
  });
  EXPECT_EQ(BitsOf(Convert("bf16", x)), (U{0x7f80, 0x7f7f, 0x7f80, 0xff80, 0x7f80, 0xff80}));
}

TEST(ConvertToBF16, NaNStaysNaN) {
  // 0x7f800001 has its payload only in bits that bf16 drops: truncating would
  // make it an infinity.
  Literal x = F32FromBits({0x7fc00000, 0x7f800001, 0xffc00000, 0x7fffffff});
  for (uint64_t bits : BitsOf(Convert("bf16", x))) {
    EXPECT_TRUE(IsHalfNaN(bits, DType::kBF16)) << std::hex << bits;
  }
}

// --- f32 -> f16.

TEST(ConvertToF16, RoundsToNearestEven) {
  Literal x = F32FromBits({
      0x3f800000,  // 1.0 -> 0x3c00
      0x3f801000,  // 1 + 2^-11: halfway, even 0x3c00
      0x3f803000,  // 1 + 3*2^-11: halfway above 0x3c01 (odd) -> 0x3c02
      0x3f801001,  // just above halfway -> 0x3c01
      0x80000000,  // -0
      0x38800000,  // 2^-14, smallest normal -> 0x0400
  });
  EXPECT_EQ(BitsOf(Convert("f16", x)), (U{0x3c00, 0x3c00, 0x3c02, 0x3c01, 0x8000, 0x0400}));
}

TEST(ConvertToF16, OverflowsToInfinity) {
  Literal x = F32FromBits({
      0x477fe000,  // 65504, the largest f16 -> 0x7bff
      0x477fef00,  // 65519: below the tie at 65520 -> 65504
      0x477ff000,  // 65520: tie above 0x7bff (odd) -> inf
      0x49742400,  // 1e6 -> inf
      0xc9742400,  // -1e6 -> -inf
      0x7f800000,  // inf
  });
  EXPECT_EQ(BitsOf(Convert("f16", x)), (U{0x7bff, 0x7bff, 0x7c00, 0x7c00, 0xfc00, 0x7c00}));
}

TEST(ConvertToF16, Subnormals) {
  Literal x = F32FromBits({
      0x33800000,  // 2^-24, smallest subnormal -> 0x0001
      0x33000000,  // 2^-25: halfway to 0 with 0 even -> 0
      0x33000001,  // just above 2^-25 -> 0x0001
      0x33c00000,  // 1.5 * 2^-24: halfway above 0x0001 (odd) -> 0x0002
      0x32800000,  // 2^-26 -> 0
      0x387fe000,  // 1023.5 * 2^-24: halfway above 0x03ff -> 0x0400 (normal)
      0xb3800000,  // -2^-24 -> 0x8001
      0x00000001,  // f32 subnormal -> +0
  });
  EXPECT_EQ(BitsOf(Convert("f16", x)),
            (U{0x0001, 0x0000, 0x0001, 0x0002, 0x0000, 0x0400, 0x8001, 0x0000}));
}

TEST(ConvertToF16, NaNStaysNaN) {
  Literal x = F32FromBits({0x7fc00000, 0x7f800001, 0xffc00000});
  for (uint64_t bits : BitsOf(Convert("f16", x))) {
    EXPECT_TRUE(IsHalfNaN(bits, DType::kF16)) << std::hex << bits;
  }
}

// --- small floats to wider floats are exact.

TEST(ConvertFromHalf, F16AndBF16ToF32) {
  Literal h = Half(DType::kF16, {0x0001, 0x03ff, 0x7bff, 0xfc00, 0x8000, 0x3555, 0x7e00});
  EXPECT_TRUE(SameFloats(Convert("f32", h), {5.9604644775390625e-08, 6.097555160522461e-05, 65504,
                                             -kInfD, -0.0, 0.333251953125, kNaND}));
  Literal b = Half(DType::kBF16, {0x3f81, 0xc2f7, 0x0001, 0xff80, 0x7fc1});
  EXPECT_TRUE(
      SameFloats(Convert("f32", b), {1.0078125, -123.5, 9.183549615799121e-41, -kInfD, kNaND}));
}

TEST(ConvertBetweenHalves, BF16ToF16AndBack) {
  // bf16 1 + 2^-7 is exact in f16 (0x3c08); bf16 65536 overflows f16.
  EXPECT_EQ(BitsOf(Convert("f16", Half(DType::kBF16, {0x3f81, 0x4780, 0x8000}))),
            (U{0x3c08, 0x7c00, 0x8000}));
  // f16 1 + k*2^-10 to bf16 (ulp 2^-7 = 8*2^-10): k=1, 3 down; k=4 halfway,
  // even 0x3f80; k=6 up.
  EXPECT_EQ(BitsOf(Convert("bf16", Half(DType::kF16, {0x3c01, 0x3c03, 0x3c04, 0x3c06}))),
            (U{0x3f80, 0x3f80, 0x3f80, 0x3f81}));
}

TEST(ConvertF64ToF32, RoundsAndOverflows) {
  Literal x = F64FromBits({
      0x3ff0000010000000,  // 1 + 2^-24: halfway, even -> 1.0
      0x3ff0000010400000,  // 1 + 2^-24 + 2^-30 -> 1 + 2^-23
      0x4807d3a3ca8b7e1f,  // about 1.0e39 -> inf
      0xc807d3a3ca8b7e1f,  // -> -inf
      0x358bc6f1c0000000,  // about 1e-50 -> +0
      0x36a0000000000000,  // 2^-149, the smallest f32 subnormal
      0x3690000000000000,  // 2^-150: halfway to 0 -> +0
      0x36a8000000000000,  // 3 * 2^-150: halfway above 2^-149 (odd) -> 2^-148
  });
  EXPECT_EQ(BitsOf(Convert("f32", x)), (U{0x3f800000, 0x3f800001, 0x7f800000, 0xff800000,
                                          0x00000000, 0x00000001, 0x00000000, 0x00000002}));
}

// --- float -> int: truncate toward zero, saturate, NaN -> 0.

TEST(ConvertFloatToInt, F32ToS32Saturates) {
  Literal x = F32({1.9f, -1.9f, 2.5e9f, -2.5e9f, kInf, -kInf, kNaN, 2147483520.0f, -2147483648.0f,
                   -0.5f, 2147483648.0f, BitsF32(0xffc00000)});
  EXPECT_EQ(IntsOf(Convert("s32", x)),
            (V{1, -1, kS32Max, kS32Min, kS32Max, kS32Min, 0, 2147483520, kS32Min, 0, kS32Max, 0}));
}

TEST(ConvertFloatToInt, F32ToNarrowAndUnsigned) {
  EXPECT_EQ(IntsOf(Convert("u8", F32({300, -5, 255.9f, kNaN, 128.5f, -0.9f, kInf, -kInf}))),
            (V{255, 0, 255, 0, 128, 0, 255, 0}));
  EXPECT_EQ(IntsOf(Convert("s8", F32({127.9f, 128, -129, -128.9f, -1.5f}))),
            (V{127, 127, -128, -128, -1}));
  // 4294967040 = 2^32 - 256 is the largest f32 below 2^32.
  EXPECT_EQ(BitsOf(Convert("u32", F32({4294967296.0f, 4294967040.0f, -1}))),
            (U{0xffffffff, 4294967040u, 0}));
  // 1e19f is exactly 9999999980506447872; 2^64 saturates.
  EXPECT_EQ(BitsOf(Convert("u64", F32({-1, 18446744073709551616.0f, 1e19f}))),
            (U{0, ~uint64_t{0}, 9999999980506447872u}));
}

TEST(ConvertFloatToInt, F64ToS64Saturates) {
  // 2^63 - 1024 is the largest double below 2^63.
  Literal x = F64({1e19, -1e19, 9223372036854775808.0, -9223372036854775808.0,
                   9223372036854774784.0, kNaND, -2.75});
  EXPECT_EQ(IntsOf(Convert("s64", x)),
            (V{kS64Max, kS64Min, kS64Max, kS64Min, 9223372036854774784, 0, -2}));
}

TEST(ConvertFloatToInt, HalfTypes) {
  // bf16: 3.5 = 0x4060, -3.5 = 0xc060, inf, NaN, 2^32 = 0x4f80.
  EXPECT_EQ(IntsOf(Convert("s32", Half(DType::kBF16, {0x4060, 0xc060, 0x7f80, 0x7fc0, 0x4f80}))),
            (V{3, -3, kS32Max, 0, kS32Max}));
  // f16: 250 = 0x5bd0 saturates s8; -0 -> 0; -2.5 = 0xc100 -> -2.
  EXPECT_EQ(IntsOf(Convert("s8", Half(DType::kF16, {0x5bd0, 0x8000, 0xc100}))), (V{127, 0, -2}));
}

// --- int -> float rounds to nearest even.

TEST(ConvertIntToFloat, ToF32AndF64) {
  // 2^24 + 1 is halfway between 2^24 and 2^24 + 2 -> 2^24 (even);
  // 2^24 + 3 is halfway between 2^24 + 2 (odd) and 2^24 + 4 -> 2^24 + 4.
  EXPECT_TRUE(SameFloats(Convert("f32", Ints(DType::kS32, {16777217, 16777219, kS32Min, kS32Max,
                                                           -16777217, 16777218})),
                         {16777216, 16777220, -2147483648.0, 2147483648.0, -16777216, 16777218}));
  EXPECT_TRUE(SameFloats(Convert("f32", Ints(DType::kU32, {0xffffffff, 0x80000001})),
                         {4294967296.0, 2147483648.0}));
  EXPECT_TRUE(SameFloats(Convert("f64", Ints(DType::kS64, {9007199254740993, kS64Min, kS64Max})),
                         {9007199254740992.0, -9223372036854775808.0, 9223372036854775808.0}));
  EXPECT_TRUE(SameFloats(Convert("f32", FromBits(DType::kU64, {1}, {~uint64_t{0}})),
                         {18446744073709551616.0}));
  EXPECT_TRUE(SameFloats(Convert("f32", Ints(DType::kU8, {255, 0})), {255, 0.0}));
  EXPECT_TRUE(SameFloats(Convert("f32", Ints(DType::kS8, {-128, 127})), {-128, 127}));
}

TEST(ConvertIntToFloat, ToBF16AndF16) {
  // bf16 keeps 8 significant bits: 257 ties to 256 (0x4380), 259 ties up to
  // 260 (0x4382); 255 (0x437f) is exact; 65535 rounds to 65536 (0x4780).
  EXPECT_EQ(BitsOf(Convert("bf16", Ints(DType::kS32, {257, 259, 255, -257, 65535}))),
            (U{0x4380, 0x4382, 0x437f, 0xc380, 0x4780}));
  // f16 keeps 11: 2049 ties to 2048 (0x6800), 2051 to 2052 (0x6802); 65519 is
  // below the overflow tie, 65520 and up overflow.
  EXPECT_EQ(BitsOf(Convert("f16", Ints(DType::kS32, {2049, 2051, 65519, 65520, 100000, -65520}))),
            (U{0x6800, 0x6802, 0x7bff, 0x7c00, 0x7c00, 0xfc00}));
}

// --- int -> int keeps the low bits (sign- or zero-extended from the source).

TEST(ConvertIntToInt, WrapsAndExtends) {
  EXPECT_EQ(IntsOf(Convert("s8", Ints(DType::kS32, {300, -129, 128, -1}))), (V{44, 127, -128, -1}));
  EXPECT_EQ(IntsOf(Convert("u8", Ints(DType::kS32, {-1, 256, 511}))), (V{255, 0, 255}));
  EXPECT_EQ(IntsOf(Convert("s32", Ints(DType::kU32, {0xffffffff, 0x80000000}))), (V{-1, kS32Min}));
  EXPECT_EQ(BitsOf(Convert("u32", Ints(DType::kS8, {-1, -128}))), (U{0xffffffff, 0xffffff80}));
  EXPECT_EQ(IntsOf(Convert("s32", Ints(DType::kU8, {255}))), (V{255}));
  EXPECT_EQ(IntsOf(Convert("s32", Ints(DType::kS64, {0x100000005, 0xffffffff}))), (V{5, -1}));
  EXPECT_EQ(IntsOf(Convert("s8", Ints(DType::kU8, {200}))), (V{-56}));
  EXPECT_EQ(BitsOf(Convert("u64", Ints(DType::kS32, {-1}))), (U{~uint64_t{0}}));
  EXPECT_EQ(BitsOf(Convert("u64", Ints(DType::kU32, {0xffffffff}))), (U{0xffffffff}));
}

// --- to and from pred.

TEST(ConvertPred, NonZeroIsTrue) {
  EXPECT_EQ(IntsOf(Convert("pred", F32({0, -0.0f, 0.5f, kNaN, -kInf, BitsF32(1)}))),
            (V{0, 0, 1, 1, 1, 1}));
  // 256 is not zero even though its low byte is.
  EXPECT_EQ(IntsOf(Convert("pred", Ints(DType::kS32, {0, 2, -1, 256}))), (V{0, 1, 1, 1}));
  EXPECT_TRUE(SameFloats(Convert("f32", Ints(DType::kPred, {1, 0})), {1, 0.0}));
  EXPECT_EQ(IntsOf(Convert("s32", Ints(DType::kPred, {1, 0}))), (V{1, 0}));
}

TEST(ConvertToComplex, RealPartWithZeroImaginary) {
  Literal c = Convert("c64", F32({1.5f, -0.0f}));
  EXPECT_EQ(c.GetComplex(0), std::complex<double>(1.5, 0));
  EXPECT_TRUE(std::signbit(c.GetComplex(1).real()));
  Literal d = Convert("c128", Ints(DType::kS32, {-7}));
  EXPECT_EQ(d.GetComplex(0), std::complex<double>(-7, 0));
}

// --- bitcast-convert reinterprets bits.

TEST(BitcastConvert, F32AndS32) {
  Literal f = F32({1.0f, -0.0f, kInf, -2.0f, BitsF32(0x7fc00123), BitsF32(0xff800001)});
  Literal s = Ok(RunOp("s32[6]", "bitcast-convert", {f}));
  EXPECT_EQ(IntsOf(s), (V{1065353216, kS32Min, 2139095040, -1073741824, 2143289635, -8388607}));
  Literal i = Ints(DType::kS32, {0x40490fdb, -1, 1, kS32Min});
  Literal g = Ok(RunOp("f32[4]", "bitcast-convert", {i}));
  EXPECT_EQ(BitsOf(g), (U{0x40490fdb, 0xffffffff, 0x00000001, 0x80000000}));
  EXPECT_TRUE(SameFloats(g, {3.1415927410125732, kNaND, 1.401298464324817e-45, -0.0}));
}

TEST(BitcastConvert, OtherWidths) {
  Literal d = Ok(RunOp("s64[2]", "bitcast-convert", {F64({1.0, -0.0})}));
  EXPECT_EQ(IntsOf(d), (V{4607182418800017408, kS64Min}));
  Literal h = Ok(RunOp("s16[2]", "bitcast-convert", {Half(DType::kF16, {0x3c00, 0xfc00})}));
  EXPECT_EQ(IntsOf(h), (V{15360, -1024}));
  Literal u = Ok(RunOp("bf16[2]", "bitcast-convert", {Ints(DType::kU16, {0x3f80, 0xffc0})}));
  EXPECT_TRUE(SameFloats(u, {1, kNaND}));
}

// --- reduce-precision: round the mantissa to nearest even, overflow to inf,
// flush what is below the smallest normal of the narrow format to signed zero.

TEST(ReducePrecision, F32ToF16Range) {
  Literal x = F32FromBits({
      0x3f801000,  // 1 + 2^-11: tie -> 1
      0x3f803000,  // 1 + 3*2^-11: tie -> 1 + 2^-9
      0x477ff000,  // 65520: rounds up into the overflowing exponent -> inf
      0x477fef00,  // 65519 -> 65504
      0x322bcc77,  // 1e-8: below 2^-14 -> 0
      0x38800000,  // 2^-14 stays
      0xb22bcc77,  // -1e-8 -> -0
      0x7fc00000,  // NaN stays NaN
      0x7f800000,  // inf
      0x47c35000,  // 100000 -> inf
  });
  Literal r = Ok(RunOp("f32[10]", "reduce-precision", {x}, "exponent_bits=5, mantissa_bits=10"));
  EXPECT_TRUE(SameFloats(
      r, {1, 1.001953125, kInfD, 65504, 0.0, 6.103515625e-05, -0.0, kNaND, kInfD, kInfD}));
}

TEST(ReducePrecision, F32ToBF16MatchesConvert) {
  Literal x = F32FromBits({0x3f808000, 0x3f818000, 0x3f808001, 0x7f7fffff});
  Literal r = Ok(RunOp("f32[4]", "reduce-precision", {x}, "exponent_bits=8, mantissa_bits=7"));
  EXPECT_EQ(BitsOf(r), (U{0x3f800000, 0x3f820000, 0x3f810000, 0x7f800000}));
}

// A format without mantissa bits has no NaN: XLA turns NaN into +inf.
TEST(ReducePrecision, NaNWithoutMantissaBitsBecomesInfinity) {
  Literal r =
      Ok(RunOp("f32[2]", "reduce-precision", {F32({kNaN, 1})}, "exponent_bits=8, mantissa_bits=0"));
  EXPECT_TRUE(SameFloats(r, {kInfD, 1}));
}

// On f16 operands the exponent limits are f16's own: reducing to (5, 10) is
// the identity, f16 subnormals included.
TEST(ReducePrecision, F16OperandKeepsItsSubnormals) {
  Literal x = Half(DType::kF16, {0x0001, 0x03ff, 0x8200, 0x7bff, 0x3c05});
  Literal r = Ok(RunOp("f16[5]", "reduce-precision", {x}, "exponent_bits=5, mantissa_bits=10"));
  EXPECT_EQ(BitsOf(r), (U{0x0001, 0x03ff, 0x8200, 0x7bff, 0x3c05}));
  // Seven mantissa bits: 1 + 5*2^-10 rounds up to 1 + 2^-7 (0x3c08).
  Literal m = Ok(RunOp("f16[1]", "reduce-precision", {Half(DType::kF16, {0x3c05})},
                       "exponent_bits=5, mantissa_bits=7"));
  EXPECT_EQ(BitsOf(m), (U{0x3c08}));
}

TEST(ReducePrecision, F64ToF32Range) {
  Literal x = F64FromBits({
      0x3ff0000010000000,  // 1 + 2^-24: tie -> 1
      0x4807d3a3ca8b7e1f,  // about 1.0e39 -> inf
      0x37e16c262777579c,  // about 1.6e-39 (below 2^-126) -> 0
      0x3ff8000000000000,  // 1.5 stays
  });
  Literal r = Ok(RunOp("f64[4]", "reduce-precision", {x}, "exponent_bits=8, mantissa_bits=23"));
  EXPECT_TRUE(SameFloats(r, {1, kInfD, 0.0, 1.5}));
}

}  // namespace
}  // namespace seam::evaltest
