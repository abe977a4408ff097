// Channel strips on the CPU: a kernel whose sums fold the dimensions
// around the kept ones (an NCHW batch norm: kept C, folded N, H, W) and
// whose other passes run over the same space or over the channels runs as
// one parallel loop over the channels, each task folding its channel's
// runs, combining them and running the passes on them, when the input is
// too large for the last-level cache to hold between phases and a
// channel's runs fit in L2. A read at another channel (a reverse), a fold
// with no pass after it, an input the cache holds and a channel too large
// for L2 keep the phases. The results equal the interpreter's, with runs
// that are no multiple of a vector.
#include <algorithm>
#include <string>

#include "../common/hlo_text.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "backends.h"
#include "gtest/gtest.h"

namespace seam::runtime {
namespace {

// Planned for two cores of `l2_bytes` of L2 sharing `cache_bytes` of L3.
compiler::CpuOptions WithCaches(int64_t cache_bytes, int64_t l2_bytes = int64_t{1} << 20) {
  compiler::CpuOptions options;
  options.plan.device.units = 2;
  options.plan.device.onchip_bytes_per_unit = l2_bytes;
  options.plan.device.last_level_cache_bytes = cache_bytes;
  return options;
}

// A training-mode batch norm over `type`[dims] (NCHW, `count` = N*H*W, statistics in
// f32 over N, H, W) as JAX writes it, with ReLU, and the running mean's
// update as a second output. `spread` spells how a channel's value reaches
// every position: "broadcast" (dimensions={1}), "reshaped" (through
// [1,10,1,1] first, as JAX writes mean[None, :, None, None]), or
// "reversed" (the channels of the centre read back to front).
std::string BatchNormNchw(const std::string& type, const std::string& spread,
                          const std::string& dims = "3,10,7,9", int64_t count = 189) {
  const std::string wide = absl::StrCat("f32[", dims, "]");
  std::string text = R"(HloModule channel_strips
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = T[3,10,7,9] parameter(0)
  gamma = f32[10] parameter(1)
  running = f32[10] parameter(2)
  xf = W convert(x)
  zero = f32[] constant(0)
  n = f32[] constant(189)
  nb = f32[10] broadcast(n), dimensions={}
  sum = f32[10] reduce(xf, zero), dimensions={0,2,3}, to_apply=add
  mean = f32[10] divide(sum, nb)
  SPREAD
  d = W subtract(xf, mb)
  d2 = W multiply(d, d)
  ss = f32[10] reduce(d2, zero), dimensions={0,2,3}, to_apply=add
  var = f32[10] divide(ss, nb)
  eps = f32[] constant(1e-5)
  eb = f32[10] broadcast(eps), dimensions={}
  ve = f32[10] add(var, eb)
  rs = f32[10] rsqrt(ve)
  scale = f32[10] multiply(rs, gamma)
  sb = W broadcast(scale), dimensions={1}
  z = W multiply(d, sb)
  zeros = W broadcast(zero), dimensions={}
  relu = W maximum(z, zeros)
  y = T[3,10,7,9] convert(relu)
  m = f32[] constant(0.9)
  mbs = f32[10] broadcast(m), dimensions={}
  kept = f32[10] multiply(running, mbs)
  new_running = f32[10] add(kept, mean)
  ROOT out = (T[3,10,7,9], f32[10]) tuple(y, new_running)
}
)";
  const std::string spreads =
      spread == "reshaped"
          ? "m4 = f32[1,10,1,1] reshape(mean)\n  m4b = f32[1,10,1,1] broadcast(m4), "
            "dimensions={0,1,2,3}\n  m1 = f32[10] reshape(m4b)\n  mb = W broadcast(m1), "
            "dimensions={1}"
      : spread == "reversed"
          ? "rm = f32[10] reverse(mean), dimensions={0}\n  mb = W broadcast(rm), dimensions={1}"
          : "mb = W broadcast(mean), dimensions={1}";
  text = absl::StrReplaceAll(text, {{"SPREAD", spreads}});
  return absl::StrReplaceAll(text, {{"T[3,10,7,9]", absl::StrCat(type, "[", dims, "]")},
                                    {"W ", wide + " "},
                                    {"constant(189)", absl::StrCat("constant(", count, ")")}});
}

