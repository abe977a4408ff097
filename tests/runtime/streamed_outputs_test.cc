// Outputs past the last-level cache are written with streamed stores from
// a staged piece of a row, unless the stage writing them computes a
// transcendental per element along long rows: its plain stores drain while
// it computes. A softmax's output pass (a multiplication) streams; a
// tanh-GELU's pass over rows of 256 stores directly, over rows of 64 (a
// few lines streamed at a time) streams. All equal the interpreter. So does an output of an
// eighth of the cache or more from a kernel moving more than the cache
// holds (the rest of its traffic evicts it), a sibling of another shape
// merged into a stage (its elements at the stage's linear positions), and
// the values a row reduction's pass writes beside its sums, outputs and
// scratch alike.
#include <string>

#include "../common/hlo_text.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
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

// Two sums of as many elements in other shapes, both reading x (as an
// optimizer's update reads a [1024,4096] tensor and one of its views as
// [4096,1024]): siblings, one stage.
constexpr char kSiblingSums[] = R"(HloModule siblings
ENTRY e {
  x = f32[2000,256] parameter(0)
  y = f32[2000,256] parameter(1)
  a = f32[256,2000] parameter(2)
  z = f32[2000,256] add(x, y)
  xr = f32[256,2000] reshape(x)
  c = f32[256,2000] add(xr, a)
  ROOT t = (f32[2000,256], f32[256,2000]) tuple(z, c)
}
)";

// LAMB's shape in small: an update `u` and its norm in one pass over the
// rows (with `d`, an output, beside them), the norm's total after a
// barrier, then w = x - norm * u reading `u` back from scratch.
constexpr char kScaledByItsNorm[] = R"(HloModule scaled
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[2000,256] parameter(0)
  y = f32[2000,256] parameter(1)
  m = f32[2000,256] parameter(2)
  zero = f32[] constant(0)
  d = f32[2000,256] add(y, m)
  u = f32[2000,256] divide(x, d)
  sq = f32[2000,256] multiply(u, u)
  rows = f32[2000] reduce(sq, zero), dimensions={1}, to_apply=add
  total = f32[] reduce(rows, zero), dimensions={0}, to_apply=add
  norm = f32[] sqrt(total)
  norms = f32[2000,256] broadcast(norm), dimensions={}
  s = f32[2000,256] multiply(u, norms)
  w = f32[2000,256] subtract(x, s)
  ROOT t = (f32[2000,256], f32[2000,256]) tuple(d, w)
}
)";

TEST(StreamedOutputs, ASoftmaxsOutputPassStreams) {
  const std::string kernels = testing::CpuKernelsChecked(testing::SoftmaxText("f32", 2000, 256),
                                                         "streamed_softmax", PastTheCache());
  EXPECT_TRUE(absl::StrContains(kernels, "seam_stream_store(b1 + ")) << kernels;
}

TEST(StreamedOutputs, APassComputingATanhStoresDirectly) {
  const std::string kernels = testing::CpuKernelsChecked(testing::TanhGeluText("f32", 2000, 256),
                                                         "streamed_gelu", PastTheCache());
  EXPECT_TRUE(absl::StrContains(kernels, "seam_tanh")) << kernels;
  EXPECT_FALSE(absl::StrContains(kernels, "seam_stream_store(b")) << kernels;
}

TEST(StreamedOutputs, APassComputingATanhAlongShortRowsStreams) {
  const std::string kernels = testing::CpuKernelsChecked(testing::TanhGeluText("f32", 8000, 64),
                                                         "streamed_short_gelu", PastTheCache());
  EXPECT_TRUE(absl::StrContains(kernels, "seam_tanh")) << kernels;
  EXPECT_TRUE(absl::StrContains(kernels, "seam_stream_store(b1 + r * 64 + s0")) << kernels;
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

TEST(StreamedOutputs, ASiblingOfAnotherShapeStreamsBesideTheStagesOwn) {
  const std::string kernels =
      testing::CpuKernelsChecked(kSiblingSums, "streamed_siblings", PastTheCache());
  // One kernel: both outputs staged, the [256,2000] one at the [2000,256]
  // stage's linear positions.
  EXPECT_TRUE(absl::StrContains(kernels, "seam_stream_store(b3 + r * 256 + s0")) << kernels;
  EXPECT_TRUE(absl::StrContains(kernels, "seam_stream_store(b4 + r * 256 + s0")) << kernels;
}

TEST(StreamedOutputs, ARowReductionsPassStreamsTheValuesItWrites) {
  const std::string kernels =
      testing::CpuKernelsChecked(kScaledByItsNorm, "streamed_row_reduce", PastTheCache());
  // b3 is the output d, b6 the scratch u, both written beside the row sums
  // in pieces; w (b4) streams from its own pass.
  for (const char* buffer : {"b3", "b6", "b4"}) {
    const std::string store = absl::StrCat("seam_stream_store(", buffer, " + r * 256");
    EXPECT_TRUE(absl::StrContains(kernels, store)) << store << "\n" << kernels;
  }
  // The pieces keep the row sum one vector reduction, carried across them.
  EXPECT_TRUE(absl::StrContains(kernels, "#pragma omp simd reduction(+:acc0)\n")) << kernels;
}

}  // namespace
}  // namespace seam::runtime
