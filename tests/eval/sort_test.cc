// sort against hand-worked orders: ascending and descending, stability of
// equal keys with values riding along, total-order float keys (signed zeros
// and NaNs), sorting along either dimension, and comparators that look at a
// later operand.
#include <cstdint>

#include "eval_test_util.h"

namespace seam::evaltest {
namespace {

using V = std::vector<int64_t>;
using U = std::vector<uint64_t>;

TEST(Sort, AscendingAndDescending) {
  Literal x = Ints(DType::kS32, {3, 1, 4, 1, 5, -9, 2, 6});
  Literal up = Ok(RunOp("s32[8]", "sort", {x}, "dimensions={0}, to_apply=cmp",
                        Comparator("cmp", {"s32"}, "LT")));
  EXPECT_EQ(IntsOf(up), (V{-9, 1, 1, 2, 3, 4, 5, 6}));
  Literal down = Ok(RunOp("s32[8]", "sort", {x}, "dimensions={0}, to_apply=cmp",
                          Comparator("cmp", {"s32"}, "GT")));
  EXPECT_EQ(IntsOf(down), (V{6, 5, 4, 3, 2, 1, 1, -9}));
}

TEST(Sort, StableKeepsEqualKeysInInputOrder) {
  Literal keys = Ints(DType::kS32, {2, 1, 2, 1, 0});
  Literal values = Ints(DType::kS32, {0, 1, 2, 3, 4});
  Literal up = Ok(RunOp("(s32[5], s32[5])", "sort", {keys, values},
                        "dimensions={0}, is_stable=true, to_apply=cmp",
                        Comparator("cmp", {"s32", "s32"}, "LT")));
  ASSERT_EQ(up.tuple_elements().size(), 2u);
  EXPECT_EQ(IntsOf(up.tuple_elements()[0]), (V{0, 1, 1, 2, 2}));
  EXPECT_EQ(IntsOf(up.tuple_elements()[1]), (V{4, 1, 3, 0, 2}));
  Literal down = Ok(RunOp("(s32[5], s32[5])", "sort", {keys, values},
                          "dimensions={0}, is_stable=true, to_apply=cmp",
                          Comparator("cmp", {"s32", "s32"}, "GT")));
  ASSERT_EQ(down.tuple_elements().size(), 2u);
  EXPECT_EQ(IntsOf(down.tuple_elements()[0]), (V{2, 2, 1, 1, 0}));
  EXPECT_EQ(IntsOf(down.tuple_elements()[1]), (V{0, 2, 1, 3, 4}));
}

TEST(Sort, StableOverSeveralMergeLevels) {
  Literal keys = Ints(DType::kS32, {3, 1, 2, 3, 1, 2, 3, 1, 2, 0, 0, 3});
  Literal values = Ints(DType::kS32, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  Literal r = Ok(RunOp("(s32[12], s32[12])", "sort", {keys, values},
                       "dimensions={0}, is_stable=true, to_apply=cmp",
                       Comparator("cmp", {"s32", "s32"}, "LT")));
  ASSERT_EQ(r.tuple_elements().size(), 2u);
  EXPECT_EQ(IntsOf(r.tuple_elements()[0]), (V{0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3}));
  EXPECT_EQ(IntsOf(r.tuple_elements()[1]), (V{9, 10, 1, 4, 7, 2, 5, 8, 0, 3, 6, 11}));
}

TEST(Sort, TotalOrderFloatKeys) {
  // -NaN < -inf < -1 < -0 < +0 < 1 < inf < +NaN
  Literal x = F32({kNaN, 1, -0.0f, 0.0f, -kInf, BitsF32(0xffc00000), kInf, -1});
  Literal r = Ok(RunOp("f32[8]", "sort", {x}, "dimensions={0}, to_apply=cmp",
                       Comparator("cmp", {"f32"}, "LT", "TOTALORDER")));
  EXPECT_EQ(BitsOf(r), (U{0xffc00000, 0xff800000, 0xbf800000, 0x80000000, 0x00000000, 0x3f800000,
                          0x7f800000, 0x7fc00000}));
}

TEST(Sort, AlongEitherDimension) {
  Literal rows = FromInts(DType::kS32, {2, 3}, {3, 1, 2, 9, 7, 8});
  EXPECT_EQ(IntsOf(Ok(RunOp("s32[2,3]", "sort", {rows}, "dimensions={1}, to_apply=cmp",
                            Comparator("cmp", {"s32"}, "LT")))),
            (V{1, 2, 3, 7, 8, 9}));
  // Columns {3,2}, {1,7}, {8,2} sorted independently.
  Literal cols = FromInts(DType::kS32, {2, 3}, {3, 1, 8, 2, 7, 2});
  EXPECT_EQ(IntsOf(Ok(RunOp("s32[2,3]", "sort", {cols}, "dimensions={0}, to_apply=cmp",
                            Comparator("cmp", {"s32"}, "LT")))),
            (V{2, 1, 2, 3, 7, 8}));
}

TEST(Sort, ComparatorOnTheSecondOperand) {
  // Orders by the values (operand 1) descending; the keys follow.
  const std::string cmp =
      "cmp {\n"
      "  k0 = s32[] parameter(0)\n  k1 = s32[] parameter(1)\n"
      "  v0 = f32[] parameter(2)\n  v1 = f32[] parameter(3)\n"
      "  ROOT gt = pred[] compare(v0, v1), direction=GT\n}\n";
  Literal r =
      Ok(RunOp("(s32[4], f32[4])", "sort", {Ints(DType::kS32, {10, 20, 30, 40}), F32({1, 3, 2, 3})},
               "dimensions={0}, is_stable=true, to_apply=cmp", cmp));
  ASSERT_EQ(r.tuple_elements().size(), 2u);
  EXPECT_EQ(IntsOf(r.tuple_elements()[0]), (V{20, 40, 30, 10}));
  EXPECT_TRUE(SameFloats(r.tuple_elements()[1], {3, 3, 2, 1}));
}

}  // namespace
}  // namespace seam::evaltest
