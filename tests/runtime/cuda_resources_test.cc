// Resource feedback for CUDA kernels: the ptxas report is parsed per kernel
// (no NVRTC needed); compiled kernels report registers and occupancy, and
// a kernel whose registers spill is rendered again with fewer threads
// (these need NVRTC and skip without it); kernels of hundreds of buffers
// do not spill. Identical kernels compile once.
#include <filesystem>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "seam/compiler/cpu_compiler.h"
#include "seam/compiler/cuda_compiler.h"
#include "seam/eval/arguments.h"
#include "seam/eval/compare.h"
#include "seam/eval/evaluator.h"
#include "seam/passes/pipeline.h"
#include "seam/runtime/cuda_executable.h"
#include "seam/runtime/executable.h"
#include "seam/text/parser.h"

namespace seam::runtime {
using compiler::CudaProgram;
namespace {

std::unique_ptr<Module> LoadOptimized(const std::string& file) {
  absl::StatusOr<std::vector<std::unique_ptr<Module>>> modules =
      ParseHloFile(SEAM_SOURCE_ROOT "/" + file);
  EXPECT_TRUE(modules.ok()) << modules.status();
  if (!modules.ok()) return nullptr;
  absl::StatusOr<Pipeline> pipeline = Pipeline::Parse("default");
  EXPECT_TRUE(pipeline->Run(*modules->front(), PipelineOptions{}).ok());
  return std::move(modules->front());
}

TEST(PtxasReport, ParsedPerKernel) {
  const std::string report = R"(ptxas info    : 6543 bytes gmem
ptxas info    : Compiling entry function 'seam_c0_k0' for 'sm_90'
ptxas info    : Function properties for seam_c0_k0
ptxas         .     16 bytes stack frame, 24 bytes spill stores, 20 bytes spill loads
ptxas info    : Used 64 registers, used 1 barriers, 160 bytes smem
ptxas info    : Compiling entry function 'seam_c0_k3' for 'sm_90'
ptxas info    : Function properties for seam_c0_k3
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 31 registers
)";
  absl::StatusOr<absl::flat_hash_map<std::string, target::KernelResources>> used =
      compiler::ParsePtxasReport(report);
  ASSERT_TRUE(used.ok()) << used.status();
  ASSERT_EQ(used->size(), 2u);
  const target::KernelResources& k0 = used->at("seam_c0_k0");
  EXPECT_EQ(k0.registers, 64);
  EXPECT_EQ(k0.static_shared_bytes, 160);
  EXPECT_EQ(k0.spill_bytes, 44);
  EXPECT_EQ(k0.stack_bytes, 16);
  EXPECT_EQ(used->at("seam_c0_k3").registers, 31);
  EXPECT_EQ(used->at("seam_c0_k3").spill_bytes, 0);
  EXPECT_FALSE(compiler::ParsePtxasReport("ptxas info    : 0 bytes gmem\n").ok());
}

class CudaResources : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::Status nvrtc = NvrtcAvailable();
    if (!nvrtc.ok()) GTEST_SKIP() << nvrtc.message();
  }
};

TEST_F(CudaResources, EveryKernelReportsItsOccupancyAndGrid) {
  std::unique_ptr<Module> module = LoadOptimized("bench/workloads/layernorm_backward.hlo");
  absl::StatusOr<CudaProgram> program =
      compiler::CompileForCuda(*module, fusion::Strategy::kStitch, "sm_90");
  ASSERT_TRUE(program.ok()) << program.status();
  ASSERT_EQ(program->resources.size(), program->kernels.size());
  EXPECT_TRUE(absl::StartsWith(program->cubin.cubin, "\x7f" "ELF"));  // a loadable cubin, cached
  for (size_t i = 0; i < program->kernels.size(); ++i) {
    const CudaKernelResources& r = program->resources[i];
    const codegen::CudaKernel& k = program->kernels[i];
    EXPECT_GT(r.used.registers, 0);
    EXPECT_EQ(r.used.dynamic_shared_bytes, k.shared_bytes);
    EXPECT_GE(r.resident_blocks_per_unit, 1);
    // A kernel with grid barriers launches no more blocks than are resident.
    if (k.grid_barriers) {
      EXPECT_LE(r.grid, r.resident_blocks_per_unit * target::H100Spec().units);
    }
    EXPECT_LE(r.grid, k.max_blocks);
  }
}

