// The CUDA emulator (`--backend=cuda-sim`) can fail: kernels Seam emits,
// broken on purpose the ways CUDA kernels break (a barrier dropped or
// taken by only some threads, an index shifted by one, a shuffle with a
// partial mask or reached by only some lanes, a grid barrier dropped or
// launched without a cooperative launch, a launch beyond the target's
// limits), must each fail the run with the emulator's error naming the
// kernel, the block, the thread and the line of the .cu. Unbroken, the same
// kernels match the interpreter, under each thread mapping the planner
// chooses. Skips where NVRTC is missing.
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "backends.h"
#include "gtest/gtest.h"
#include "seam/compiler/cuda_compiler.h"
#include "seam/eval/arguments.h"
#include "seam/fusion/plan_printer.h"
#include "seam/runtime/cuda_executable.h"
#include "seam/runtime/nvrtc.h"

namespace seam::runtime {
using compiler::CudaProgram;
namespace {

// Softmax over rows of `columns`: under stitch one kernel whose stages
// share tile buffers across a block's threads, rows wider than a warp
// reduced across warps through shared memory.
std::string Softmax(int64_t rows, int64_t columns) {
  const std::string matrix = absl::StrCat("f32[", rows, ",", columns, "]");
  const std::string vector = absl::StrCat("f32[", rows, "]");
  return absl::StrCat(R"(
HloModule softmax
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = )", matrix, R"( parameter(0)
  ninf = f32[] constant(-inf)
  m = )", vector, R"( reduce(p, ninf), dimensions={1}, to_apply=max
  mb = )", matrix, R"( broadcast(m), dimensions={0}
  d = )", matrix, R"( subtract(p, mb)
  x = )", matrix, R"( exponential(d)
  z = f32[] constant(0)
  s = )", vector, R"( reduce(x, z), dimensions={1}, to_apply=add
  sb = )", matrix, R"( broadcast(s), dimensions={0}
  ROOT r = )", matrix, R"( divide(x, sb)
}
)");
}

const std::string kSoftmax = Softmax(64, 1024);

// Column sums of a tall matrix: per-block partial sums, a grid barrier,
// then each column's partials combined.
const std::string kColumnSums = R"(
HloModule column_sums
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[16384,128] parameter(0)
  z = f32[] constant(0)
  ROOT s = f32[128] reduce(p, z), dimensions={0}, to_apply=add
}
)";

// Normalizes rows of `dims` (RxC): row sums, then each element divided by
// its row's.
std::string RowNormalize(int64_t rows, int64_t columns) {
  return absl::StrCat(R"(
HloModule row_normalize
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[)",
                      rows, ",", columns, R"(] parameter(0)
  z = f32[] constant(0)
  s = f32[)",
                      rows, R"(] reduce(p, z), dimensions={1}, to_apply=add
  sb = f32[)",
                      rows, ",", columns, R"(] broadcast(s), dimensions={0}
  ROOT r = f32[)",
                      rows, ",", columns, R"(] divide(p, sb)
}
)");
}

using Rewrite = std::function<void(CudaProgram&)>;

class CudaSim : public ::testing::Test {
 protected:
  void SetUp() override {
    if (absl::Status nvrtc = NvrtcAvailable(); !nvrtc.ok()) GTEST_SKIP() << nvrtc;
  }

  // Compiles `hlo` for the emulator, applies `rewrite`, runs it; the
  // result is also compared with the interpreter when the run succeeds.
  absl::StatusOr<Literal> Run(const std::string& hlo, const Rewrite& rewrite = nullptr) {
    module_ = testing::ParseFirst(hlo, "mutation");
    if (module_ == nullptr) return absl::InternalError("does not parse");
    compiler::CudaExecutableOptions options;
    options.emulate = true;
    options.rewrite_program = rewrite;
    absl::StatusOr<compiler::Compiled<runtime::CudaExecutable>> executable =
        compiler::CompileForCudaDevice(*module_, options);
    if (!executable.ok()) return executable.status();
    arguments_ = RandomArguments(*module_->entry(), /*seed=*/3);
    return (*executable)->Run(arguments_);
  }