// The kernels' loops over tasks, on the pool or (too little work to
// split) not; the prelude's own definitions left out.
int TaskLoops(const std::string& source) {
  const std::string kernels = source.substr(std::min(source.size(), source.find("void seam_c")));
  int loops = 0;
  for (const std::string loop : {"seam_parallel(seam_threads", "seam_serial("}) {
    for (size_t at = kernels.find(loop); at != std::string::npos; at = kernels.find(loop, at + 1)) {
      ++loops;
    }
  }
  return loops;
}

// Whether the kernels run as one loop over channels, a task a channel.
bool InChannelStrips(const std::string& kernels) {
  return absl::StrContains(kernels, "const int64_t p = task;");
}

TEST(ChannelStrips, StatisticsAndOutputRunInOneLoopOverChannels) {
  for (const std::string spread : {"broadcast", "reshaped"}) {
    SCOPED_TRACE(spread);
    const std::string kernels = testing::CpuKernelsChecked(
        BatchNormNchw("f32", spread), "channel_strips_" + spread, WithCaches(1 << 10));
    EXPECT_TRUE(InChannelStrips(kernels)) << kernels;
    // Every run of the channel: the fold, then the output over the same runs.
    EXPECT_TRUE(absl::StrContains(kernels, "b0[(o) * 630 + (p) * 63 + i]")) << kernels;
    EXPECT_TRUE(absl::StrContains(kernels, "b0[(o) * 630 + (p) * 63 + c]")) << kernels;
    EXPECT_EQ(TaskLoops(kernels), 1) << kernels;
  }
}

// Where the plan folds the sum of squared deviations in the mean's pass
// (its input past the 256 KiB of L3, runs within half a block's 64 KiB),
// the channel's task combines the runs' statistics with its own mean.
TEST(ChannelStrips, OnePassStatisticsFoldInTheChannelsPass) {
  compiler::CpuOptions options = WithCaches(256 << 10);
  options.plan.device.onchip_bytes_per_block = 64 << 10;
  const std::string kernels =
      testing::CpuKernelsChecked(BatchNormNchw("f32", "broadcast", "4,10,56,56", 4 * 56 * 56),
                                 "channel_strips_one_pass", options);
  EXPECT_TRUE(absl::StrContains(kernels, "seam_moments moments")) << kernels;
  EXPECT_TRUE(InChannelStrips(kernels)) << kernels;
  EXPECT_EQ(TaskLoops(kernels), 1) << kernels;
}

TEST(ChannelStrips, HalfTypesEqualTheInterpreter) {
  const std::string kernels = testing::CpuKernelsChecked(
      BatchNormNchw("bf16", "broadcast"), "channel_strips_bf16", WithCaches(1 << 10));
  EXPECT_TRUE(InChannelStrips(kernels)) << kernels;
}

TEST(ChannelStrips, AReadAtAnotherChannelKeepsThePhases) {
  const std::string kernels = testing::CpuKernelsChecked(
      BatchNormNchw("f32", "reversed"), "channel_strips_reversed", WithCaches(1 << 10));
  EXPECT_FALSE(InChannelStrips(kernels)) << kernels;
}

TEST(ChannelStrips, StatisticsAloneKeepThePhases) {
  const std::string kernels =
      testing::CpuKernelsChecked(testing::Bf16BatchStatisticsText(3, 10, 7, 9),
                                 "channel_strips_statistics", WithCaches(1 << 10));
  EXPECT_FALSE(InChannelStrips(kernels)) << kernels;
}

TEST(ChannelStrips, AnInputTheCacheHoldsKeepsThePhases) {
  const std::string kernels = testing::CpuKernelsChecked(
      BatchNormNchw("f32", "broadcast"), "channel_strips_cached", WithCaches(1 << 20));
  EXPECT_FALSE(InChannelStrips(kernels)) << kernels;
}

TEST(ChannelStrips, AChannelLargerThanL2KeepsThePhases) {
  // A channel's runs: 3 x 63 floats, 756 bytes, past 7/8 of 512 bytes.
  const std::string kernels = testing::CpuKernelsChecked(
      BatchNormNchw("f32", "broadcast"), "channel_strips_l2", WithCaches(1 << 10, 512));
  EXPECT_FALSE(InChannelStrips(kernels)) << kernels;
}

}  // namespace
}  // namespace seam::runtime
