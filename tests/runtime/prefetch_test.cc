// Rows asked ahead on the CPU: in a tile phase of several passes, the
// first pass after the first that computes a transcendental per element
// (a softmax's exp) prefetches, row by row, the next task's rows of what
// the passes so far read and this task's rows of what only later passes
// read. A phase without such a pass (layer norm) asks in its last pass,
// the output's, and no other, a strip of each row at a time; rows the
// threads' L2s hold together are not asked for. The last task asks for the last row again
// rather than test for it: the test made GCC copy the row loop for the
// last task with its exps scalar. Results equal the interpreter's.
#include <algorithm>
#include <string>

#include "../common/hlo_text.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "backends.h"
#include "gtest/gtest.h"

namespace seam::runtime {
namespace {

// This host with L2s of `l2_bytes` a core: rows past them are asked for.
compiler::CpuOptions WithL2(int64_t l2_bytes) {
  compiler::CpuOptions options;
  options.plan.device.onchip_bytes_per_unit = l2_bytes;
  return options;
}
const compiler::CpuOptions kSmallL2 = WithL2(64 << 10);

// The statement of `source` that starts at `at`, through its semicolon.
std::string StatementAt(const std::string& source, size_t at) {
  return source.substr(at, source.find(';', at) + 1 - at);
}

// A softmax over rows of 32 gated by the sigmoid of a second input (as
// DIEN's attention over a behaviour history): the gate is read only by the
// output pass.
constexpr char kGatedSoftmax[] = R"(HloModule gated
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[4000,32] parameter(0)
  g = f32[4000,32] parameter(1)
  ninf = f32[] constant(-inf)
  zero = f32[] constant(0)
  m = f32[4000] reduce(x, ninf), dimensions={1}, to_apply=max
  mb = f32[4000,32] broadcast(m), dimensions={0}
  d = f32[4000,32] subtract(x, mb)
  ex = f32[4000,32] exponential(d)
  s = f32[4000] reduce(ex, zero), dimensions={1}, to_apply=add
  sb = f32[4000,32] broadcast(s), dimensions={0}
  p = f32[4000,32] divide(ex, sb)
  gate = f32[4000,32] logistic(g)
  ROOT y = f32[4000,32] multiply(p, gate)
}
)";

TEST(Prefetch, TheExpPassFetchesTheNextTasksRows) {
  const std::string source = testing::CpuKernelsChecked(testing::SoftmaxText("f32", 2000, 256),
                                                        "prefetch_softmax", kSmallL2);
  const std::string kernels = source.substr(std::min(source.size(), source.find("void seam_c")));
  const size_t fetch = kernels.find("seam_prefetch(b0 + std::min<int64_t>(r + ");
  ASSERT_NE(fetch, std::string::npos) << kernels;
  // After the max's pass, in the pass that computes the exps.
  EXPECT_LT(kernels.find("reduction(max:"), fetch) << kernels;
  EXPECT_LT(fetch, kernels.find("seam_exp")) << kernels;
  EXPECT_TRUE(absl::StrContains(kernels, ", 1999) * 256, 256 * sizeof(b0[0]))")) << kernels;
}

TEST(Prefetch, TheExpPassStaysVectorizedForEveryTask) {
  const std::string source = testing::CpuKernelsChecked(testing::SoftmaxText("f32", 256, 512),
                                                        "prefetch_vectorized", kSmallL2);
  ASSERT_TRUE(absl::StrContains(source, "seam_prefetch(b0")) << source;
  EXPECT_EQ(testing::ScalarExpCalls(source, "prefetch_vectorized"), std::vector<std::string>{});
}

TEST(Prefetch, InputsOnlyLaterPassesReadComeForThisTasksRows) {
  const std::string kernels = testing::CpuKernelsChecked(kGatedSoftmax, "prefetch_gated", kSmallL2);
  EXPECT_TRUE(absl::StrContains(kernels, "seam_prefetch(b0 + std::min<int64_t>(r + ")) << kernels;
  EXPECT_TRUE(absl::StrContains(kernels, "seam_prefetch(b1 + r * 32, 32 * sizeof(b1[0]));"))
      << kernels;
}

TEST(Prefetch, PhasesWithoutATranscendentalAlongRowsFetchInTheOutputPass) {
  const std::string source =
      testing::CpuKernelsChecked(testing::LayerNormText(2000, 256), "prefetch_layer_norm",
                                 kSmallL2);
  const std::string kernels = source.substr(std::min(source.size(), source.find("void seam_c")));
  const size_t fetch = kernels.find("seam_prefetch(b0 + std::min<int64_t>(r + ");
  ASSERT_NE(fetch, std::string::npos) << kernels;
  // Once, after the statistics' passes, before the output's stores.
  EXPECT_EQ(kernels.find("seam_prefetch(b", fetch + 1), std::string::npos) << kernels;
  EXPECT_LT(kernels.rfind("reduction(+:"), fetch) << kernels;
  EXPECT_LT(fetch, kernels.find("b1[(r) * 256 + c] =")) << kernels;
}

