// The ops JAX does not emit for one device, or that only appear after XLA's
// own passes, so no conformance case checks them: collectives on one
// participant, replica and partition ids, tokens, domains, fusions,
// get-dimension-size, the batch-norm ops and rng. Expected values are worked
// out by hand from XLA's operation semantics.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "eval_test_util.h"

namespace seam::evaltest {
namespace {

// ---- collectives: one participant keeps its value.

TEST(SingleDeviceCollectives, ReduceGatherScatterAndAllToAllKeepTheValue) {
  const std::string add = BinaryComputation("add", "f32", "add");
  Literal x = F32({1, -2, 3.5f, 0});
  const std::vector<std::pair<std::string, std::string>> ops = {
      {"all-reduce", "replica_groups={}, to_apply=add"},
      {"all-gather", "replica_groups={}, dimensions={0}"},
      {"reduce-scatter", "replica_groups={}, dimensions={0}, to_apply=add"},
      {"all-to-all", "replica_groups={}"},
      {"collective-broadcast", "replica_groups={}"},
  };
  for (const auto& [op, attrs] : ops) {
    EXPECT_TRUE(SameFloats(Ok(RunOp("f32[4]", op, {x}, attrs, add)), {1, -2, 3.5, 0})) << op;
  }
}

TEST(SingleDeviceCollectives, AllToAllOfSeveralOperandsIsATuple) {
  Literal a = F32({1, 2});
  Literal b = Ints(DType::kS32, {7, 8, 9});
  Literal r = Ok(RunOp("(f32[2], s32[3])", "all-to-all", {a, b}, "replica_groups={}"));
  ASSERT_EQ(r.tuple_elements().size(), 2u);
  EXPECT_TRUE(SameFloats(r.tuple_elements()[0], {1, 2}));
  EXPECT_EQ(IntsOf(r.tuple_elements()[1]), (std::vector<int64_t>{7, 8, 9}));
}

// A gather or scatter across a group of several is refused, not answered
// with the operand (which the result shape could not hold).
TEST(SingleDeviceCollectives, ResultsSpanningSeveralDevicesAreRefused) {
  Literal x = F32({1, -2, 3.5f, 0});
  absl::StatusOr<Literal> gathered =
      RunOp("f32[8]", "all-gather", {x}, "replica_groups={{0,1}}, dimensions={0}");
  ASSERT_FALSE(gathered.ok());
  EXPECT_NE(std::string(gathered.status().message()).find("spans several devices"),
            std::string::npos)
      << gathered.status();
}

TEST(SingleDeviceCollectives, CollectivePermuteReceivesOnlyFromItself) {
  Literal x = F32({1, 2, 3});
  // The pair 0 -> 0: the device sends to itself.
  EXPECT_TRUE(SameFloats(
      Ok(RunOp("f32[3]", "collective-permute", {x}, "channel_id=1, source_target_pairs={{0,0}}")),
      {1, 2, 3}));
  // Device 0 sends to 1 and nothing reaches 0: zeros.
  EXPECT_TRUE(SameFloats(Ok(RunOp("f32[3]", "collective-permute", {x},
                                  "channel_id=1, source_target_pairs={{0,1},{1,0}}")),
                         {0, 0, 0}));
}

TEST(SingleDeviceIds, ReplicaAndPartitionAreZero) {
  EXPECT_EQ(IntsOf(Ok(RunOp("u32[]", "replica-id", {}))), (std::vector<int64_t>{0}));
  EXPECT_EQ(IntsOf(Ok(RunOp("u32[]", "partition-id", {}))), (std::vector<int64_t>{0}));
}

// ---- values passed through.

TEST(Identities, TokensDependenciesDomainsAndCopies) {
  Literal x = F32({-0.0f, kInf, 2});
  EXPECT_TRUE(SameFloats(Ok(RunOp("f32[3]", "copy", {x})), {-0.0, kInfD, 2}));
  EXPECT_TRUE(SameFloats(
      Ok(RunOp("f32[3]", "domain", {x},
               "domain={kind=\"sharding\", entry={maximal device=0}, exit={maximal device=0}}")),
      {-0.0, kInfD, 2}));
  const std::string text = R"(HloModule m
ENTRY e {
  x = f32[3] parameter(0)
  t = token[] after-all()
  u = token[] after-all(t, t)
  ROOT d = f32[3] add-dependency(x, u)
}
)";
  EXPECT_TRUE(SameFloats(Ok(RunHlo(text, {x})), {-0.0, kInfD, 2}));
  Literal token = Ok(RunOp("token[]", "after-all", {}));
  EXPECT_TRUE(token.shape().IsToken());
}

TEST(Fusion, CallsItsComputation) {
  const std::string text = R"(HloModule m
fused {
  a = f32[2] parameter(0)
  b = f32[2] parameter(1)
  ROOT s = f32[2] subtract(a, b)
}
ENTRY e {
  x = f32[2] parameter(0)
  y = f32[2] parameter(1)
  ROOT f = f32[2] fusion(x, y), kind=kLoop, calls=fused
}
)";
  EXPECT_TRUE(SameFloats(Ok(RunHlo(text, {F32({5, 1}), F32({2, 3})})), {3, -2}));
}

