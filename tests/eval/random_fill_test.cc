// Random arrays written straight into f32, f64 and bf16 memory hold the
// same bits as the per-element setters give the same stream (the values
// every seeded input, benchmark and differential test has used).
#include "seam/eval/random_fill.h"

#include <cstring>

#include "gtest/gtest.h"
#include "seam/eval/scalar_ops.h"

namespace seam {
namespace {

using scalar::SplitMix64;

// The stream through Literal::SetDouble, element by element.
Literal ThroughTheSetters(const Shape& shape, uint64_t seed) {
  Literal literal(shape);
  const uint64_t base = SplitMix64(seed);
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    const uint64_t bits = SplitMix64(base ^ static_cast<uint64_t>(i) * 0xd1b54a32d192ed03ull);
    literal.SetDouble(i, static_cast<double>(bits >> 11) * 0x1.0p-52 - 1.0);
  }
  return literal;
}

TEST(FillRandom, WritesTheSettersValuesBitForBit) {
  for (DType dtype : {DType::kF32, DType::kF64, DType::kBF16, DType::kF16}) {
    const Shape shape = Shape::Array(dtype, {37, 29});
    Literal filled(shape);
    FillRandom(filled, 12345);
    const Literal want = ThroughTheSetters(shape, 12345);
    ASSERT_EQ(filled.bytes().size(), want.bytes().size());
    EXPECT_EQ(std::memcmp(filled.bytes().data(), want.bytes().data(), want.bytes().size()), 0)
        << DTypeName(dtype);
  }
}

}  // namespace
}  // namespace seam
