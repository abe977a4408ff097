// One-pass statistics on the CPU: a batch-norm variance over N, H and W of
// an NCHW activation folds its centred squares in the pass of the mean, so
// the kernel reads the input twice (statistics, output) instead of three
// times, and stays as accurate as the two-pass form on inputs built
// against one-pass formulas: large means over tiny spreads, a channel of
// one repeated value, an outlier at the start of every run.
//
// The bound: the sum of squared deviations is within 1e-5 of the exact
// one (in double, from the same f32 inputs, about the kernel's own f32
// mean), plus n ulp(mean)^2, the noise of a mean rounded to f32.
#include <cmath>
#include <filesystem>
#include <random>

#include "../common/hlo_text.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "backends.h"
#include "gtest/gtest.h"
#include "seam/compiler/cpu_compiler.h"
#include "seam/eval/arguments.h"
#include "seam/eval/compare.h"
#include "seam/eval/evaluator.h"
#include "seam/runtime/executable.h"

namespace seam::runtime {
namespace {

// Mean and variance of x over every dimension but 1 (channels), the
// variance two-pass as batch norm and jnp.var write it, and x normalised.
std::string BatchNormStatistics(int64_t n, int64_t c, int64_t h, int64_t w) {
  const std::string x = absl::StrCat("f32[", n, ",", c, ",", h, ",", w, "]");
  const std::string count = absl::StrCat(n * h * w);
  return absl::StrCat(
      "HloModule bn_stats\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
      "  ROOT s = f32[] add(a, b)\n}\n\nENTRY e {\n  x = ",
      x, " parameter(0)\n", "  zero = f32[] constant(0)\n  sum = f32[", c,
      "] reduce(x, zero), dimensions={0,2,3}, "
      "to_apply=add\n  count = f32[] constant(",
      count, ")\n  counts = f32[", c, "] broadcast(count), dimensions={}\n  mean = f32[", c,
      "] divide(sum, counts)\n", "  spread = ", x,
      " broadcast(mean), dimensions={1}\n  centered = ", x, " subtract(x, spread)\n  squared = ", x,
      " multiply(centered, centered)\n", "  squares = f32[", c,
      "] reduce(squared, zero), dimensions={0,2,3}, to_apply=add\n", "  var = f32[", c,
      "] divide(squares, counts)\n  eps = f32[] constant(1e-5)\n", "  epss = f32[", c,
      "] broadcast(eps), dimensions={}\n  shifted = f32[", c, "] add(var, epss)\n  rstd = f32[", c,
      "] rsqrt(shifted)\n  scale = ", x, " broadcast(rstd), dimensions={1}\n  y = ", x,
      " multiply(centered, scale)\n", "  ROOT out = (", x, ", f32[", c, "], f32[", c,
      "]) tuple(y, mean, squares)\n}\n");
}

struct Channel {
  double mean = 0, spread = 1;
  bool outlier_first = false;  // every run starts 1000 spreads above the mean
};

// The channels' values: mean + spread * uniform[-1, 1), rounded to f32.
Literal Activation(const Shape& shape, const std::vector<Channel>& channels) {
  Literal x = Literal::Uninitialized(shape);
  const int64_t n = shape.dim(0), c = shape.dim(1), run = shape.dim(2) * shape.dim(3);
  std::mt19937 random(2026);
  std::uniform_real_distribution<double> uniform(-1, 1);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t k = 0; k < c; ++k) {
      const Channel& ch = channels[k];
      for (int64_t e = 0; e < run; ++e) {
        double v = ch.mean + ch.spread * uniform(random);
        if (ch.outlier_first && e == 0) v = ch.mean + 1000 * ch.spread;
        x.SetDouble((i * c + k) * run + e, static_cast<float>(v));
      }
    }
  }
  return x;
}

const std::vector<Channel> kAdversarial = {
    {0, 1}, {1e4, 1},    {1e3, 1e-2},  {-3e3, 1e-1},
    {5, 0}, {1e2, 1e-3}, {1, 1, true}, {1e4, 1e-1, true},
};

struct Compiled {
  Literal result;
  std::string source;
};

