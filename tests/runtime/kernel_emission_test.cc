// The CPU executable emits its kernels on the thread pool, several at
// once; the source file it compiles is nonetheless the same on one thread
// as on several (the kernel cache is keyed by that source, so a warm start
// must find what an earlier run compiled).
#include <algorithm>

#include "gtest/gtest.h"
#include "seam/passes/pipeline.h"
#include "seam/runtime/executable.h"
#include "seam/runtime/thread_pool.h"
#include "seam/text/parser.h"
#include "backends.h"

namespace seam::runtime {
namespace {

// The source `module` compiles to, emitted with the pool or on the
// calling thread alone (a loop started inside another runs inline).
std::string EmittedSource(const Module& module, bool on_the_pool, const std::string& dir) {
  ExecutableOptions options;
  options.dump_to = dir;
  absl::StatusOr<std::unique_ptr<Executable>> executable;
  if (on_the_pool) {
    executable = Executable::Compile(module, options);
  } else {
    ThreadPool::Global().ParallelFor(2, 1, [&](int64_t begin, int64_t, int) {
      if (begin == 0) executable = Executable::Compile(module, options);
    });
  }
  EXPECT_TRUE(executable.ok()) << executable.status();
  return testing::ReadFile(dir + "/kernels.cc");
}

TEST(KernelEmission, TheSourceIsTheSameWhateverTheThreads) {
  const std::string path = std::string(SEAM_SOURCE_ROOT) +
                           "/tests/corpus/hlo/gh_ptxla_bert_single_device_training_fwd_bwd.hlo";
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

}  // namespace
}  // namespace seam::runtime
