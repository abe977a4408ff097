// Outputs past the last-level cache are written with streamed stores from
// a staged piece of a row, unless the stage writing them computes a
// transcendental per element: its plain stores drain while it computes. A
// softmax's output pass (a multiplication) streams; a tanh-GELU's pass
// stores directly. Both equal the interpreter.
#include <string>

#include "../common/hlo_text.h"
#include "absl/strings/match.h"
#include "backends.h"
#include "gtest/gtest.h"

namespace seam::runtime {
namespace {

// This host with a last-level cache of one byte: every output is past it.
compiler::CpuOptions PastTheCache() {
  compiler::CpuOptions options;
  options.plan.device.last_level_cache_bytes = 1;
  return options;
}

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

}  // namespace
}  // namespace seam::runtime