Compiled CompileAndRun(const Module& module, const Literal& x, bool one_pass,
                       const std::string& dump, bool channel_strips = false) {
  compiler::CpuOptions options;
  options.plan.one_pass_statistics = one_pass;
  // Caches smaller than x (512 KiB): a second read of it goes to memory,
  // which the fold saves. A core's L2 too small for a channel's runs (64
  // KiB) keeps the phases; one of 1 MiB holds them (channel strips).
  options.plan.device.onchip_bytes_per_block = 64 << 10;
  options.plan.device.onchip_bytes_per_unit = channel_strips ? 1 << 20 : 64 << 10;
  options.plan.device.last_level_cache_bytes = 256 << 10;
  options.dump_to = dump;
  absl::StatusOr<compiler::Compiled<runtime::Executable>> executable =
      compiler::CompileForCpu(module, options);
  EXPECT_TRUE(executable.ok()) << executable.status();
  std::vector<Literal> arguments;
  arguments.push_back(x);
  absl::StatusOr<Literal> result = (*executable)->Run(arguments);
  EXPECT_TRUE(result.ok()) << result.status();
  return {*std::move(result), testing::ReadFile(dump + "/kernels.cc")};
}

// How many parallel loops of the kernel read buffer 0, the input.
int LoopsReadingTheInput(const std::string& source) {
  int loops = 0;
  for (absl::string_view loop : absl::StrSplit(source, "seam_parallel(")) {
    loops += loop.find("b0[") != absl::string_view::npos &&
             loop.find("seam_pool") == absl::string_view::npos;
  }
  return loops;
}

void ExpectAccurateStatistics(int64_t n, int64_t h, int64_t w) {
  const int64_t c = static_cast<int64_t>(kAdversarial.size());
  std::unique_ptr<Module> module = testing::ParseFirst(BatchNormStatistics(n, c, h, w), "bn");
  ASSERT_NE(module, nullptr);
  const Literal x = Activation(module->entry()->parameters()[0]->shape(), kAdversarial);
  const std::string dir = ::testing::TempDir() + absl::StrCat("/seam_one_pass_", n, "_", h);
  const Compiled one = CompileAndRun(*module, x, true, dir + "_on");
  const Compiled two = CompileAndRun(*module, x, false, dir + "_off");
  const Compiled strips = CompileAndRun(*module, x, true, dir + "_strips", true);
  EXPECT_EQ(LoopsReadingTheInput(one.source), 2) << "statistics, then output";
  EXPECT_EQ(LoopsReadingTheInput(two.source), 3) << "mean, squares, output";
  EXPECT_EQ(LoopsReadingTheInput(strips.source), 1) << "a loop over channels";

  const int64_t run = h * w, count = n * run;
  for (int64_t k = 0; k < c; ++k) {
    for (const Compiled* compiled : {&one, &two, &strips}) {
      const Literal& mean = compiled->result.tuple_elements()[1];
      const Literal& squares = compiled->result.tuple_elements()[2];
      const double m = mean.GetDouble(k);
      double exact = 0;
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t e = 0; e < run; ++e) {
          const double d = x.GetDouble((i * c + k) * run + e) - m;
          exact += d * d;
        }
      }
      const double ulp = std::abs(m) > 0 ? std::ldexp(1.0, std::ilogb(std::abs(m)) - 23) : 0;
      const double allowed = 1e-5 * exact + static_cast<double>(count) * ulp * ulp;
      EXPECT_LE(std::abs(squares.GetDouble(k) - exact), allowed)
          << (compiled == &one   ? "one pass"
              : compiled == &two ? "two passes"
                                 : "channel strips")
          << ", channel " << k << " (mean " << kAdversarial[k].mean << ", spread "
          << kAdversarial[k].spread << "): " << squares.GetDouble(k) << " against " << exact;
    }
  }
  // The statistics within --verify's tolerance of the oracle's. (The
  // normalised values are not compared with it: on these inputs they move
  // by 10x that tolerance when the mean moves by an ulp, as it does with
  // the order of the sum, whatever the form of the variance.)
  Evaluator oracle;
  oracle.set_wide_accumulation(true);
  std::vector<Literal> arguments;
  arguments.push_back(x);
  absl::StatusOr<Literal> want = oracle.Run(*module, arguments);
  ASSERT_TRUE(want.ok()) << want.status();
  for (int k : {1, 2}) {
    EXPECT_EQ(DescribeDifferences(one.result.tuple_elements()[k], want->tuple_elements()[k],
                                  &RewriteTolerance, absl::StrCat("out{", k, "}")),
              "");
  }
  // And the normalised values within it of the two-pass form's, which
  // shares the kernel's mean.
  // (Not the channel strips', which sum a channel's runs in another order.)
  EXPECT_EQ(DescribeDifferences(one.result, two.result, &RewriteTolerance, "out"), "");
}

