// The CPU executable emits its kernels on the thread pool, several at
// once; the source file it compiles is nonetheless the same on one thread
// as on several (the kernel cache is keyed by that source, so a warm start
// must find what an earlier run compiled). A kernel's output that is
// another output's values reshaped reads them where they are computed. A
// dump that cannot be written fails the compile.
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "backends.h"
#include "gtest/gtest.h"
#include "seam/compiler/cpu_compiler.h"
#include "seam/eval/arguments.h"
#include "seam/passes/pipeline.h"
#include "seam/runtime/executable.h"
#include "seam/runtime/thread_pool.h"
#include "seam/text/parser.h"

namespace seam::runtime {
namespace {

// The source `module` compiles to, emitted with the pool or on the
// calling thread alone (a loop started inside another runs inline).
std::string EmittedSource(const Module& module, bool on_the_pool, const std::string& dir) {
  compiler::CpuOptions options;
  options.dump_to = dir;
  absl::StatusOr<compiler::Compiled<runtime::Executable>> executable;
  if (on_the_pool) {
    executable = compiler::CompileForCpu(module, options);
  } else {
    ThreadPool::Global().ParallelFor(2, 1, [&](int64_t begin, int64_t, int) {
      if (begin == 0) executable = compiler::CompileForCpu(module, options);
    });
  }
  EXPECT_TRUE(executable.ok()) << executable.status();
  return testing::ReadFile(dir + "/kernels.cc");
}

TEST(KernelEmission, TheSourceIsTheSameWhateverTheThreads) {
  const std::string path = absl::StrCat(
      SEAM_SOURCE_ROOT, "/tests/corpus/hlo/gh_ptxla_bert_single_device_training_fwd_bwd.hlo");
  std::unique_ptr<Module> module = testing::ParseFirst(testing::ReadFile(path), "bert_fwd_bwd");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<Pipeline> passes = Pipeline::Parse("default");
  ASSERT_TRUE(passes.ok());
  ASSERT_TRUE(passes->Run(*module).ok());
  const std::string base = ::testing::TempDir() + "/seam_kernel_emission_";
  const std::string serial = EmittedSource(*module, false, base + "serial");
  const std::string pooled = EmittedSource(*module, true, base + "pooled");
  // Kernels enough that threads finish them out of order.
  EXPECT_GT(std::count(serial.begin(), serial.end(), '\n'), 2000);
  EXPECT_EQ(serial, pooled);
}

// BERT's GELU gradient: a column sum of [1,128,64] values and the same
// values as a [128,64] view. The view's elements sit at the sum's own
// indices without its size-1 dimension, so the kernel computes each value
// once (exp once per element, no index divisions), and agrees with the
// interpreter.
TEST(KernelEmission, AViewWithoutUnitDimensionsReadsTheValuesComputed) {
  std::unique_ptr<Module> module = testing::ParseFirst(R"(HloModule gelu_grad

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  x = f32[1,128,64] parameter(0)
  g = f32[1,128,64] parameter(1)
  square = f32[1,128,64] multiply(x, x)
  pdf = f32[1,128,64] exponential(square)
  grad = f32[1,128,64] multiply(g, pdf)
  view = f32[128,64] reshape(grad)
  zero = f32[] constant(0)
  sum = f32[64] reduce(grad, zero), dimensions={0,1}, to_apply=add
  ROOT out = (f32[128,64], f32[64]) tuple(view, sum)
}
)",
                                                       "gelu_grad");
  ASSERT_NE(module, nullptr);
  const std::string source =
      EmittedSource(*module, true, ::testing::TempDir() + "/seam_kernel_emission_view");
  const std::string kernels = source.substr(source.find("void seam_c0_k0"));
  // One exp for each element the column sum folds (its folding loops
  // take several rows a step, each a copy of the computation), none for
  // the view.
  auto count = [&](const std::string& text) {
    size_t n = 0;
    for (size_t at = kernels.find(text); at != std::string::npos; at = kernels.find(text, at + 1)) {
      ++n;
    }
    return n;
  };
  EXPECT_EQ(count("seam_exp"), count("fold0 = q == q0") + count("fold0 = reducer0")) << kernels;
  EXPECT_GE(count("seam_exp"), 1) << kernels;
  EXPECT_EQ(kernels.find(") % 64"), std::string::npos) << kernels;

  absl::StatusOr<compiler::Compiled<runtime::Executable>> executable =
      compiler::CompileForCpu(*module, {});
  ASSERT_TRUE(executable.ok()) << executable.status();
  std::vector<Literal> arguments = RandomArguments(*module->entry(), /*seed=*/3);
  testing::ExpectSameAsInterpreter(**executable, *module, arguments);
}

// A bitcast-convert between element types of different widths changes the
// shape (u32[2,2] <-> u64[2]): it is not read at its result's index like an
// elementwise op, so no kernel fuses it (it compiled to an index of the
// wrong rank and crashed). JAX's rng_bit_generator makes these.
TEST(KernelEmission, ABitcastConvertBetweenWidthsIsNotFusedAsElementwise) {
  std::unique_ptr<Module> module = testing::ParseFirst(R"(HloModule key_bits

ENTRY e {
  key = u32[4] parameter(0)
  pairs = u32[2,2] reshape(key)
  state = u64[2] bitcast-convert(pairs)
  rng = (u64[2], u32[4,6]) rng-bit-generator(state), algorithm=rng_three_fry
  next = u64[2] get-tuple-element(rng), index=0
  halves = u32[2,2] bitcast-convert(next)
  key_out = u32[4] reshape(halves)
  bits = u32[4,6] get-tuple-element(rng), index=1
  ROOT out = (u32[4], u32[4,6]) tuple(key_out, bits)
}
)",
                                                       "key_bits");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<compiler::Compiled<runtime::Executable>> executable =
      compiler::CompileForCpu(*module, compiler::CpuOptions{});
  ASSERT_TRUE(executable.ok()) << executable.status();
  for (uint64_t seed : {0, 1}) {
    std::vector<Literal> arguments = RandomArguments(*module->entry(), seed);
    testing::ExpectSameAsInterpreter(**executable, *module, arguments);
  }
}

// A dump the user asked for that cannot be written is an error naming the
// path, not a compile that quietly leaves the files out.
TEST(KernelEmission, ADumpThatCannotBeWrittenIsAnError) {
  std::unique_ptr<Module> module = testing::ParseFirst(R"(HloModule twice

ENTRY e {
  x = f32[8] parameter(0)
  ROOT y = f32[8] add(x, x)
}
)",
                                                       "twice");
  ASSERT_NE(module, nullptr);
  // The dump's directory exists, but where plan.txt would go there is a
  // directory.
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("seam_unwritable_dump_" + std::to_string(::getpid()));
  const std::filesystem::path plan = dir / "plan.txt";
  std::filesystem::create_directories(plan);
  compiler::CpuOptions options;
  options.dump_to = dir.string();
  absl::StatusOr<compiler::Compiled<runtime::Executable>> executable =
      compiler::CompileForCpu(*module, options);
  EXPECT_FALSE(executable.ok());
  EXPECT_NE(executable.status().message().find(plan.string()), std::string::npos)
      << executable.status();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace seam::runtime
