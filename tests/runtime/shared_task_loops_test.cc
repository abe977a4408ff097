// Phases that share a parallel loop on the CPU (no barrier between them:
// two softmaxes over different inputs) each loop over their own part of
// the tasks a thread claims, with no branch on the task: GCC's loop
// splitting copies a loop that branches on it and leaves the copy's
// `omp simd` loops scalar (LAMB's third tensor ran at a third of the
// speed). Results equal the interpreter's, a thread's claim crossing from
// one phase's tasks into the next.
#include <string>

#include "absl/strings/match.h"
#include "backends.h"
#include "gtest/gtest.h"

namespace seam::runtime {
namespace {

// Softmaxes over f32[512,512] and f32[256,1024]: two tile phases of 64
// tasks each (16 KiB of rows a task), in one parallel loop.
constexpr char kTwoSoftmaxes[] = R"(HloModule two_softmaxes
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
  x = f32[512,512] parameter(0)
  y = f32[256,1024] parameter(1)
  ninf = f32[] constant(-inf)
  zero = f32[] constant(0)
  mx = f32[512] reduce(x, ninf), dimensions={1}, to_apply=max
  mxb = f32[512,512] broadcast(mx), dimensions={0}
  dx = f32[512,512] subtract(x, mxb)
  ex = f32[512,512] exponential(dx)
  sx = f32[512] reduce(ex, zero), dimensions={1}, to_apply=add
  sxb = f32[512,512] broadcast(sx), dimensions={0}
  ox = f32[512,512] divide(ex, sxb)
  my = f32[256] reduce(y, ninf), dimensions={1}, to_apply=max
  myb = f32[256,1024] broadcast(my), dimensions={0}
  dy = f32[256,1024] subtract(y, myb)
  ey = f32[256,1024] exponential(dy)
  sy = f32[256] reduce(ey, zero), dimensions={1}, to_apply=add
  syb = f32[256,1024] broadcast(sy), dimensions={0}
  oy = f32[256,1024] divide(ey, syb)
  ROOT t = (f32[512,512], f32[256,1024]) tuple(ox, oy)
}
)";

TEST(SharedTaskLoops, EachPhaseLoopsOverItsPartOfTheClaimedTasks) {
  const std::string source = testing::CpuKernelsChecked(kTwoSoftmaxes, "shared_task_loops");
  const std::string kernels = source.substr(std::min(source.size(), source.find("void seam_c")));
  EXPECT_TRUE(absl::StrContains(kernels, "seam_parallel(seam_threads, 128,")) << kernels;
  EXPECT_TRUE(absl::StrContains(
      kernels, "for (int64_t seam_t = std::max<int64_t>(seam_begin, 0); seam_t < "
               "std::min<int64_t>(seam_end, 64); ++seam_t) {"))
      << kernels;
  EXPECT_TRUE(absl::StrContains(
      kernels, "for (int64_t seam_t = std::max<int64_t>(seam_begin, 64); seam_t < "
               "std::min<int64_t>(seam_end, 128); ++seam_t) {"))
      << kernels;
  EXPECT_FALSE(absl::StrContains(kernels, "if (seam_t <")) << kernels;
}

TEST(SharedTaskLoops, BothPhasesExpsStayVectorized) {
  const std::string source = testing::CpuKernelsChecked(kTwoSoftmaxes, "shared_task_exps");
  EXPECT_EQ(testing::ScalarExpCalls(source, "shared_task_exps"), std::vector<std::string>{});
}

}  // namespace
}  // namespace seam::runtime
