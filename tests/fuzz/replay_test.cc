// Every stored input of every fuzz harness, replayed: the seeds and the
// crashers found so far (each fixed, kept as a regression test). A harness
// that finds a defect aborts, failing the test.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "harnesses.h"

namespace seam::fuzz {
namespace {

class ReplayCorpus : public testing::TestWithParam<Harness> {};

TEST_P(ReplayCorpus, EveryStoredInputPasses) {
  const std::filesystem::path dir =
      std::filesystem::path(SEAM_SOURCE_ROOT) / "tests/fuzz/corpus" / std::string(GetParam().name);
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
  int replayed = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (!entry.is_regular_file() || entry.path().filename() == "README.md") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    SCOPED_TRACE(entry.path().string());
    GetParam().run(bytes.str());
    ++replayed;
  }
  EXPECT_GT(replayed, 0) << "no stored inputs in " << dir;
}

INSTANTIATE_TEST_SUITE_P(Harnesses, ReplayCorpus, testing::ValuesIn(Harnesses()),
                         [](const testing::TestParamInfo<Harness>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace seam::fuzz
