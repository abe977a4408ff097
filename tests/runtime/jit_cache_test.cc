// The JIT cache trusts nothing it finds on disk: an entry whose object is
// truncated or changed, has no checksum, or is not a regular file is
// rebuilt, never loaded; one that cannot be removed is an error, not an
// exception; a compiler that hangs is stopped; temporaries left by killed
// builds are cleared.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "../common/scratch_directory.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "seam/runtime/jit.h"

namespace seam::runtime {
namespace {

namespace fs = std::filesystem;

constexpr char kSource[] =
    "extern \"C\" __attribute__((visibility(\"default\"))) int seam_answer() { return 42; }\n";

// Each test its own cache directory.
class JitCacheTest : public ::testing::Test {
 protected:
  void SetUp() override { scratch_.UseAsCache(dir_); }

  // Compiles kSource and checks the object answers.
  CompileResult CompileAnswer() {
    absl::StatusOr<CompileResult> compiled = CompileAndLoad(kSource);
    EXPECT_TRUE(compiled.ok()) << compiled.status();
    if (!compiled.ok()) return {};
    absl::StatusOr<void*> answer = compiled->object->Symbol("seam_answer");
    EXPECT_TRUE(answer.ok());
    if (answer.ok()) {
      EXPECT_EQ(reinterpret_cast<int (*)()>(*answer)(), 42);
    }
    return *compiled;
  }

  // Builds the entry in another directory and copies it into the cache:
  // the test may then damage a file this process has not mapped (dlopen
  // would hand back a mapping it has, and a truncated mapped file faults).
  std::string BuildCopy() {
    const fs::path build = dir_ / "build";
    fs::create_directories(build);
    scratch_.UseAsCache(build);
    absl::StatusOr<CompileResult> built = CompileAndLoad(kSource);
    scratch_.UseAsCache(dir_);
    EXPECT_TRUE(built.ok()) << built.status();
    if (!built.ok()) return "";
    const std::string path = (dir_ / fs::path(built->path).filename()).string();
    fs::copy_file(built->path, path);
    fs::copy_file(built->path + ".sum", path + ".sum");
    return path;
  }

  seam::testing::ScratchDirectory scratch_{"seam_jit"};
  const fs::path dir_ = scratch_.path();
};

TEST_F(JitCacheTest, AnEntryHasAChecksumAndIsFoundAgain) {
  CompileResult first = CompileAnswer();
  EXPECT_FALSE(first.cache_hit);
  EXPECT_TRUE(fs::exists(first.path + ".sum"));
  EXPECT_TRUE(CompileAnswer().cache_hit);
}

TEST_F(JitCacheTest, ATruncatedObjectIsRebuilt) {
  const std::string path = BuildCopy();
  fs::resize_file(path, fs::file_size(path) / 2);
  EXPECT_FALSE(CompileAnswer().cache_hit);
}

TEST_F(JitCacheTest, AChangedObjectIsRebuilt) {
  const std::string path = BuildCopy();
  {
    std::fstream object(path, std::ios::in | std::ios::out | std::ios::binary);
    object.seekp(static_cast<std::streamoff>(fs::file_size(path) / 2));
    object.put('\x5a');
  }
  EXPECT_FALSE(CompileAnswer().cache_hit);
}

TEST_F(JitCacheTest, AnObjectWithoutItsChecksumIsRebuilt) {
  const std::string path = BuildCopy();
  fs::remove(path + ".sum");
  EXPECT_FALSE(CompileAnswer().cache_hit);
}

// Opening a FIFO to read it would wait for a writer forever.
TEST_F(JitCacheTest, AFifoAtAnEntrysPathIsReplaced) {
  const std::string path = BuildCopy();
  fs::remove(path);
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  EXPECT_FALSE(CompileAnswer().cache_hit);
  EXPECT_TRUE(fs::is_regular_file(path));
}

TEST_F(JitCacheTest, AnEntryThatCannotBeRemovedIsAnError) {
  const std::string path = BuildCopy();
  fs::remove(path);
  fs::create_directories(fs::path(path) / "in_the_way");
  absl::StatusOr<CompileResult> compiled = CompileAndLoad(kSource);
  ASSERT_FALSE(compiled.ok());
  EXPECT_NE(std::string(compiled.status().message()).find("cannot be removed"), std::string::npos)
      << compiled.status();
}

TEST_F(JitCacheTest, StaleTemporariesAreCleared) {
  const fs::path stale = dir_ / "0123.so.tmp.1.abc";
  const fs::path fresh = dir_ / "4567.so.tmp.2.def";
  std::ofstream(stale) << "left by a killed build";
  std::ofstream(fresh) << "a build in progress";
  fs::last_write_time(stale, fs::file_time_type::clock::now() - std::chrono::hours(2));
  CompileAnswer();
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(fresh));
}

TEST_F(JitCacheTest, AHangingCompilerIsStopped) {
  const fs::path compiler = dir_ / "hanging-c++";
  std::ofstream(compiler) << "#!/bin/sh\nsleep 60\n";
  fs::permissions(compiler, fs::perms::owner_all);
  setenv("SEAM_COMPILER_TIMEOUT", "1", 1);
  CompilerOptions options;
  options.compiler = compiler.string();
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<CompileResult> compiled = CompileAndLoad(kSource, options);
  unsetenv("SEAM_COMPILER_TIMEOUT");
  ASSERT_FALSE(compiled.ok());
  EXPECT_EQ(compiled.status().code(), absl::StatusCode::kDeadlineExceeded) << compiled.status();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 30);
}

}  // namespace
}  // namespace seam::runtime
