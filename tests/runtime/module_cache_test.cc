// The module cache: a module optimized once starts without its passes, the
// cached module is the one the passes made, and an entry that is damaged,
// or made for other text or other passes, or not a regular file, is never
// used.
#include "seam/compiler/module_cache.h"

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "../common/scratch_directory.h"
#include "gtest/gtest.h"
#include "seam/runtime/jit.h"
#include "seam/text/parser.h"
#include "seam/text/printer.h"

namespace seam::compiler {
namespace {

namespace fs = std::filesystem;

constexpr char kModule[] = R"(HloModule cached
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY main {
  p = f32[8,16] parameter(0)
  zero = f32[] constant(0)
  one = f32[] constant(1)
  ones = f32[8,16] broadcast(one), dimensions={}
  scaled = f32[8,16] multiply(p, ones)
  ROOT sum = f32[8] reduce(scaled, zero), dimensions={1}, to_apply=add
}
)";

class ModuleCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    scratch_.UseAsCache(dir_ / "cache");
    Write(kModule);
  }

  void Write(const std::string& text) { std::ofstream(path()) << text; }
  std::string path() const { return (dir_ / "module.hlo").string(); }

  std::vector<fs::path> Entries() const {
    std::vector<fs::path> entries;
    for (const auto& e : fs::directory_iterator(dir_ / "cache")) {
      if (e.path().extension() == ".hlo") entries.push_back(e.path());
    }
    return entries;
  }

  // Loads through the cache with `spec`, counting how often the file had
  // to be parsed; returns the optimized module's text.
  std::string Load(const std::string& spec, bool* hit, const PipelineOptions& options = {}) {
    absl::StatusOr<Pipeline> pipeline = Pipeline::Parse(spec);
    EXPECT_TRUE(pipeline.ok());
    absl::StatusOr<OptimizedModule> loaded =
        LoadOptimizedModule(path(), *pipeline, options, [&]() {
          ++parses_;
          return ParseHloModule(ReadAll(), path());
        });
    EXPECT_TRUE(loaded.ok()) << loaded.status();
    if (!loaded.ok()) return "";
    *hit = loaded->cache_hit;
    return PrintModule(*loaded->module);
  }

  std::string ReadAll() const {
    std::ifstream in(path());
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  seam::testing::ScratchDirectory scratch_{"seam_module_cache"};
  const fs::path dir_ = scratch_.path();
  int parses_ = 0;
};

TEST_F(ModuleCacheTest, ASecondLoadSkipsParseAndPassesAndGivesTheSameModule) {
  bool hit = true;
  std::string first = Load("default", &hit);
  EXPECT_FALSE(hit);
  EXPECT_EQ(parses_, 1);
  // The passes did something: the multiply by ones is gone.
  EXPECT_EQ(first.find("multiply"), std::string::npos) << first;
  std::string second = Load("default", &hit);
  EXPECT_TRUE(hit);
  EXPECT_EQ(parses_, 1);
  EXPECT_EQ(first, second);
  EXPECT_EQ(Entries().size(), 1u);
}

// Text held in memory (the Python API's modules) shares the entries of
// the same text read from a file.
TEST_F(ModuleCacheTest, TextInMemoryHitsTheEntryOfItsFile) {
  bool hit = true;
  const std::string from_file = Load("default", &hit);
  EXPECT_FALSE(hit);
  absl::StatusOr<Pipeline> pipeline = Pipeline::Parse("default");
  ASSERT_TRUE(pipeline.ok());
  absl::StatusOr<OptimizedModule> loaded =
      OptimizeModuleText(kModule, *pipeline, PipelineOptions{}, [&]() {
        ++parses_;
        return ParseHloModule(kModule, "<text>");
      });
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(loaded->cache_hit);
  EXPECT_EQ(parses_, 1);
  EXPECT_EQ(PrintModule(*loaded->module), from_file);
}