  // Fails the run of `hlo` with `rewrite` must: with the emulator's error,
  // naming the kernel, block, thread and a line of the .cu, and saying
  // each of `expected`.
  void ExpectCaught(const std::string& hlo, const Rewrite& rewrite,
                    const std::vector<std::string>& expected) {
    absl::StatusOr<Literal> result = Run(hlo, rewrite);
    ASSERT_FALSE(result.ok()) << "the broken kernel ran without complaint";
    const std::string message(result.status().message());
    for (const std::string& part : {std::string("cuda-sim: kernel "), std::string(", block "),
                                    std::string(", thread "), std::string(".cu: ")}) {
      EXPECT_TRUE(absl::StrContains(message, part)) << message;
    }
    for (const std::string& part : expected)
      EXPECT_TRUE(absl::StrContains(message, part)) << message;
  }

  // How `got` differs from the interpreter's result on the last run's
  // module and arguments ("" when it does not).
  std::string DifferencesFromTheInterpreter(const Literal& got) const {
    Evaluator oracle;
    oracle.set_wide_accumulation(true);
    absl::StatusOr<Literal> want = oracle.Run(*module_, arguments_);
    if (!want.ok()) return std::string(want.status().message());
    return DescribeDifferences(got, *want, &RewriteTolerance, "the result");
  }

  std::unique_ptr<Module> module_;
  std::vector<Literal> arguments_;
};

// Replaces the first `from` in the kernels (after the prelude) with `to`;
// the test fails when there is none, so no mutation passes by missing.
Rewrite ReplaceInKernels(const std::string& from, const std::string& to) {
  return [from, to](CudaProgram& program) {
    const size_t kernels = program.source.find("extern \"C\" __global__");
    const size_t at = program.source.find(from, kernels);
    ASSERT_NE(at, std::string::npos) << "no '" << from << "' in the kernels:\n"
                                     << program.source.substr(kernels);
    program.source.replace(at, from.size(), to);
  };
}

TEST_F(CudaSim, UnbrokenKernelsMatchTheInterpreter) {
  for (const std::string& hlo : {kSoftmax, kColumnSums}) {
    absl::StatusOr<Literal> got = Run(hlo);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(DifferencesFromTheInterpreter(*got), "");
  }
}

// Each way the planner maps threads on a GPU, forced by shape, runs
// under the emulator and matches the interpreter.
TEST_F(CudaSim, EveryThreadMappingMatchesTheInterpreter) {
  struct Case {
    std::string hlo;
    std::vector<std::string> plan;  // what the plan must say it chose
  };
  const std::vector<Case> cases = {
      // Short rows: 128 rows to a block, 2 threads a row.
      {RowNormalize(8192, 24), {"pack=128rows/block"}},
      // Few long rows: each split across blocks, partial sums meeting
      // after a grid barrier, two tasks per resident block.
      {RowNormalize(16, 131072), {"split=17blocks/row", "vpack=2tasks/block", "combine: global"}},
      // Column sums: per-block partials, then a grid barrier.
      {kColumnSums, {"mapping: column", "combine: global"}},
      // Rows wider than a warp reduced across warps through shared memory.
      {kSoftmax, {"mapping: row 64x1024"}},
      // Rows whose exponentials (256 KiB a row) overflow a block's shared
      // memory: that tile is demoted to global memory.
      {Softmax(264, 65536), {"demoted: regional values need 262152 bytes per block"}},
  };
  for (const Case& c : cases) {
    module_ = testing::ParseFirst(c.hlo, "mapping");
    ASSERT_NE(module_, nullptr);
    compiler::CudaExecutableOptions options;
    options.emulate = true;
    absl::StatusOr<compiler::Compiled<runtime::CudaExecutable>> executable =
        compiler::CompileForCudaDevice(*module_, options);
    ASSERT_TRUE(executable.ok()) << executable.status();
    const std::string plan = fusion::PlanToText(executable->plan);
    for (const std::string& part : c.plan) EXPECT_TRUE(absl::StrContains(plan, part)) << plan;
    arguments_ = RandomArguments(*module_->entry(), /*seed=*/5);
    absl::StatusOr<Literal> got = (*executable)->Run(arguments_);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(DifferencesFromTheInterpreter(*got), "") << plan;
  }
}