TEST(GetDimensionSize, IsTheStaticSize) {
  Literal x = F32({2, 3}, {0, 0, 0, 0, 0, 0});
  EXPECT_EQ(IntsOf(Ok(RunOp("s32[]", "get-dimension-size", {x}, "dimensions={1}"))),
            (std::vector<int64_t>{3}));
  EXPECT_EQ(IntsOf(Ok(RunOp("s32[]", "get-dimension-size", {x}, "dimensions={0}"))),
            (std::vector<int64_t>{2}));
}

// ---- batch norm, feature dimension 1.

void ExpectNear(const Literal& got, const std::vector<double>& want) {
  std::vector<double> values = FloatsOf(got);
  ASSERT_EQ(values.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) EXPECT_NEAR(values[k], want[k], 1e-6) << k;
}

TEST(BatchNorm, TrainingNormalisesEachFeatureByItsOwnStatistics) {
  // Feature 0 holds 1, 3 (mean 2, variance 1); feature 1 holds 2, 6 (4, 4).
  Literal r = Ok(RunOp("(f32[2,2], f32[2], f32[2])", "batch-norm-training",
                       {F32({2, 2}, {1, 2, 3, 6}), F32({1, 1}), F32({0, 0})},
                       "epsilon=0, feature_index=1"));
  ASSERT_EQ(r.tuple_elements().size(), 3u);
  ExpectNear(r.tuple_elements()[0], {-1, -1, 1, 1});
  ExpectNear(r.tuple_elements()[1], {2, 4});
  ExpectNear(r.tuple_elements()[2], {1, 4});
}

TEST(BatchNorm, InferenceScalesAndOffsetsTheGivenStatistics) {
  // Feature 0: 2 * (x - 2) / 1 + 1; feature 1: 1 * (x - 4) / 2 + 0.
  Literal r =
      Ok(RunOp("f32[2,2]", "batch-norm-inference",
               {F32({2, 2}, {1, 2, 3, 6}), F32({2, 1}), F32({1, 0}), F32({2, 4}), F32({1, 4})},
               "epsilon=0, feature_index=1"));
  ExpectNear(r, {-1, -1, 3, 1});
}

TEST(BatchNorm, GradFollowsXlasFormula) {
  // One feature of three elements x = (1, 2, 6), mean 3, variance 4, scale 2,
  // dy = (1, 0, 0): grad_offset = sum dy = 1; grad_scale = sum dy (x - mean)
  // / sqrt(var) = -1; grad_x = scale / sqrt(var) * (dy - mean(dy) - (x -
  // mean) mean(dy (x - mean)) / var) = dy - 1/3 + (x - 3) / 6.
  Literal r =
      Ok(RunOp("(f32[3,1], f32[1], f32[1])", "batch-norm-grad",
               {F32({3, 1}, {1, 2, 6}), F32({2}), F32({3}), F32({4}), F32({3, 1}, {1, 0, 0})},
               "epsilon=0, feature_index=1"));
  ASSERT_EQ(r.tuple_elements().size(), 3u);
  ExpectNear(r.tuple_elements()[0], {1.0 / 3, -0.5, 1.0 / 6});
  ExpectNear(r.tuple_elements()[1], {-1});
  ExpectNear(r.tuple_elements()[2], {1});
}

// ---- rng: the distribution, not XLA's bits.

TEST(Rng, UniformStaysInItsHalfOpenRange) {
  std::vector<double> v = FloatsOf(
      Ok(RunOp("f32[4096]", "rng", {F32Scalar(2), F32Scalar(3)}, "distribution=rng_uniform")));
  ASSERT_EQ(v.size(), 4096u);
  EXPECT_GE(*std::min_element(v.begin(), v.end()), 2.0);
  EXPECT_LT(*std::max_element(v.begin(), v.end()), 3.0);
  EXPECT_NEAR(std::accumulate(v.begin(), v.end(), 0.0) / v.size(), 2.5, 0.03);
}

TEST(Rng, NormalHasItsMeanAndDeviation) {
  std::vector<double> v = FloatsOf(
      Ok(RunOp("f32[4096]", "rng", {F32Scalar(1), F32Scalar(2)}, "distribution=rng_normal")));
  ASSERT_EQ(v.size(), 4096u);
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / v.size();
  double squares = 0;
  for (double x : v) squares += (x - mean) * (x - mean);
  EXPECT_NEAR(mean, 1.0, 0.15);
  EXPECT_NEAR(std::sqrt(squares / v.size()), 2.0, 0.15);
}

}  // namespace
}  // namespace seam::evaltest
