// Outputs past the last-level cache are written with streamed stores from
// a staged piece of a row, unless the stage writing them computes a
// transcendental per element: its plain stores drain while it computes. A
// softmax's output pass (a multiplication) streams; a tanh-GELU's pass
// stores directly. Both equal the interpreter. So does an output of an
// eighth of the cache or more from a kernel moving more than the cache
// holds (the rest of its traffic evicts it).
#include <string>

#include "../common/hlo_text.h"
#include "absl/strings/match.h"
#include "backends.h"
#include "gtest/gtest.h"

namespace seam::runtime {
namespace {

// This host with a last-level cache of `bytes` (one: every output is past it).
compiler::CpuOptions PastTheCache(int64_t bytes = 1) {
  compiler::CpuOptions options;
  options.plan.device.last_level_cache_bytes = bytes;
  return options;
}

// Two f32[2000,256] inputs (2,048,000 bytes each) added.
constexpr char kSum[] = R"(HloModule sum
ENTRY e {
  x = f32[2000,256] parameter(0)
  y = f32[2000,256] parameter(1)
  ROOT z = f32[2000,256] add(x, y)
}
)";

constexpr char kTanhGelu[] = R"(HloModule gelu
ENTRY e {
  x = f32[2000,256] parameter(0)
  half = f32[] constant(0.5)
  one = f32[] constant(1)
  c = f32[] constant(0.797884583)
  halfs = f32[2000,256] broadcast(half), dimensions={}
  ones = f32[2000,256] broadcast(one), dimensions={}
  cs = f32[2000,256] broadcast(c), dimensions={}
  u = f32[2000,256] multiply(x, cs)
  t = f32[2000,256] tanh(u)
  s = f32[2000,256] add(t, ones)
  h = f32[2000,256] multiply(x, halfs)
  ROOT y = f32[2000,256] multiply(h, s)
}
)";

TEST(StreamedOutputs, ASoftmaxsOutputPassStreams) {
  const std::string kernels = testing::CpuKernelsChecked(testing::SoftmaxText("f32", 2000, 256),
                                                         "streamed_softmax", PastTheCache());
  EXPECT_TRUE(absl::StrContains(kernels, "seam_stream_store(b1 + ")) << kernels;
}

TEST(StreamedOutputs, APassComputingATanhStoresDirectly) {
  const std::string kernels =
      testing::CpuKernelsChecked(kTanhGelu, "streamed_gelu", PastTheCache());
  EXPECT_TRUE(absl::StrContains(kernels, "seam_tanh")) << kernels;
  EXPECT_FALSE(absl::StrContains(kernels, "seam_stream_store(b")) << kernels;
}

TEST(StreamedOutputs, AnOutputTheKernelsOwnTrafficEvictsStreams) {
  // 6.1 MB moved: a 2 MB output is past a 5 MB cache, not past a 16 MB one.
  EXPECT_TRUE(absl::StrContains(
      testing::CpuKernelsChecked(kSum, "streamed_sum_5mb", PastTheCache(5'000'000)),
      "seam_stream_store(b2 + "));
  EXPECT_FALSE(absl::StrContains(
      testing::CpuKernelsChecked(kSum, "streamed_sum_16mb", PastTheCache(16'000'000)),
      "seam_stream_store(b"));
}

}  // namespace
}  // namespace seam::runtime