TEST(OnePassStatistics, AChunkOfOneRun) { ExpectAccurateStatistics(8, 32, 64); }

TEST(OnePassStatistics, ChunksOfSeveralRuns) { ExpectAccurateStatistics(256, 4, 16); }

// `module` compiled for a CPU whose caches are smaller than its input
// (excess precision on): one loop reads the input, and the results agree
// with the interpreter's two passes (summed in double).
void ExpectOneReadLikeTheInterpreter(const Module& module, uint64_t seed, const std::string& dump) {
  const std::vector<Literal> arguments = RandomArguments(*module.entry(), seed);
  compiler::CpuOptions options;
  options.plan.excess_precision = true;
  options.plan.device.onchip_bytes_per_block = 64 << 10;
  options.plan.device.last_level_cache_bytes = 256 << 10;
  options.dump_to = ::testing::TempDir() + "/" + dump;
  absl::StatusOr<compiler::Compiled<runtime::Executable>> executable =
      compiler::CompileForCpu(module, options);
  ASSERT_TRUE(executable.ok()) << executable.status();
  absl::StatusOr<Literal> got = (*executable)->Run(arguments);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(LoopsReadingTheInput(testing::ReadFile(options.dump_to + "/kernels.cc")), 1);
  Evaluator oracle;
  oracle.set_wide_accumulation(true);
  absl::StatusOr<Literal> want = oracle.Run(module, arguments);
  ASSERT_TRUE(want.ok()) << want.status();
  EXPECT_EQ(DescribeDifferences(*got, *want, &RewriteTolerance, "out"), "");
}

// Deviations of other values than the ones the earlier reduction sums
// (here from a centre that is not their mean) sum those values in the same
// pass.
TEST(OnePassStatistics, DeviationsOfOtherValuesFromAnyCentre) {
  std::unique_ptr<Module> module = testing::ParseFirst(R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[8,8,32,64] parameter(0)
  z = f32[8,8,32,64] parameter(1)
  zero = f32[] constant(0)
  sum = f32[8] reduce(x, zero), dimensions={0,2,3}, to_apply=add
  spread = f32[8,8,32,64] broadcast(sum), dimensions={1}
  y = f32[8,8,32,64] multiply(x, z)
  centered = f32[8,8,32,64] subtract(spread, y)
  squared = f32[8,8,32,64] multiply(centered, centered)
  init = f32[] constant(1)
  squares = f32[8] reduce(squared, init), dimensions={0,2,3}, to_apply=add
  ROOT out = (f32[8], f32[8]) tuple(sum, squares)
}
)",
                                                       "m");
  ASSERT_NE(module, nullptr);
  ExpectOneReadLikeTheInterpreter(*module, /*seed=*/3, "seam_one_pass_other_values");
}

// A bf16 activation's statistics as JAX writes them (sums in f32 of
// converted bf16 values, the mean rounded to bf16 before it centres x):
// with excess precision the squares fold in the mean's pass, around the
// rounded mean, and agree with the interpreter's two passes.
TEST(OnePassStatistics, Bf16StatisticsAroundTheRoundedMean) {
  std::unique_ptr<Module> module =
      testing::ParseFirst(testing::Bf16BatchStatisticsText(8, 8, 32, 64), "m");
  ASSERT_NE(module, nullptr);
  ExpectOneReadLikeTheInterpreter(*module, /*seed=*/4, "seam_one_pass_bf16");
}

}  // namespace
}  // namespace seam::runtime
