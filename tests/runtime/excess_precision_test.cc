// With excess precision (CpuOptions' plan.excess_precision, `seam
// run --excess-precision`), bf16/f16 arithmetic in CPU kernels keeps float
// precision, as XLA allows by default: a chain of half-typed ops inside one
// kernel rounds once, where its result is stored. Explicit converts to a
// half type still round, a half value rounds before it becomes an integer,
// and an iota's values are its type's. Without it every half-typed result
// rounds, as in the interpreter.
#include <optional>

#include "backends.h"
#include "gtest/gtest.h"
#include "seam/compiler/cpu_compiler.h"
#include "seam/fusion/strategies.h"
#include "seam/runtime/executable.h"

namespace seam::runtime {
namespace {

using fusion::Strategy;

// `text`'s module compiled for the CPU under `strategy` (with or without
// excess precision) and run on one argument of copies of `value`; nullopt
// (and the test failed) when that fails.
std::optional<Literal> RunOnCpu(const std::string& text, Strategy strategy, bool excess_precision,
                 double value) {
  std::unique_ptr<Module> module = testing::ParseFirst(text, "excess_precision");
  if (module == nullptr) return std::nullopt;
  const Shape& shape = module->entry()->parameters()[0]->shape();
  Literal argument = Literal::Uninitialized(shape);
  for (int64_t i = 0; i < shape.ElementCount(); ++i) argument.SetDouble(i, value);
  std::vector<Literal> arguments;
  arguments.push_back(std::move(argument));
  compiler::CpuOptions options;
  options.plan.strategy = strategy;
  options.plan.excess_precision = excess_precision;
  absl::StatusOr<compiler::Compiled<runtime::Executable>> executable =
      compiler::CompileForCpu(*module, options);
  EXPECT_TRUE(executable.ok()) << executable.status();
  if (!executable.ok()) return std::nullopt;
  EXPECT_GT((*executable)->stats().compiled_kernels, 0);
  absl::StatusOr<Literal> result = (*executable)->Run(arguments);
  EXPECT_TRUE(result.ok()) << result.status();
  if (!result.ok()) return std::nullopt;
  return std::move(*result);
}

// Every element of the result of `text` under each of `strategies`, on an
// argument filled with `value`, is `want`.
void ExpectEveryElement(const std::string& text, std::vector<Strategy> strategies,
                        bool excess_precision, double value, double want) {
  for (Strategy strategy : strategies) {
    std::optional<Literal> result = RunOnCpu(text, strategy, excess_precision, value);
    ASSERT_TRUE(result.has_value());
    for (int64_t i = 0; i < result->element_count(); ++i) {
      ASSERT_EQ(result->GetDouble(i), want) << "element " << i;
    }
  }
}

// 1 + 2^-9 rounds back to 1 in bf16 (8 significant bits): three such
// additions leave 1 when each rounds, 1 + 3 * 2^-9 -> 1 + 2^-7 when only the
// stored result does.
constexpr char kThreeSmallAdditions[] = R"(HloModule three_small_additions
ENTRY e {
  x = bf16[64] parameter(0)
  d = bf16[] constant(0.001953125)
  db = bf16[64] broadcast(d), dimensions={}
  a1 = bf16[64] add(x, db)
  a2 = bf16[64] add(a1, db)
  ROOT a3 = bf16[64] add(a2, db)
}
)";

TEST(ExcessPrecision, AHalfChainInOneKernelRoundsOnlyWhereStored) {
  ExpectEveryElement(kThreeSmallAdditions, {Strategy::kXla, Strategy::kStitch}, true, 1.0,
                     1.0078125);
}

// Without fusion every op is its own kernel, so every result is stored.
TEST(ExcessPrecision, OpsInSeparateKernelsRoundEachResult) {
  ExpectEveryElement(kThreeSmallAdditions, {Strategy::kNone}, true, 1.0, 1.0);
}

// Without excess precision every result rounds, as in the interpreter.
TEST(ExcessPrecision, OffEveryHalfResultRounds) {
  ExpectEveryElement(kThreeSmallAdditions, {Strategy::kNone, Strategy::kXla, Strategy::kStitch},
                     false, 1.0, 1.0);
}

TEST(ExcessPrecision, AnExplicitConvertToBf16Rounds) {
  constexpr char kRoundTrip[] = R"(HloModule round_trip
ENTRY e {
  x = f32[64] parameter(0)
  c = bf16[64] convert(x)
  ROOT y = f32[64] convert(c)
}
)";
  ExpectEveryElement(kRoundTrip, {Strategy::kNone, Strategy::kXla, Strategy::kStitch}, true,
                     1.001953125, 1.0);
}

// 256 + 1.5 is 257.5 in float and 258 in bf16 (spacing 2 there): the
// integer is 258, not the 257 truncating the float would give.
TEST(ExcessPrecision, AHalfValueRoundsBeforeBecomingAnInteger) {
  constexpr char kToInteger[] = R"(HloModule to_integer
ENTRY e {
  x = bf16[64] parameter(0)
  h = bf16[] constant(1.5)
  hb = bf16[64] broadcast(h), dimensions={}
  s = bf16[64] add(x, hb)
  ROOT i = s32[64] convert(s)
}
)";
  ExpectEveryElement(kToInteger, {Strategy::kXla, Strategy::kStitch}, true, 256.0, 258.0);
}

// bf16 counts 256, 256, 258, 260, 260...: iota's values are bf16's even
// where a float consumes them in the same kernel.
TEST(ExcessPrecision, AnIotaHoldsItsTypesValues) {
  constexpr char kIota[] = R"(HloModule iota
ENTRY e {
  x = f32[300] parameter(0)
  i = bf16[300] iota(), iota_dimension=0
  f = f32[300] convert(i)
  ROOT y = f32[300] add(f, x)
}
)";
  for (Strategy strategy : {Strategy::kXla, Strategy::kStitch}) {
    for (bool excess_precision : {false, true}) {
      std::optional<Literal> result = RunOnCpu(kIota, strategy, excess_precision, 0.0);
      ASSERT_TRUE(result.has_value());
      EXPECT_EQ(result->GetDouble(255), 255.0);
      EXPECT_EQ(result->GetDouble(257), 256.0);
      EXPECT_EQ(result->GetDouble(259), 260.0);
      EXPECT_EQ(result->GetDouble(299), 300.0);
    }
  }
}

}  // namespace
}  // namespace seam::runtime
