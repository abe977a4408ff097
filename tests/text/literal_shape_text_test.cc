// Shapes and literals: parsing, printing, and what each rejects.
#include "gtest/gtest.h"
#include "seam/text/literal_text.h"
#include "seam/text/shape_text.h"
#include "seam/util/error_location.h"

namespace seam {
namespace {

absl::StatusOr<Shape> Shape_(const std::string& text) {
  SourceFile file("t", text);
  Scanner scanner(file, 0, text.size());
  return ParseShape(scanner);
}

std::string RoundTripShape(const std::string& text) {
  absl::StatusOr<Shape> shape = Shape_(text);
  return shape.ok() ? shape->ToString() : std::string(shape.status().message());
}

TEST(ShapeText, PrintsWhatItParses) {
  for (const char* text :
       {"f32[]", "f32[2,3]{1,0}", "bf16[1,4096,768]{2,1,0}", "s32[<=4,3]",
        "f32[?,3]", "f32[8,128]{1,0:T(8,128)}", "f32[2]{0:T(2)S(1)}", "token[]",
        "()", "(f32[], s32[4]{0})", "pred[0]", "f8e4m3fn[16]", "c64[2]"}) {
    EXPECT_EQ(RoundTripShape(text), text);
  }
}

TEST(ShapeText, LongTuplesCarryIndexComments) {
  EXPECT_EQ(RoundTripShape("(f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[])"),
            "(f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[])");
  EXPECT_EQ(RoundTripShape("(f32[], f32[], f32[], f32[], f32[], f32[])"),
            "(f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[])");
}

TEST(ShapeText, RejectsMalformedShapes) {
  EXPECT_FALSE(Shape_("f33[2]").ok());
  EXPECT_FALSE(Shape_("f32[2,x]").ok());
  EXPECT_FALSE(Shape_("f32[-2]").ok());
  EXPECT_FALSE(Shape_("f32[2,3]{0,0}").ok());
  EXPECT_FALSE(Shape_("f32[2,3]{1}").ok());
  EXPECT_FALSE(Shape_("(f32[], s32[]").ok());
  absl::StatusOr<Shape> bad = Shape_("f32[2,x]");
  std::optional<SourceLocation> where = ErrorLocation(bad.status());
  ASSERT_TRUE(where.has_value());
  EXPECT_EQ(where->column, 7);
}

TEST(ShapeText, DimensionSizesAreExact64BitIntegers) {
  EXPECT_EQ(RoundTripShape("s32[123456789012345678]"), "s32[123456789012345678]");
  EXPECT_EQ(RoundTripShape("u8[9223372036854775807]"), "u8[9223372036854775807]");
  EXPECT_EQ(RoundTripShape("u8[0009223372036854775807]"), "u8[9223372036854775807]");
  // Four bytes each: more than 2^63 bytes in all.
  EXPECT_EQ(RoundTripShape("s32[9223372036854775807]"),
            "shape s32[9223372036854775807] holds more than 2^63 bytes");
  EXPECT_EQ(RoundTripShape("s32[9223372036854775808]"),
            "'9223372036854775808' is out of range for a dimension size");
  EXPECT_EQ(RoundTripShape("f32[2]{+0}"), "f32[2]{0}");
}

std::string RoundTripLiteral(const std::string& shape_text, const std::string& text) {
  absl::StatusOr<Shape> shape = Shape_(shape_text);
  EXPECT_TRUE(shape.ok());
  SourceFile file("t", text);
  Scanner scanner(file, 0, text.size());
  absl::StatusOr<Literal> literal = ParseLiteral(scanner, *shape);
  if (!literal.ok()) return "error: " + std::string(literal.status().message());
  return PrintLiteral(*literal);
}

TEST(LiteralText, ScalarsAndSpecialValues) {
  EXPECT_EQ(RoundTripLiteral("f32[]", "0"), "0");
  EXPECT_EQ(RoundTripLiteral("f32[]", "-0"), "-0");
  EXPECT_EQ(RoundTripLiteral("f32[]", "1e-05"), "1e-05");
  EXPECT_EQ(RoundTripLiteral("f32[]", "-inf"), "-inf");
  EXPECT_EQ(RoundTripLiteral("f32[]", "nan"), "nan");
  EXPECT_EQ(RoundTripLiteral("f64[]", "0.1"), "0.1");
  EXPECT_EQ(RoundTripLiteral("pred[]", "true"), "true");
  EXPECT_EQ(RoundTripLiteral("s32[]", "-2147483648"), "-2147483648");
  EXPECT_EQ(RoundTripLiteral("u64[]", "18446744073709551615"), "18446744073709551615");
  EXPECT_EQ(RoundTripLiteral("c64[]", "(1, -2.5)"), "(1, -2.5)");
}

TEST(LiteralText, HalfPrecisionRoundsToNearestEven) {
  // 1.001e-05 is not a bf16 value; it reads as the nearest one.
  // Printing picks the shortest text that reads back to the same value.
  EXPECT_EQ(RoundTripLiteral("bf16[]", "1.001e-05"), "1e-05");
  EXPECT_EQ(RoundTripLiteral("bf16[]", "0.1"), "0.1");
  EXPECT_EQ(RoundTripLiteral("bf16[]", "1.00390625"), "1");  // halfway: to even
  EXPECT_EQ(RoundTripLiteral("bf16[]", "1.01171875"), "1.016");
  EXPECT_EQ(RoundTripLiteral("f16[]", "0.1"), "0.1");
  EXPECT_EQ(RoundTripLiteral("f16[]", "65519"), "6.55e+04");  // the max, 65504
}

TEST(LiteralText, NumbersBeyondTheTypeAreErrorsButInfIsNot) {
  // A finite number that rounds to infinity in its type is an error.
  EXPECT_EQ(RoundTripLiteral("f32[]", "1e40"), "error: '1e40' is out of range for f32");
  EXPECT_EQ(RoundTripLiteral("bf16[]", "-1e40"), "error: '-1e40' is out of range for bf16");
  EXPECT_EQ(RoundTripLiteral("f16[]", "65520"), "error: '65520' is out of range for f16");
  EXPECT_EQ(RoundTripLiteral("f64[]", "1e999"), "error: '1e999' is out of range for f64");
  EXPECT_EQ(RoundTripLiteral("f32[]", "1e999"), "error: '1e999' is out of range for f32");
  EXPECT_EQ(RoundTripLiteral("c64[]", "(1, 1e39)"), "error: '1e39' is out of range for f32");
  // The largest finite values, as printed, read back; so does inf.
  EXPECT_EQ(RoundTripLiteral("f32[]", "3.4028235e+38"), "3.4028235e+38");
  EXPECT_EQ(RoundTripLiteral("bf16[]", "3.39e+38"), "3.39e+38");
  EXPECT_EQ(RoundTripLiteral("f64[]", "1.7976931348623157e+308"), "1.7976931348623157e+308");
  EXPECT_EQ(RoundTripLiteral("bf16[2]", "{inf, -inf}"), "{inf, -inf}");
  // Too small flushes to zero.
  EXPECT_EQ(RoundTripLiteral("f32[]", "1e-999"), "0");
}

TEST(LiteralText, ArraysNestPerDimension) {
  EXPECT_EQ(RoundTripLiteral("s32[3]", "{1,2, 3}"), "{1, 2, 3}");
  EXPECT_EQ(RoundTripLiteral("f32[2,2]", "{{1,2},{3,4}}"), "{ {1, 2}, {3, 4} }");
  EXPECT_EQ(RoundTripLiteral("f32[1,1]", "{ { 0 } }"), "{ {0} }");
  EXPECT_EQ(RoundTripLiteral("f32[0]", "{}"), "{}");
  EXPECT_EQ(RoundTripLiteral("f32[1000]", "{...}"), "{...}");
  EXPECT_EQ(RoundTripLiteral("(f32[], s32[2])", "(1, {2, 3})"), "(1, {2, 3})");
}

TEST(LiteralText, RejectsBadValues) {
  EXPECT_EQ(RoundTripLiteral("s32[3]", "{1, 2}").substr(0, 6), "error:");
  EXPECT_EQ(RoundTripLiteral("s32[2]", "{1, 2, 3}").substr(0, 6), "error:");
  EXPECT_EQ(RoundTripLiteral("s8[]", "128").substr(0, 6), "error:");
  EXPECT_EQ(RoundTripLiteral("u8[]", "-1").substr(0, 6), "error:");
  EXPECT_EQ(RoundTripLiteral("pred[]", "2").substr(0, 6), "error:");
  EXPECT_EQ(RoundTripLiteral("s32[]", "1.5").substr(0, 6), "error:");
  EXPECT_EQ(RoundTripLiteral("f32[]", "1.5x").substr(0, 6), "error:");
  EXPECT_EQ(RoundTripLiteral("s32[]", "0x10"), "error: malformed number '0x10'");
  EXPECT_EQ(RoundTripLiteral("f32[]", "1.2.3"), "error: malformed number '1.2.3'");
}

}  // namespace
}  // namespace seam
