// NVRTC's cache trusts nothing it finds on disk: PTX or a cubin that is
// truncated, changed, or not a regular file is compiled again, never handed
// to the driver (which would load whatever it is given). NVRTC needs no GPU;
// where it is not installed the tests skip, saying so.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "../common/scratch_directory.h"
#include "gtest/gtest.h"
#include "seam/runtime/nvrtc.h"
#include "seam/util/files.h"

namespace seam::runtime {
namespace {

namespace fs = std::filesystem;

constexpr char kAddOne[] = R"(
extern "C" __global__ void add_one(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}
)";
constexpr char kArch[] = "sm_80";

// Each test its own cache directory.
class NvrtcCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (absl::Status nvrtc = NvrtcAvailable(); !nvrtc.ok()) GTEST_SKIP() << nvrtc;
    scratch_.UseAsCache(scratch_.path());
  }

  NvrtcResult Compile(bool cubin) {
    absl::StatusOr<NvrtcResult> result =
        cubin ? CompileToCubin(kAddOne, kArch) : CompileToPtx(kAddOne, kArch);
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? *result : NvrtcResult{};
  }

  // Compiles, lets `damage` change the entry's files (the text, the cubin),
  // and checks the next compile misses, gives what the first gave, and is
  // hit again after.
  template <typename Damage>
  void ExpectRebuiltAfter(bool cubin, Damage damage) {
    const NvrtcResult first = Compile(cubin);
    ASSERT_FALSE(first.text.empty());
    EXPECT_TRUE(Compile(cubin).cache_hit);
    const std::string cubin_path = first.path.substr(0, first.path.rfind('/')) + "/" +
                                   fs::path(first.path).stem().stem().string() + ".cubin";
    damage(first.path, cubin_path);
    const NvrtcResult again = Compile(cubin);
    EXPECT_FALSE(again.cache_hit);
    // (ptxas' report, the text of a cubin compile, says how long it took.)
    if (!cubin) {
      EXPECT_EQ(again.text, first.text);
    }
    EXPECT_EQ(again.cubin, first.cubin);
    EXPECT_TRUE(Compile(cubin).cache_hit);
  }

  seam::testing::ScratchDirectory scratch_{"seam_nvrtc"};
};

void Truncate(const std::string& path) { fs::resize_file(path, fs::file_size(path) / 2); }

void FlipAByteInTheMiddle(const std::string& path) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekg(static_cast<std::streamoff>(fs::file_size(path) / 2));
  const char c = static_cast<char>(file.get());
  file.seekp(static_cast<std::streamoff>(fs::file_size(path) / 2));
  file.put(static_cast<char>(c ^ 0x20));
}

void ReplaceWithAFifo(const std::string& path) {
  fs::remove(path);
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
}

TEST_F(NvrtcCacheTest, TruncatedPtxIsCompiledAgain) {
  ExpectRebuiltAfter(false, [](const std::string& ptx, const std::string&) { Truncate(ptx); });
}

TEST_F(NvrtcCacheTest, ChangedPtxIsCompiledAgain) {
  ExpectRebuiltAfter(false,
                     [](const std::string& ptx, const std::string&) { FlipAByteInTheMiddle(ptx); });
}

TEST_F(NvrtcCacheTest, AFifoInPlaceOfPtxIsReplacedNotOpened) {
  ExpectRebuiltAfter(false,
                     [](const std::string& ptx, const std::string&) { ReplaceWithAFifo(ptx); });
}

TEST_F(NvrtcCacheTest, ATruncatedOrChangedCubinIsCompiledAgain) {
  ExpectRebuiltAfter(true, [](const std::string&, const std::string& cubin) { Truncate(cubin); });
  ExpectRebuiltAfter(
      true, [](const std::string&, const std::string& cubin) { FlipAByteInTheMiddle(cubin); });
}

TEST_F(NvrtcCacheTest, AMissingCubinIsCompiledAgain) {
  ExpectRebuiltAfter(true, [](const std::string&, const std::string& cubin) { fs::remove(cubin); });
}

}  // namespace
}  // namespace seam::runtime