TEST_F(ModuleCacheTest, OpNamesAndSourceLinesAreLeftOutOnBothPaths) {
  // Metadata is most of a real module's text and nothing that runs reads
  // it: neither the entry nor the module after the passes keeps it, other
  // verbatim attributes stay, and a hit gives what the miss gave.
  std::string text = kModule;
  text.replace(text.find("dimensions={1}, to_apply=add"), 28,
               "dimensions={1}, to_apply=add, metadata={op_name=\"jit(f)/reduce_sum\" "
               "source_file=\"f.py\" source_line=3}, frontend_attributes={kept=\"1\"}");
  Write(text);
  ASSERT_NE(ReadAll().find("metadata="), std::string::npos);
  bool hit = true;
  const std::string first = Load("default", &hit);
  EXPECT_FALSE(hit);
  EXPECT_EQ(first.find("metadata"), std::string::npos) << first;
  EXPECT_NE(first.find("frontend_attributes={kept=\"1\"}"), std::string::npos) << first;
  const std::string second = Load("default", &hit);
  EXPECT_TRUE(hit);
  EXPECT_EQ(first, second);
}

TEST_F(ModuleCacheTest, OtherPassesOrOtherTextMiss) {
  bool hit = true;
  Load("default", &hit);
  Load("dce", &hit);
  EXPECT_FALSE(hit);
  std::string text = kModule;
  text.replace(text.find("constant(1)"), 11, "constant(2)");
  Write(text);
  std::string changed = Load("default", &hit);
  EXPECT_FALSE(hit);
  EXPECT_NE(changed.find("constant(2)"), std::string::npos) << changed;
  EXPECT_EQ(parses_, 3);
  EXPECT_EQ(Entries().size(), 3u);
}

TEST_F(ModuleCacheTest, ADamagedEntryIsRebuiltNotUsed) {
  bool hit = true;
  const std::string want = Load("default", &hit);
  ASSERT_EQ(Entries().size(), 1u);
  const fs::path entry = Entries().front();
  std::string text;
  {
    std::ifstream in(entry);
    std::stringstream all;
    all << in.rdbuf();
    text = all.str();
  }
  // Edited into another valid module, truncated, emptied: each one is a miss.
  std::string edited = text;
  ASSERT_NE(edited.find("constant(0)"), std::string::npos) << edited;
  edited.replace(edited.find("constant(0)"), 11, "constant(5)");
  for (const std::string& damaged : {edited, text.substr(0, text.size() / 2), std::string()}) {
    std::ofstream(entry, std::ios::trunc) << damaged;
    const int parses = parses_;
    EXPECT_EQ(Load("default", &hit), want);
    EXPECT_FALSE(hit);
    EXPECT_EQ(parses_, parses + 1);
    // Rebuilt: the next load hits again.
    EXPECT_EQ(Load("default", &hit), want);
    EXPECT_TRUE(hit);
  }
}

// Opening a FIFO to read it would wait for a writer forever.
TEST_F(ModuleCacheTest, AFifoAtAnEntrysPathIsReplacedNotOpened) {
  bool hit = true;
  const std::string want = Load("default", &hit);
  ASSERT_EQ(Entries().size(), 1u);
  const fs::path entry = Entries().front();
  fs::remove(entry);
  ASSERT_EQ(mkfifo(entry.c_str(), 0600), 0);
  EXPECT_EQ(Load("default", &hit), want);
  EXPECT_FALSE(hit);
  EXPECT_TRUE(fs::is_regular_file(entry));
  EXPECT_EQ(Load("default", &hit), want);
  EXPECT_TRUE(hit);
}

TEST_F(ModuleCacheTest, VerifyingEachPassAlwaysRunsThePasses) {
  PipelineOptions options;
  options.verify_each = true;
  bool hit = true;
  Load("default", &hit, options);
  Load("default", &hit, options);
  EXPECT_FALSE(hit);
  EXPECT_EQ(parses_, 2);
  EXPECT_TRUE(Entries().empty());
}

TEST(StableHashTest, EveryByteAndTheLengthCount) {
  std::string text(100, 'a');
  const std::string base = runtime::StableHash(text);
  EXPECT_EQ(base, runtime::StableHash(text));
  EXPECT_EQ(base.size(), 32u);
  // A one-bit change anywhere: in the 32-byte steps and in the tail.
  for (size_t at : {size_t{0}, size_t{7}, size_t{31}, size_t{32}, size_t{95}, size_t{99}}) {
    std::string flipped = text;
    flipped[at] ^= 1;
    EXPECT_NE(runtime::StableHash(flipped), base) << "byte " << at;
  }
  EXPECT_NE(runtime::StableHash(text + '\0'), base);
  EXPECT_NE(runtime::StableHash(""), runtime::StableHash(std::string(1, '\0')));
}

}  // namespace
}  // namespace seam::compiler