TEST_F(CudaSim, DroppedBarrierIsARace) {
  // The barrier after the first stage publishes the row maxima to the
  // block's other threads.
  ExpectCaught(
      kSoftmax, ReplaceInKernels("\n      __syncthreads();\n", "\n"),
      {"read of an element thread 0 of block 0 wrote, with no barrier between", "shared memory"});
}

TEST_F(CudaSim, DroppedBarrierOfTheCrossWarpCombineIsCaught) {
  // Warp 0 reads warp 1's partial row maximum before warp 1 wrote it.
  ExpectCaught(kSoftmax, ReplaceInKernels("\n        __syncthreads();\n", "\n"),
               {"read of an element nothing wrote", "shared memory"});
}

TEST_F(CudaSim, BarrierInDivergentCodeIsCaught) {
  // The second warp leaves before the barrier that ends a task.
  ExpectCaught(
      kSoftmax,
      ReplaceInKernels("\n      __syncthreads();\n    }\n",
                       "\n      if (threadIdx.x < 32) __syncthreads(); else return;\n    }\n"),
      {"__syncthreads() is not reached by every thread of the block: thread 32 has exited",
       "divergent"});
}

TEST_F(CudaSim, IndexShiftedByOneIsOutOfBounds) {
  ExpectCaught(kSoftmax, ReplaceInKernels("b0[(r) * 1024 + c]", "b0[(r) * 1024 + c + 1]"),
               {"out-of-bounds read of b0: element 65536 of 65536"});
}

TEST_F(CudaSim, ShuffleWithAPartialMaskIsCaught) {
  ExpectCaught(
      kSoftmax,
      ReplaceInKernels("seam_fold_lanes(acc0",
                       "acc0 = __shfl_xor_sync(0x0000ffffu, acc0, 1); seam_fold_lanes(acc0"),
      {"a shuffle whose mask 0xffff leaves out the calling lane 16"});
}

TEST_F(CudaSim, ShuffleSomeLanesSkipIsCaught) {
  ExpectCaught(
      kSoftmax,
      ReplaceInKernels(
          "seam_fold_lanes(acc0",
          "if (lane % 32 < 16) acc0 = __shfl_xor_sync(0xffffffffu, acc0, 1); seam_fold_lanes(acc0"),
      {"a shuffle with mask 0xffffffff is not reached by lane 16 of the warp"});
}

TEST_F(CudaSim, DroppedGridBarrierIsCaught) {
  // Each column's partials are combined before the other blocks wrote them.
  ExpectCaught(kColumnSums, ReplaceInKernels("  seam_grid.sync();\n", ""),
               {"read of an element nothing wrote"});
}

TEST_F(CudaSim, GridBarrierNeedsACooperativeLaunch) {
  ExpectCaught(kColumnSums,
               [](CudaProgram& program) {
                 for (codegen::CudaKernel& k : program.kernels) k.grid_barriers = false;
               },
               {"grid.sync() in a launch that is not cooperative"});
}

TEST_F(CudaSim, LaunchBeyondTheTargetIsRefused) {
  struct Case {
    Rewrite rewrite;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {[](CudaProgram& p) { p.kernels[0].shared_bytes = 300 << 10; },
       "bytes of shared memory, a block of the target has 232448"},
      {[](CudaProgram& p) { p.kernels[0].threads = 2048; },
       "a block of the target has at most 1024 threads"},
      {[](CudaProgram& p) { p.resources[0].used.registers = 1100; }, "1100 registers a thread"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Literal> result = Run(kSoftmax, c.rewrite);
    ASSERT_FALSE(result.ok()) << c.expected;
    EXPECT_TRUE(absl::StrContains(result.status().message(), c.expected)) << result.status();
  }
}

}  // namespace
}  // namespace seam::runtime
