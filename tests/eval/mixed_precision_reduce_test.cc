// Reducers whose float types differ from their inputs' or inits' (XLA checks
// a reducer's shapes ignoring floating-point precision): the values reach
// the reducer converted to its types, and the result has its types.
// Expected values are worked out by hand.
#include "eval_test_util.h"

namespace seam::evaltest {
namespace {

// f64 inputs, an f32 reducer and init: 2^-30 added to 1 in f32 is 1 (below
// half an ulp of 1, 2^-24); in f64 the sum would be 1 + 2^-29.
TEST(MixedPrecisionReduce, InputsReachAnF32ReducerAsF32) {
  const std::string text = absl::StrCat("HloModule m\n", BinaryComputation("add", "f32", "add"), R"(
ENTRY e {
  p = f64[1,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[1] reduce(p, z), dimensions={1}, to_apply=add
}
)");
  Literal x(Shape::Array(DType::kF64, {1, 3}));
  const double tiny = std::ldexp(1.0, -30);
  const double values[] = {1.0, tiny, tiny};
  for (int i = 0; i < 3; ++i) x.mutable_data<double>()[i] = values[i];
  Literal r = Ok(RunHlo(text, {x}));
  ASSERT_EQ(r.shape().dtype(), DType::kF32);
  EXPECT_EQ(r.data<float>()[0], 1.0f);
}

// bf16 inputs and an f64 init into an f32 reducer.
TEST(MixedPrecisionReduce, Bf16InputsAndAnF64InitReachAnF32Reducer) {
  const std::string text = absl::StrCat("HloModule m\n", BinaryComputation("add", "f32", "add"), R"(
ENTRY e {
  p = bf16[4] parameter(0)
  z = f64[] constant(0.5)
  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=add
}
)");
  Literal x(Shape::Array(DType::kBF16, {4}));
  const uint16_t bits[] = {0x3f80, 0x4000, 0x4040, 0x4080};  // 1, 2, 3, 4
  for (int i = 0; i < 4; ++i) x.mutable_data<uint16_t>()[i] = bits[i];
  Literal r = Ok(RunHlo(text, {x}));
  ASSERT_EQ(r.shape().dtype(), DType::kF32);
  EXPECT_EQ(r.data<float>()[0], 10.5f);
}

}  // namespace
}  // namespace seam::evaltest
