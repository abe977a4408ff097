// Data movement ops against hand-worked values: dynamic-slice and
// dynamic-update-slice with start indices clamped so the slice fits, pad with
// negative and interior padding, reverse, iota, concatenate, transpose,
// slice with strides, broadcast and reshape.
#include <cstdint>

#include "eval_test_util.h"

namespace seam::evaltest {
namespace {

using V = std::vector<int64_t>;

// s32[rows, cols] holding 0, 1, 2, ... in row-major order.
Literal Counting(int64_t rows, int64_t cols) {
  V values;
  for (int64_t i = 0; i < rows * cols; ++i) values.push_back(i);
  return FromInts(DType::kS32, {rows, cols}, values);
}

// --- dynamic-slice: each start is clamped to [0, dim - size].

TEST(DynamicSlice, StartsAreClampedSoTheSliceFits) {
  Literal x = Ints(DType::kS32, {0, 1, 2, 3, 4});
  auto slice = [&](int64_t start) {
    return IntsOf(Ok(RunOp("s32[2]", "dynamic-slice", {x, IntScalar(DType::kS32, start)},
                           "dynamic_slice_sizes={2}")));
  };
  EXPECT_EQ(slice(1), (V{1, 2}));
  EXPECT_EQ(slice(3), (V{3, 4}));
  EXPECT_EQ(slice(4), (V{3, 4}));
  EXPECT_EQ(slice(100), (V{3, 4}));
  EXPECT_EQ(slice(-1), (V{0, 1}));
  EXPECT_EQ(slice(-2147483648), (V{0, 1}));
}

TEST(DynamicSlice, TwoDimensions) {
  // Starts (2, -5) for a 2x2 window of a 3x4 array clamp to (1, 0).
  Literal r = Ok(RunOp("s32[2,2]", "dynamic-slice",
                       {Counting(3, 4), IntScalar(DType::kS32, 2), IntScalar(DType::kS32, -5)},
                       "dynamic_slice_sizes={2,2}"));
  EXPECT_EQ(IntsOf(r), (V{4, 5, 8, 9}));
}

TEST(DynamicSlice, UnsignedStartIsNotNegative) {
  // u32 0xffffffff is 4294967295, far past the end: clamp to 3, not to 0.
  Literal r = Ok(RunOp("s32[2]", "dynamic-slice",
                       {Ints(DType::kS32, {0, 1, 2, 3, 4}), IntScalar(DType::kU32, 0xffffffff)},
                       "dynamic_slice_sizes={2}"));
  EXPECT_EQ(IntsOf(r), (V{3, 4}));
}

// --- dynamic-update-slice: the same clamping of starts.

TEST(DynamicUpdateSlice, StartsAreClampedSoTheUpdateFits) {
  Literal x = Ints(DType::kS32, {0, 1, 2, 3, 4});
  Literal u = Ints(DType::kS32, {10, 11});
  auto update = [&](int64_t start) {
    return IntsOf(
        Ok(RunOp("s32[5]", "dynamic-update-slice", {x, u, IntScalar(DType::kS32, start)})));
  };
  EXPECT_EQ(update(1), (V{0, 10, 11, 3, 4}));
  EXPECT_EQ(update(3), (V{0, 1, 2, 10, 11}));
  EXPECT_EQ(update(4), (V{0, 1, 2, 10, 11}));
  EXPECT_EQ(update(-3), (V{10, 11, 2, 3, 4}));
}

TEST(DynamicUpdateSlice, TwoDimensions) {
  Literal x = FromInts(DType::kS32, {3, 3}, V(9, 0));
  Literal u = FromInts(DType::kS32, {2, 2}, {1, 2, 3, 4});
  // Starts (5, -1) clamp to (1, 0).
  Literal r = Ok(RunOp("s32[3,3]", "dynamic-update-slice",
                       {x, u, IntScalar(DType::kS32, 5), IntScalar(DType::kS32, -1)}));
  EXPECT_EQ(IntsOf(r), (V{0, 0, 0, 1, 2, 0, 3, 4, 0}));
}

TEST(DynamicUpdateSlice, FullSizeUpdateIgnoresTheStart) {
  Literal r = Ok(RunOp(
      "s32[3]", "dynamic-update-slice",
      {Ints(DType::kS32, {1, 2, 3}), Ints(DType::kS32, {7, 8, 9}), IntScalar(DType::kS32, 7)}));
  EXPECT_EQ(IntsOf(r), (V{7, 8, 9}));
}

// --- pad: low_high_interior per dimension; negative low/high remove
// elements after interior padding.

TEST(Pad, EdgeInteriorAndNegative) {
  Literal x = F32({1, 2, 3});
  Literal v = F32Scalar(-1);
  auto pad = [&](const std::string& shape, const std::string& config) {
    return Ok(RunOp(shape, "pad", {x, v}, "padding=" + config));
  };
  EXPECT_TRUE(SameFloats(pad("f32[6]", "1_2"), {-1, 1, 2, 3, -1, -1}));
  EXPECT_TRUE(SameFloats(pad("f32[5]", "0_0_1"), {1, -1, 2, -1, 3}));
  EXPECT_TRUE(SameFloats(pad("f32[2]", "-1_0"), {2, 3}));
  EXPECT_TRUE(SameFloats(pad("f32[1]", "0_-2"), {1}));
  EXPECT_TRUE(SameFloats(pad("f32[4]", "2_-1"), {-1, -1, 1, 2}));
  // Interior 2 gives {1,p,p,2,p,p,3}; dropping one element at each end:
  EXPECT_TRUE(SameFloats(pad("f32[5]", "-1_-1_2"), {-1, -1, 2, -1, -1}));
  // Interior 1 gives {1,p,2,p,3}; dropping two at the low end:
  EXPECT_TRUE(SameFloats(pad("f32[3]", "-2_0_1"), {2, -1, 3}));
}

TEST(Pad, TwoDimensions) {
  Literal x = FromInts(DType::kS32, {2, 2}, {1, 2, 3, 4});
  Literal r = Ok(RunOp("s32[3,4]", "pad", {x, IntScalar(DType::kS32, 9)}, "padding=1_0x0_1_1"));
  EXPECT_EQ(IntsOf(r), (V{9, 9, 9, 9, 1, 9, 2, 9, 3, 9, 4, 9}));
}

// --- reverse.

TEST(Reverse, EachDimensionAndBoth) {
  Literal x = FromInts(DType::kS32, {2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(IntsOf(Ok(RunOp("s32[2,3]", "reverse", {x}, "dimensions={1}"))), (V{3, 2, 1, 6, 5, 4}));
  EXPECT_EQ(IntsOf(Ok(RunOp("s32[2,3]", "reverse", {x}, "dimensions={0}"))), (V{4, 5, 6, 1, 2, 3}));
  EXPECT_EQ(IntsOf(Ok(RunOp("s32[2,3]", "reverse", {x}, "dimensions={0,1}"))),
            (V{6, 5, 4, 3, 2, 1}));
}

// --- iota.

TEST(Iota, AlongEachDimension) {
  EXPECT_EQ(IntsOf(Ok(RunOp("s32[2,3]", "iota", {}, "iota_dimension=1"))), (V{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(IntsOf(Ok(RunOp("s32[2,3]", "iota", {}, "iota_dimension=0"))), (V{0, 0, 0, 1, 1, 1}));
  EXPECT_TRUE(SameFloats(Ok(RunOp("f32[4]", "iota", {}, "iota_dimension=0")), {0.0, 1, 2, 3}));
}

TEST(Iota, BF16RoundsLargeIndices) {
  // bf16 has 8 significant bits: 255 is exact, 257 ties to 256, 259 to 260.
  std::vector<double> got = FloatsOf(Ok(RunOp("bf16[260]", "iota", {}, "iota_dimension=0")));
  ASSERT_EQ(got.size(), 260u);
  EXPECT_EQ(got[255], 255);
  EXPECT_EQ(got[257], 256);
  EXPECT_EQ(got[258], 258);
  EXPECT_EQ(got[259], 260);
}

// --- concatenate.

TEST(Concatenate, AlongEachDimension) {
  Literal a = FromInts(DType::kS32, {2, 2}, {1, 2, 3, 4});
  Literal b = FromInts(DType::kS32, {2, 1}, {5, 6});
  EXPECT_EQ(IntsOf(Ok(RunOp("s32[2,3]", "concatenate", {a, b}, "dimensions={1}"))),
            (V{1, 2, 5, 3, 4, 6}));
  Literal c = FromInts(DType::kS32, {1, 2}, {7, 8});
  EXPECT_EQ(IntsOf(Ok(RunOp("s32[3,2]", "concatenate", {a, c}, "dimensions={0}"))),
            (V{1, 2, 3, 4, 7, 8}));
}

TEST(Concatenate, ThreeOperandsOneEmpty) {
  Literal r =
      Ok(RunOp("s32[5]", "concatenate",
               {Ints(DType::kS32, {1, 2}), Ints(DType::kS32, {}), Ints(DType::kS32, {3, 4, 5})},
               "dimensions={0}"));
  EXPECT_EQ(IntsOf(r), (V{1, 2, 3, 4, 5}));
}

// --- transpose: output dimension i is operand dimension permutation[i].

TEST(Transpose, TwoDimensions) {
  Literal x = FromInts(DType::kS32, {2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(IntsOf(Ok(RunOp("s32[3,2]", "transpose", {x}, "dimensions={1,0}"))),
            (V{1, 4, 2, 5, 3, 6}));
}

TEST(Transpose, ThreeDimensions) {
  // x[a][b][c] = 12a + 4b + c with shape [2,3,4]; permutation {2,0,1} gives
  // shape [4,2,3] with out[i][j][k] = x[j][k][i] = 12j + 4k + i.
  V values;
  for (int64_t i = 0; i < 24; ++i) values.push_back(i);
  Literal x = FromInts(DType::kS32, {2, 3, 4}, values);
  V got = IntsOf(Ok(RunOp("s32[4,2,3]", "transpose", {x}, "dimensions={2,0,1}")));
  ASSERT_EQ(got.size(), 24u);
  EXPECT_EQ(got[0 * 6 + 0 * 3 + 1], 4);   // out[0][0][1] = x[0][1][0]
  EXPECT_EQ(got[1 * 6 + 0 * 3 + 2], 9);   // out[1][0][2] = x[0][2][1]
  EXPECT_EQ(got[3 * 6 + 1 * 3 + 1], 19);  // out[3][1][1] = x[1][1][3]
  V want;
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 2; ++j)
      for (int64_t k = 0; k < 3; ++k) want.push_back(12 * j + 4 * k + i);
  EXPECT_EQ(got, want);
}

// --- slice with strides.

TEST(Slice, Strided) {
  Literal x = Ints(DType::kS32, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  EXPECT_EQ(IntsOf(Ok(RunOp("s32[3]", "slice", {x}, "slice={[1:8:3]}"))), (V{1, 4, 7}));
  EXPECT_EQ(IntsOf(Ok(RunOp("s32[2,2]", "slice", {Counting(3, 4)}, "slice={[0:3:2], [1:4:2]}"))),
            (V{1, 3, 9, 11}));
}

// --- broadcast and reshape.

TEST(Broadcast, OperandDimensionsMapToOutputDimensions) {
  Literal x = Ints(DType::kS32, {1, 2});
  EXPECT_EQ(IntsOf(Ok(RunOp("s32[2,3]", "broadcast", {x}, "dimensions={0}"))),
            (V{1, 1, 1, 2, 2, 2}));
  EXPECT_EQ(IntsOf(Ok(RunOp("s32[3,2]", "broadcast", {x}, "dimensions={1}"))),
            (V{1, 2, 1, 2, 1, 2}));
  EXPECT_EQ(
      IntsOf(Ok(RunOp("s32[2,2]", "broadcast", {IntScalar(DType::kS32, 7)}, "dimensions={}"))),
      (V{7, 7, 7, 7}));
}

TEST(Reshape, KeepsRowMajorOrder) {
  Literal x = FromInts(DType::kS32, {2, 3}, {1, 2, 3, 4, 5, 6});
  Literal r = Ok(RunOp("s32[3,2]", "reshape", {x}));
  EXPECT_EQ(r.shape().dims(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(IntsOf(r), (V{1, 2, 3, 4, 5, 6}));
}

// --- bitcast reinterprets the physical buffer, so it depends on layouts
// (XLA's HloEvaluator memcpys the layout-ordered data). Without a layout
// change it is a reshape.

TEST(Bitcast, SameLayoutIsAReshape) {
  Literal x = FromInts(DType::kS32, {2, 3}, {1, 2, 3, 4, 5, 6});
  std::string text =
      "HloModule m\nENTRY e {\n  p = s32[2,3]{1,0} parameter(0)\n"
      "  ROOT b = s32[3,2]{1,0} bitcast(p)\n}\n";
  EXPECT_EQ(IntsOf(Ok(RunHlo(text, {x}))), (V{1, 2, 3, 4, 5, 6}));
}

TEST(Bitcast, LayoutChangeIsATranspose) {
  // Memory holds 1..6 (row-major [2,3]). Read as [3,2] with dimension 0
  // minor, element (i, j) is at offset i + 3j: {{1,4},{2,5},{3,6}}.
  Literal x = FromInts(DType::kS32, {2, 3}, {1, 2, 3, 4, 5, 6});
  std::string text =
      "HloModule m\nENTRY e {\n  p = s32[2,3]{1,0} parameter(0)\n"
      "  ROOT b = s32[3,2]{0,1} bitcast(p)\n}\n";
  EXPECT_EQ(IntsOf(Ok(RunHlo(text, {x}))), (V{1, 4, 2, 5, 3, 6}));
  // The operand's layout counts as well: [2,3]{0,1} holds (i, j) at i + 2j,
  // so memory is 1,4,2,5,3,6; read as [6]: that order.
  std::string column_major =
      "HloModule m\nENTRY e {\n  p = s32[2,3]{0,1} parameter(0)\n"
      "  ROOT b = s32[6]{0} bitcast(p)\n}\n";
  EXPECT_EQ(IntsOf(Ok(RunHlo(column_major, {x}))), (V{1, 4, 2, 5, 3, 6}));
}

TEST(Bitcast, ThreeDimensionalLayout) {
  // s32[2,3,4]{1,2,0} puts (a, b, c) at memory offset b + 3c + 12a. With
  // x[a][b][c] = 12a + 4b + c, reading memory as s32[24] gives at offset
  // p = b + 3c + 12a the value 12a + 4b + c.
  V values;
  for (int64_t i = 0; i < 24; ++i) values.push_back(i);
  Literal x = FromInts(DType::kS32, {2, 3, 4}, values);
  std::string to_flat =
      "HloModule m\nENTRY e {\n  p = s32[2,3,4]{1,2,0} parameter(0)\n"
      "  ROOT b = s32[24]{0} bitcast(p)\n}\n";
  EXPECT_EQ(IntsOf(Ok(RunHlo(to_flat, {x}))), (V{0,  4,  8,  1,  5,  9,  2,  6,  10, 3,  7,  11,
                                                 12, 16, 20, 13, 17, 21, 14, 18, 22, 15, 19, 23}));
  // And back: (a, b, c) of the result reads offset b + 3c + 12a of 0..23.
  Literal flat = Ints(DType::kS32, values);
  std::string from_flat =
      "HloModule m\nENTRY e {\n  p = s32[24]{0} parameter(0)\n"
      "  ROOT b = s32[2,3,4]{1,2,0} bitcast(p)\n}\n";
  EXPECT_EQ(
      IntsOf(Ok(RunHlo(from_flat, {flat}))),
      (V{0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11, 12, 15, 18, 21, 13, 16, 19, 22, 14, 17, 20, 23}));
}

// --- empty arrays: no elements to move, and nothing may be read.

TEST(EmptyArrays, ReshapeConcatenatePadAndBitcastConvert) {
  Literal empty = FromInts(DType::kS32, {0, 3}, {});
  EXPECT_EQ(Ok(RunOp("s32[3,0]", "reshape", {empty})).element_count(), 0);
  EXPECT_EQ(IntsOf(Ok(RunOp("s32[2,3]", "concatenate",
                            {empty, FromInts(DType::kS32, {2, 3}, {1, 2, 3, 4, 5, 6})},
                            "dimensions={0}"))),
            (V{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(IntsOf(Ok(RunOp("s32[2]", "pad", {Ints(DType::kS32, {}), IntScalar(DType::kS32, 7)},
                            "padding=1_1"))),
            (V{7, 7}));
  EXPECT_EQ(Ok(RunOp("f32[0]", "bitcast-convert", {Ints(DType::kS32, {})})).element_count(), 0);
}

}  // namespace
}  // namespace seam::evaltest
