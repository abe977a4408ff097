// What stays the same along a vector loop is computed once, before it: a
// row's statistics (kept in the tile by an earlier loop), a channel's
// scale in an NCHW batch norm (loaded at the row's channel, with its
// square root and division), the index arithmetic of the row. In the loop
// GCC 12 reloaded them on every vector step, redid the arithmetic on them
// there, and versioned the loop for their aliasing with its stores. A
// fold over a contiguous run of several dimensions goes along the run in
// one loop (one loop per dimension reduced its lanes at the end of every
// row), with the run's index whole. The kernels equal the interpreter. A
// name the loop's own statements declare varies along it as its variable
// does: what reads it stays in the loop.
#include <string>
#include <vector>

#include "../common/hlo_text.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "backends.h"
#include "gtest/gtest.h"
#include "seam/codegen/emit_cpu.h"
#include "seam/codegen/kernel_ir.h"
#include "seam/fusion/planner.h"

namespace seam::runtime {
namespace {

// The lines of `kernels` inside vector loops.
std::vector<std::string> VectorLoopLines(const std::string& kernels) {
  std::vector<std::string> lines;
  bool in_vector_loop = false;
  int depth = 0, loop_depth = 0;
  for (absl::string_view line : absl::StrSplit(kernels, '\n')) {
    if (absl::StrContains(line, "#pragma omp simd")) {
      in_vector_loop = true;
      loop_depth = depth;
    }
    for (char ch : line) depth += ch == '{' ? 1 : ch == '}' ? -1 : 0;
    if (in_vector_loop && depth <= loop_depth && !absl::StrContains(line, "#pragma")) {
      in_vector_loop = false;
    }
    if (in_vector_loop) lines.emplace_back(line);
  }
  return lines;
}

// A batch norm's training step over NCHW f32[n, c, h, w]: the channels'
// statistics, the normalized output through ReLU.
std::string BatchNormNchw(int64_t n, int64_t c, int64_t h, int64_t w) {
  const std::string x = absl::StrCat("f32[", n, ",", c, ",", h, ",", w, "]"),
                    ch = absl::StrCat("f32[", c, "]");
  return absl::StrCat(R"(HloModule batch_norm_nchw
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = )", x, R"( parameter(0)
  gamma = )", ch, R"( parameter(1)
  beta = )", ch, R"( parameter(2)
  zero = f32[] constant(0)
  count = f32[] constant()", n * h * w, R"()
  nb = )", ch, R"( broadcast(count), dimensions={}
  sum = )", ch, R"( reduce(x, zero), dimensions={0,2,3}, to_apply=add
  mean = )", ch, R"( divide(sum, nb)
  mb = )", x, R"( broadcast(mean), dimensions={1}
  d = )", x, R"( subtract(x, mb)
  d2 = )", x, R"( multiply(d, d)
  ss = )", ch, R"( reduce(d2, zero), dimensions={0,2,3}, to_apply=add
  var = )", ch, R"( divide(ss, nb)
  eps = f32[] constant(1e-5)
  eb = )", ch, R"( broadcast(eps), dimensions={}
  ve = )", ch, R"( add(var, eb)
  rs = )", ch, R"( rsqrt(ve)
  scale = )", ch, R"( multiply(rs, gamma)
  sb = )", x, R"( broadcast(scale), dimensions={1}
  y = )", x, R"( multiply(d, sb)
  bb = )", x, R"( broadcast(beta), dimensions={1}
  z = )", x, R"( add(y, bb)
  zb = )", x, R"( broadcast(zero), dimensions={}
  ROOT r = )", x, R"( maximum(z, zb)
}
)");
}

TEST(LoopInvariants, ALoopAlongARowReadsItsStatisticsBeforeIt) {
  const std::string kernels =
      testing::CpuKernelsChecked(testing::LayerNormText(64, 1024), "row_loads_layer_norm");
  ASSERT_TRUE(absl::StrContains(kernels, "const float inv")) << kernels;
  // Inside a vector loop no value is read from a tile at the row's index.
  for (const std::string& line : VectorLoopLines(kernels)) {
    EXPECT_FALSE(absl::StrContains(line, "= tile_") && absl::StrContains(line, "[r - r0"))
        << line << "\n" << kernels;
  }
}

TEST(LoopInvariants, AChannelsScaleIsComputedOncePerRow) {
  const std::string kernels =
      testing::CpuKernelsChecked(BatchNormNchw(4, 8, 24, 40), "loop_invariants_batch_norm");
  ASSERT_TRUE(absl::StrContains(kernels, "std::sqrt")) << kernels;
  for (const std::string& line : VectorLoopLines(kernels)) {
    // Neither the square root nor the row's channel (r / 24 % 8) per element.
    EXPECT_FALSE(absl::StrContains(line, "std::sqrt")) << line << "\n" << kernels;
    EXPECT_FALSE(absl::StrContains(line, "/ 24")) << line << "\n" << kernels;
  }
}

TEST(LoopInvariants, AFoldGoesAlongAContiguousRunInOneLoop) {
  const std::string kernels =
      testing::CpuKernelsChecked(BatchNormNchw(4, 8, 24, 40), "loop_invariants_fold_runs");
  // A channel's run of 24 x 40 elements in each image, its index whole.
  EXPECT_TRUE(absl::StrContains(kernels, "for (int64_t i = 0; i < 960; ++i) {")) << kernels;
  EXPECT_TRUE(absl::StrContains(kernels, "b0[(o) * 7680 + (p) * 960 + i]")) << kernels;
  for (const std::string& line : VectorLoopLines(kernels)) {
    EXPECT_FALSE(absl::StrContains(line, "% 40")) << line << "\n" << kernels;
  }
}

// The innermost vector loop of `body`, if any.
codegen::Loop* InnermostVectorLoop(codegen::Body& body) {
  for (codegen::Node& n : body) {
    if (auto* loop = std::get_if<codegen::Loop>(&n.node)) {
      if (codegen::Loop* deeper = InnermostVectorLoop(loop->body)) return deeper;
      if (loop->role == codegen::LoopRole::kSimd) return loop;
    } else if (auto* scope = std::get_if<codegen::Scope>(&n.node)) {
      if (codegen::Loop* deeper = InnermostVectorLoop(scope->body)) return deeper;
    }
  }
  return nullptr;
}

// An elementwise row's loop given a statement of its own that declares
// the column it computes at (as a fold's lanes declare theirs): the load
// at that column is not taken for an invariant of the loop.
TEST(LoopInvariants, ANameTheLoopDeclaresVariesAlongIt) {
  std::unique_ptr<Module> module = testing::ParseFirst(R"(HloModule m
ENTRY e {
  x = f32[64,256] parameter(0)
  s = f32[64] parameter(1)
  sb = f32[64,256] broadcast(s), dimensions={0}
  ROOT y = f32[64,256] add(x, sb)
}
)",
                                                       "m");
  ASSERT_NE(module, nullptr);
  fusion::PlanOptions options;
  options.device = target::HostCpuSpec();
  absl::StatusOr<fusion::FusionPlan> plan = fusion::PlanModule(*module, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->computations[0].kernels.size(), 1u);
  absl::StatusOr<codegen::KernelIr> ir =
      codegen::LowerKernel(plan->computations[0].kernels[0], options.device, "k");
  ASSERT_TRUE(ir.ok()) << ir.status();
  ASSERT_TRUE(codegen::ScheduleKernel(*ir, options.device).ok());
  codegen::Loop* along = InnermostVectorLoop(ir->nest);
  ASSERT_NE(along, nullptr);
  bool moved = false;
  for (codegen::Node& n : along->body) {
    auto* compute = std::get_if<codegen::Compute>(&n.node);
    if (compute == nullptr) continue;
    for (codegen::IndexPart& part : compute->index) {
      if (part.var == along->var) part.var = "column", moved = true;
    }
  }
  ASSERT_TRUE(moved);
  along->body.insert(along->body.begin(),
                     {codegen::Statement{absl::StrCat("const int64_t column = ", along->var, ";")}});
  absl::StatusOr<std::string> source = codegen::EmitCpuKernel(*ir);
  ASSERT_TRUE(source.ok()) << source.status();
  const size_t load = source->find("[(r) * 256 + column]");
  ASSERT_NE(load, std::string::npos) << *source;
  EXPECT_LT(source->find("#pragma omp simd"), load) << *source;
  EXPECT_LT(source->find("const int64_t column = "), load) << *source;
}

}  // namespace
}  // namespace seam::runtime
