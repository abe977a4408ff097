// gather and scatter on small hand-worked cases: row and column gathers,
// clamped out-of-range gather starts, batching dimensions, scatter with
// accumulation over duplicate indices, skipped out-of-bounds windows, scalar
// updates and overwrite/max combiners.
#include <cstdint>

#include "eval_test_util.h"

namespace seam::evaltest {
namespace {

using V = std::vector<int64_t>;

// {{1,2,3},{4,5,6},{7,8,9}}
Literal Matrix() { return FromInts(DType::kS32, {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}); }

// --- gather.

TEST(Gather, Rows) {
  Literal r = Ok(RunOp("s32[2,3]", "gather", {Matrix(), Ints(DType::kS32, {0, 2})},
                       "offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
                       "index_vector_dim=1, slice_sizes={1,3}"));
  EXPECT_EQ(IntsOf(r), (V{1, 2, 3, 7, 8, 9}));
}

TEST(Gather, Columns) {
  // out[i][b] = m[i][indices[b]]
  Literal r = Ok(RunOp("s32[3,2]", "gather", {Matrix(), Ints(DType::kS32, {0, 2})},
                       "offset_dims={0}, collapsed_slice_dims={1}, start_index_map={1}, "
                       "index_vector_dim=1, slice_sizes={3,1}"));
  EXPECT_EQ(IntsOf(r), (V{1, 3, 4, 6, 7, 9}));
}

TEST(Gather, OutOfRangeStartsAreClamped) {
  // 2x2 windows at (2,2) and (-1,0) clamp to (1,1) and (0,0).
  Literal indices = FromInts(DType::kS32, {2, 2}, {2, 2, -1, 0});
  Literal r = Ok(RunOp("s32[2,2,2]", "gather", {Matrix(), indices},
                       "offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0,1}, "
                       "index_vector_dim=1, slice_sizes={2,2}"));
  EXPECT_EQ(IntsOf(r), (V{5, 6, 8, 9, 1, 2, 4, 5}));
}

TEST(Gather, StartIndexMapPermutesComponents) {
  // The index vector {2, 0} starts dimension 1 at 2 and dimension 0 at 0.
  Literal r = Ok(RunOp("s32[1]", "gather", {Matrix(), FromInts(DType::kS32, {1, 2}, {2, 0})},
                       "offset_dims={}, collapsed_slice_dims={0,1}, start_index_map={1,0}, "
                       "index_vector_dim=1, slice_sizes={1,1}"));
  EXPECT_EQ(IntsOf(r), (V{3}));
}

TEST(Gather, BatchingDimensions) {
  // Row b of the operand is indexed by indices[b]: {1,2,3}[2], {4,5,6}[0].
  Literal operand = FromInts(DType::kS32, {2, 3}, {1, 2, 3, 4, 5, 6});
  Literal r = Ok(RunOp("s32[2]", "gather", {operand, FromInts(DType::kS32, {2, 1}, {2, 0})},
                       "offset_dims={}, collapsed_slice_dims={1}, start_index_map={1}, "
                       "operand_batching_dims={0}, start_indices_batching_dims={0}, "
                       "index_vector_dim=1, slice_sizes={1,1}"));
  EXPECT_EQ(IntsOf(r), (V{3, 4}));
}

TEST(Gather, IndexVectorDimensionFirst) {
  // indices s32[2,2] with index_vector_dim=0: column b is the index vector
  // (indices[0][b], indices[1][b]) = (0,1) and (2,0) -> m[0][1], m[2][0].
  Literal indices = FromInts(DType::kS32, {2, 2}, {0, 2, 1, 0});
  Literal r = Ok(RunOp("s32[2]", "gather", {Matrix(), indices},
                       "offset_dims={}, collapsed_slice_dims={0,1}, start_index_map={0,1}, "
                       "index_vector_dim=0, slice_sizes={1,1}"));
  EXPECT_EQ(IntsOf(r), (V{2, 7}));
}

// --- scatter.

const char kRowScatter[] =
    "update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
    "index_vector_dim=1, to_apply=combine";

TEST(Scatter, AddsRows) {
  Literal updates = FromInts(DType::kS32, {2, 3}, {10, 20, 30, 70, 80, 90});
  Literal r = Ok(RunOp("s32[3,3]", "scatter", {Matrix(), Ints(DType::kS32, {0, 2}), updates},
                       kRowScatter, BinaryComputation("combine", "s32", "add")));
  EXPECT_EQ(IntsOf(r), (V{11, 22, 33, 4, 5, 6, 77, 88, 99}));
}

TEST(Scatter, DuplicateIndicesAccumulate) {
  Literal updates = FromInts(DType::kS32, {2, 3}, {1, 1, 1, 10, 10, 10});
  Literal r = Ok(RunOp("s32[3,3]", "scatter", {Matrix(), Ints(DType::kS32, {1, 1}), updates},
                       kRowScatter, BinaryComputation("combine", "s32", "add")));
  EXPECT_EQ(IntsOf(r), (V{1, 2, 3, 15, 16, 17, 7, 8, 9}));
}

TEST(Scatter, OutOfBoundsIndicesAreSkipped) {
  Literal updates = FromInts(DType::kS32, {3, 3}, {10, 20, 30, 40, 50, 60, 70, 80, 90});
  Literal r = Ok(RunOp("s32[3,3]", "scatter", {Matrix(), Ints(DType::kS32, {3, -1, 0}), updates},
                       kRowScatter, BinaryComputation("combine", "s32", "add")));
  EXPECT_EQ(IntsOf(r), (V{71, 82, 93, 4, 5, 6, 7, 8, 9}));
}

TEST(Scatter, PartlyOutOfBoundsWindowIsSkippedWhole) {
  // 1x2 windows at (0,2) (columns 2..3: leaves the operand, skipped entirely,
  // even its in-bounds element) and at (2,1).
  Literal indices = FromInts(DType::kS32, {2, 2}, {0, 2, 2, 1});
  Literal updates = FromInts(DType::kS32, {2, 1, 2}, {5, 6, 7, 8});
  Literal r = Ok(RunOp("s32[3,3]", "scatter", {Matrix(), indices, updates},
                       "update_window_dims={1,2}, inserted_window_dims={}, "
                       "scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=combine",
                       BinaryComputation("combine", "s32", "add")));
  EXPECT_EQ(IntsOf(r), (V{1, 2, 3, 4, 5, 6, 7, 15, 17}));
}

TEST(Scatter, ScalarUpdates) {
  Literal operand = F32({0, 0, 0, 0, 0});
  Literal indices = FromInts(DType::kS32, {3, 1}, {1, 3, 1});
  Literal r = Ok(RunOp("f32[5]", "scatter", {operand, indices, F32({1, 2, 4})},
                       "update_window_dims={}, inserted_window_dims={0}, "
                       "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=combine",
                       BinaryComputation("combine", "f32", "add")));
  EXPECT_TRUE(SameFloats(r, {0.0, 5, 0.0, 2, 0.0}));
}

TEST(Scatter, Columns) {
  // updates[i][b] goes to m[i][indices[b]].
  Literal updates = FromInts(DType::kS32, {3, 2}, {10, 20, 30, 40, 50, 60});
  Literal r = Ok(RunOp("s32[3,3]", "scatter", {Matrix(), Ints(DType::kS32, {2, 0}), updates},
                       "update_window_dims={0}, inserted_window_dims={1}, "
                       "scatter_dims_to_operand_dims={1}, index_vector_dim=1, to_apply=combine",
                       BinaryComputation("combine", "s32", "add")));
  EXPECT_EQ(IntsOf(r), (V{21, 2, 13, 44, 5, 36, 67, 8, 59}));
}

TEST(Scatter, TwoOperandsWithATupleCombiner) {
  const std::string combine =
      "combine {\n"
      "  a0 = s32[] parameter(0)\n  a1 = f32[] parameter(1)\n"
      "  u0 = s32[] parameter(2)\n  u1 = f32[] parameter(3)\n"
      "  s = s32[] add(a0, u0)\n  m = f32[] multiply(a1, u1)\n"
      "  ROOT t = (s32[], f32[]) tuple(s, m)\n}\n";
  Literal r =
      Ok(RunOp("(s32[3], f32[3])", "scatter",
               {Ints(DType::kS32, {1, 2, 3}), F32({2, 2, 2}), FromInts(DType::kS32, {2, 1}, {0, 2}),
                Ints(DType::kS32, {10, 20}), F32({0.5f, 1.5f})},
               "update_window_dims={}, inserted_window_dims={0}, "
               "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=combine",
               combine));
  ASSERT_EQ(r.tuple_elements().size(), 2u);
  EXPECT_EQ(IntsOf(r.tuple_elements()[0]), (V{11, 2, 23}));
  EXPECT_TRUE(SameFloats(r.tuple_elements()[1], {1, 2, 3}));
}

TEST(Scatter, OverwriteAndMaxCombiners) {
  const std::string overwrite =
      "combine {\n  a = s32[] parameter(0)\n  ROOT b = s32[] parameter(1)\n}\n";
  Literal updates = FromInts(DType::kS32, {2, 3}, {0, 9, 0, -1, -2, 10});
  Literal set = Ok(RunOp("s32[3,3]", "scatter", {Matrix(), Ints(DType::kS32, {2, 0}), updates},
                         kRowScatter, overwrite));
  EXPECT_EQ(IntsOf(set), (V{-1, -2, 10, 4, 5, 6, 0, 9, 0}));
  Literal max = Ok(RunOp("s32[3,3]", "scatter", {Matrix(), Ints(DType::kS32, {2, 0}), updates},
                         kRowScatter, BinaryComputation("combine", "s32", "maximum")));
  EXPECT_EQ(IntsOf(max), (V{1, 2, 10, 4, 5, 6, 7, 9, 9}));
}

}  // namespace
}  // namespace seam::evaltest