// 24 chained tanh row reductions over rows of 32,768 keep 24 accumulators
// live: at 512 threads (a 128-register cap) they spill; relaxed to 256
// threads they fit. The column reduction spills below its cap, which fewer
// threads would not change, so it is left as it is.
TEST_F(CudaResources, KernelsSpillingAtTheirRegisterCapAreRelaxed) {
  std::string text = "HloModule pressure\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                     "  ROOT s = f32[] add(a, b)\n}\nENTRY main {\n  x = f32[64,32768] parameter(0)\n"
                     "  zero = f32[] constant(0)\n";
  std::string outputs, types, previous = "x";
  for (int i = 0; i < 24; ++i) {
    absl::StrAppend(&text, "  c", i, " = f32[] constant(", i + 1, ".5)\n  cb", i,
                    " = f32[64,32768] broadcast(c", i, "), dimensions={}\n  m", i,
                    " = f32[64,32768] multiply(", previous, ", cb", i, ")\n  e", i,
                    " = f32[64,32768] tanh(m", i, ")\n  r", i, " = f32[64] reduce(e", i,
                    ", zero), dimensions={1}, to_apply=add\n");
    absl::StrAppend(&outputs, i ? ", " : "", "r", i);
    absl::StrAppend(&types, i ? ", " : "", "f32[64]");
    previous = absl::StrCat("e", i);
  }
  absl::StrAppend(&text, "  ROOT t = (", types, ") tuple(", outputs, ")\n}\n");
  absl::StatusOr<std::vector<std::unique_ptr<Module>>> modules = ParseHloText(text, "pressure");
  ASSERT_TRUE(modules.ok()) << modules.status();
  absl::StatusOr<CudaProgram> program =
      compiler::CompileForCuda(*modules->front(), fusion::Strategy::kStitch, "sm_90");
  ASSERT_TRUE(program.ok()) << program.status();
  ASSERT_EQ(program->relaxed.size(), 1u);
  EXPECT_TRUE(absl::StartsWith(program->relaxed[0], "seam_c0_k0: 512 -> 256 threads"))
      << program->relaxed[0];
  EXPECT_EQ(program->kernels[0].threads, 256);
  EXPECT_EQ(program->resources[0].used.spill_bytes, 0);

  std::unique_ptr<Module> column = LoadOptimized("bench/workloads/column_reduce.hlo");
  absl::StatusOr<CudaProgram> columns =
      compiler::CompileForCuda(*column, fusion::Strategy::kStitch, "sm_90");
  ASSERT_TRUE(columns.ok()) << columns.status();
  EXPECT_TRUE(columns->relaxed.empty());
}

// An optimizer-like horizontal fusion, 300 tensors scaled in one kernel
// (600 buffers), ran one loop over every pointer and spilled 17,084 bytes;
// its independent chains now run in loops of a few buffers each and spill
// nothing (at most 256 bytes is the bar), with the same result under the
// emulator.
TEST_F(CudaResources, KernelsOfManyBuffersDoNotSpill) {
  std::string text = "HloModule many_buffers\nENTRY main {\n  two = f32[] constant(2)\n";
  std::string outputs, types;
  for (int i = 0; i < 300; ++i) {
    absl::StrAppend(&text, "  p", i, " = f32[4096] parameter(", i, ")\n  b", i,
                    " = f32[4096] broadcast(two), dimensions={}\n  m", i, " = f32[4096] multiply(p",
                    i, ", b", i, ")\n");
    absl::StrAppend(&outputs, i ? ", " : "", "m", i);
    absl::StrAppend(&types, i ? ", " : "", "f32[4096]");
  }
  absl::StrAppend(&text, "  ROOT t = (", types, ") tuple(", outputs, ")\n}\n");
  absl::StatusOr<std::vector<std::unique_ptr<Module>>> modules = ParseHloText(text, "many");
  ASSERT_TRUE(modules.ok()) << modules.status();
  Module& module = *modules->front();
  absl::StatusOr<CudaProgram> program =
      compiler::CompileForCuda(module, fusion::Strategy::kStitch, "sm_90");
  ASSERT_TRUE(program.ok()) << program.status();
  ASSERT_EQ(program->kernels.size(), 1u);
  EXPECT_EQ(program->kernels[0].parameters, 600);
  EXPECT_LE(program->resources[0].used.spill_bytes, 256);

  compiler::CudaExecutableOptions options;
  options.emulate = true;
  absl::StatusOr<compiler::Compiled<runtime::CudaExecutable>> emulated =
      compiler::CompileForCudaDevice(module, options);
  ASSERT_TRUE(emulated.ok()) << emulated.status();
  std::vector<Literal> arguments = RandomArguments(*module.entry(), /*seed=*/2);
  absl::StatusOr<Literal> got = (*emulated)->Run(arguments);
  ASSERT_TRUE(got.ok()) << got.status();
  absl::StatusOr<Literal> want = Evaluator().Run(module, arguments);
  ASSERT_TRUE(want.ok()) << want.status();
  EXPECT_EQ(DescribeDifferences(*got, *want, &RewriteTolerance, "the result"), "");
}

// Repeated layers plan to identical kernels: they share one symbol on both
// targets, and the CPU executable still computes the same result.
TEST(KernelDeduplication, IdenticalKernelsCompileOnce) {
  std::unique_ptr<Module> module = LoadOptimized("tests/corpus/hlo/gh_ptxla_gpt2_tp1_n_layer2.hlo");
  absl::StatusOr<CudaProgram> cuda =
      compiler::RenderForCuda(*module, fusion::Strategy::kNone, "sm_90");
  ASSERT_TRUE(cuda.ok()) << cuda.status();
  EXPECT_LT(cuda->kernels.size(), cuda->symbol_of.size());
  compiler::CpuOptions options;
  options.plan.strategy = fusion::Strategy::kNone;
  absl::StatusOr<compiler::Compiled<runtime::Executable>> cpu =
      compiler::CompileForCpu(*module, options);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  EXPECT_LT((*cpu)->stats().distinct_kernels, (*cpu)->stats().compiled_kernels);
  EXPECT_GT((*cpu)->stats().distinct_kernels, 0);
}

}  // namespace
}  // namespace seam::runtime
