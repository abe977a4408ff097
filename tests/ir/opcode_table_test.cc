// The opcode and element-type tables are the only lists: every entry must be
// reachable by name and have consistent properties.
#include <cmath>
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "seam/ir/dtype.h"
#include "seam/ir/float16.h"
#include "seam/ir/opcode.h"

namespace seam {
namespace {

TEST(OpcodeTable, EveryOpcodeRoundTripsThroughItsName) {
  std::set<std::string> names;
  for (int i = 0; i < kOpcodeCount; ++i) {
    Opcode op = static_cast<Opcode>(i);
    std::string name(OpcodeName(op));
    EXPECT_TRUE(names.insert(name).second) << "duplicate opcode name " << name;
    ASSERT_TRUE(OpcodeFromName(name).has_value()) << name;
    EXPECT_EQ(*OpcodeFromName(name), op);
    EXPECT_GE(OpcodeArity(op), kVariadic) << name;
  }
  EXPECT_FALSE(OpcodeFromName("frobnicate").has_value());
}

TEST(OpcodeTable, CoversXlaOperationSemantics) {
  for (const char* name :
       {"all-reduce", "all-gather", "reduce-scatter", "collective-permute", "all-to-all",
        "custom-call", "fusion", "batch-norm-training", "batch-norm-inference",
        "batch-norm-grad", "rng", "rng-bit-generator", "sort", "gather", "scatter",
        "reduce-window", "select-and-scatter", "convolution", "dot", "fft",
        "triangular-solve", "cholesky", "while", "conditional", "call", "map",
        "dynamic-slice", "dynamic-update-slice", "iota", "pad", "reverse",
        "reduce-precision", "opt-barrier", "after-all", "partition-id", "replica-id",
        "count-leading-zeros", "popcnt", "round-nearest-even", "erf", "cbrt", "topk"}) {
    EXPECT_TRUE(OpcodeFromName(name).has_value()) << name;
  }
}

TEST(OpcodeTable, CategoriesMatchSemantics) {
  EXPECT_EQ(OpcodeCategory(Opcode::kAdd), OpCategory::kElementwise);
  EXPECT_EQ(OpcodeCategory(Opcode::kBroadcast), OpCategory::kDataMovement);
  EXPECT_EQ(OpcodeCategory(Opcode::kReduce), OpCategory::kReduction);
  EXPECT_EQ(OpcodeCategory(Opcode::kDot), OpCategory::kLibrary);
  EXPECT_TRUE(IsCommutative(Opcode::kMultiply));
  EXPECT_FALSE(IsCommutative(Opcode::kSubtract));
  EXPECT_TRUE(IsExpensive(Opcode::kExp));
  EXPECT_EQ(OpcodeArity(Opcode::kSelect), 3);
}

TEST(DTypeTable, EveryTypeRoundTripsThroughItsName) {
  for (const char* name : {"pred", "s4", "s8", "s16", "s32", "s64", "u8", "u16", "u32",
                           "u64", "f16", "bf16", "f32", "f64", "c64", "c128", "token",
                           "f8e5m2", "f8e4m3fn", "f8e4m3b11fnuz", "f8e5m2fnuz",
                           "f8e4m3fnuz"}) {
    std::optional<DType> t = DTypeFromName(name);
    ASSERT_TRUE(t.has_value()) << name;
    EXPECT_EQ(DTypeName(*t), name);
  }
  EXPECT_EQ(DTypeByteSize(DType::kBF16), 2);
  EXPECT_EQ(DTypeByteSize(DType::kC128), 16);
  EXPECT_EQ(DTypeKindOf(DType::kF8E4M3FN), DTypeKind::kOpaque);
}

TEST(Float16, ConvertsWithRoundToNearestEven) {
  EXPECT_EQ(FloatToBF16(1.0f), 0x3f80);
  EXPECT_EQ(FloatToBF16(1.00390625f), 0x3f80);  // halfway, rounds to even
  EXPECT_EQ(FloatToBF16(1.01171875f), 0x3f82);  // halfway, rounds to even (up)
  EXPECT_EQ(BF16ToFloat(0x3f80), 1.0f);
  EXPECT_EQ(FloatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(FloatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(FloatToHalf(1e-8f), 0x0000);
  EXPECT_EQ(FloatToHalf(5.9604645e-8f), 0x0001);  // smallest subnormal
  EXPECT_EQ(HalfToFloat(0x0001), 5.9604645e-8f);
  EXPECT_EQ(HalfToFloat(0xc000), -2.0f);
  EXPECT_TRUE(std::isnan(HalfToFloat(FloatToHalf(NAN))));
  EXPECT_TRUE(std::isnan(BF16ToFloat(FloatToBF16(NAN))));
}

}  // namespace
}  // namespace seam