// An output pass asks for the next rows a strip at a time: 1 KiB of each
// row before each strip of its vector loop, not a whole row at once.
TEST(Prefetch, TheOutputPassAsksAStripAtATime) {
  const std::string source =
      testing::CpuKernelsChecked(testing::LayerNormText(500, 2048), "prefetch_strips", kSmallL2);
  const std::string kernels = source.substr(std::min(source.size(), source.find("void seam_c")));
  const size_t strips = kernels.find("for (int64_t pb = c0; pb < c1; pb += 256) {");
  ASSERT_NE(strips, std::string::npos) << kernels;
  const size_t fetch = kernels.find("seam_prefetch(b0 + std::min<int64_t>(r + ");
  ASSERT_NE(fetch, std::string::npos) << kernels;
  EXPECT_TRUE(
      absl::EndsWith(StatementAt(kernels, fetch), ", 499) * 2048 + pb, 256 * sizeof(b0[0]));"))
      << kernels;
  EXPECT_LT(strips, fetch) << kernels;
  EXPECT_LT(fetch, kernels.find("for (int64_t c = pb; c < pe; ++c) {", fetch)) << kernels;
  EXPECT_EQ(kernels.find("seam_prefetch(b", fetch + 1), std::string::npos) << kernels;
}

// A kernel of one pass asks for the next task's rows, a strip at a time,
// where the pass computes a transcendental per element of bf16 rows (its
// arithmetic outlasts its memory traffic); at f32 it does not ask.
TEST(Prefetch, ATranscendentalPassOverHalfPrecisionRowsAsksAlone) {
  const std::string bf16 = testing::CpuKernelsChecked(testing::TanhGeluText("bf16", 2000, 1024),
                                                      "prefetch_gelu_bf16", kSmallL2);
  EXPECT_TRUE(absl::StrContains(bf16, "seam_prefetch(b0 + std::min<int64_t>(r + ")) << bf16;
  EXPECT_TRUE(absl::StrContains(bf16, "pb + 512);")) << bf16;
  const std::string f32 = testing::CpuKernelsChecked(testing::TanhGeluText("f32", 2000, 1024),
                                                     "prefetch_gelu_f32", kSmallL2);
  EXPECT_FALSE(absl::StrContains(f32, "seam_prefetch(b")) << f32;
}

// Rows past 16 KB are asked for by an output pass alone, a strip at a
// time, where the next task's rows fit in L2 beside the ones it reads.
TEST(Prefetch, LongRowsAreAskedForWhereTwoFitInL2) {
  const std::string fits =
      testing::CpuKernelsChecked(testing::LayerNormText(64, 8192), "prefetch_long_rows", kSmallL2);
  EXPECT_TRUE(absl::StrContains(
      fits, "seam_prefetch(b0 + std::min<int64_t>(r + 1, 63) * 8192 + pb, 256 * sizeof(b0[0]));"))
      << fits;
  const std::string does_not = testing::CpuKernelsChecked(testing::LayerNormText(64, 8192),
                                                          "prefetch_long_rows", WithL2(48 << 10));
  EXPECT_FALSE(absl::StrContains(does_not, "seam_prefetch(b")) << does_not;
}

// A pass computing exps asks for whole rows: its loop hides them.
TEST(Prefetch, TheExpPassAsksForWholeRows) {
  const std::string source = testing::CpuKernelsChecked(testing::SoftmaxText("f32", 500, 1024),
                                                        "prefetch_exp_rows", kSmallL2);
  const size_t fetch = source.find("seam_prefetch(b0 + std::min<int64_t>(r + ");
  ASSERT_NE(fetch, std::string::npos) << source;
  EXPECT_TRUE(absl::EndsWith(StatementAt(source, fetch), ", 499) * 1024, 1024 * sizeof(b0[0]));"))
      << source;
  EXPECT_FALSE(absl::StrContains(source, "pb +")) << source;
}

// A layer norm backward's phase holds column folds (scopes, not loops over
// rows) beside its row passes: its last loop over rows asks, whatever the
// stages' order (the workload's phase ends with a fold).
TEST(Prefetch, TheLastLoopOverRowsAsksBesideColumnFolds) {
  const std::string source = testing::CpuKernelsChecked(
      testing::LayerNormBackwardText("2000,256", "2000", "0", 256), "prefetch_ln_backward",
      kSmallL2);
  const std::string kernels = source.substr(std::min(source.size(), source.find("void seam_c")));
  const size_t fetch = kernels.find("seam_prefetch(b0 + std::min<int64_t>(r + ");
  ASSERT_NE(fetch, std::string::npos) << kernels;
  EXPECT_NE(kernels.find("seam_prefetch(b1 + std::min<int64_t>(r + ", fetch), std::string::npos)
      << kernels;
  EXPECT_LT(kernels.rfind("reduction(+:"), fetch) << kernels;
  const size_t output = kernels.find("b4[(r) * 256 + c] =");
  ASSERT_NE(output, std::string::npos) << kernels;
  EXPECT_LT(fetch, output) << kernels;
}

TEST(Prefetch, RowsTheL2sHoldAreNotAskedFor) {
  const std::string kernels = testing::CpuKernelsChecked(
      testing::SoftmaxText("f32", 2000, 256), "prefetch_in_l2", WithL2(int64_t{1} << 30));
  EXPECT_FALSE(absl::StrContains(kernels, "seam_prefetch(b")) << kernels;
}

}  // namespace
}  // namespace seam::runtime
