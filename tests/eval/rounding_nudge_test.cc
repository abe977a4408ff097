// The interpreter's rounding nudge (Monte Carlo arithmetic at the ulp), by
// which `seam run --verify` tells an output that amplifies rounding from a
// miscompiled one: rounded results move one ulp, exact ones do not.
#include <cmath>
#include <memory>

#include "eval_test_util.h"
#include "gtest/gtest.h"

namespace seam::evaltest {
namespace {

constexpr char kModule[] = R"(HloModule nudge

ENTRY e {
  x = f32[64] parameter(0)
  three = f32[] constant(3)
  threes = f32[64] broadcast(three), dimensions={}
  product = f32[64] multiply(x, threes)
  moved = f32[8,8] reshape(x)
  larger = f32[64] maximum(x, threes)
  ROOT out = (f32[64], f32[8,8], f32[64]) tuple(product, moved, larger)
}
)";

Literal RunNudged(std::optional<uint64_t> nudge) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(kModule, "nudge.hlo");
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return Literal(Shape::Tuple({}));
  std::vector<float> values;
  for (int i = 0; i < 64; ++i) values.push_back(0.1f * static_cast<float>(i + 1));
  std::vector<Literal> arguments;
  arguments.push_back(F32(values));
  Evaluator evaluator;
  evaluator.set_rounding_nudge(nudge);
  return Ok(evaluator.Run(**module, arguments));
}

TEST(RoundingNudge, ArithmeticMovesOneUlpAndExactOpsStay) {
  const Literal plain = RunNudged(std::nullopt);
  const Literal nudged = RunNudged(5);
  ASSERT_EQ(nudged.tuple_elements().size(), 3u);
  const Literal& product = plain.tuple_elements()[0];
  const Literal& product_nudged = nudged.tuple_elements()[0];
  for (int64_t i = 0; i < product.element_count(); ++i) {
    const float was = static_cast<float>(product.GetDouble(i));
    const float is = static_cast<float>(product_nudged.GetDouble(i));
    EXPECT_TRUE(is == std::nextafter(was, INFINITY) || is == std::nextafter(was, -INFINITY))
        << i << ": " << was << " -> " << is;
  }
  EXPECT_EQ(nudged.tuple_elements()[1].bytes(), plain.tuple_elements()[1].bytes());  // reshape
  EXPECT_EQ(nudged.tuple_elements()[2].bytes(), plain.tuple_elements()[2].bytes());  // maximum
  EXPECT_EQ(RunNudged(5).bytes(), nudged.bytes());  // the same seed, the same nudges
  EXPECT_NE(RunNudged(6).tuple_elements()[0].bytes(), product_nudged.bytes());
}

}  // namespace
}  // namespace seam::evaltest
