// The default pipeline reaches a fixpoint: running it a second time changes
// nothing, on every corpus module.
#include "../common/test_names.h"
#include "gtest/gtest.h"
#include "pass_test_util.h"

namespace seam::testing {
namespace {

std::vector<std::string> AllCorpus() {
  std::vector<std::string> files;
  for (const auto* group : {&SmallCorpus(), &MediumCorpus(), &LargeCorpus(),
                            &UninterpretedCorpus()}) {
    files.insert(files.end(), group->begin(), group->end());
  }
  return files;
}

class DefaultPipeline : public ::testing::TestWithParam<std::string> {};

TEST_P(DefaultPipeline, SecondRunChangesNothing) {
  std::vector<std::unique_ptr<Module>> modules = LoadCorpusModules(GetParam());
  ASSERT_FALSE(modules.empty());
  absl::StatusOr<Pipeline> pipeline = Pipeline::Parse("default");
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();
  for (const std::unique_ptr<Module>& module : modules) {
    PipelineOptions options;
    options.verify_each = true;
    ASSERT_TRUE(pipeline->Run(*module, options).ok());
    PipelineReport report;
    absl::StatusOr<bool> changed = pipeline->Run(*module, options, &report);
    ASSERT_TRUE(changed.ok()) << changed.status();
    std::string changers;
    for (const PassRunRecord& run : report.runs) {
      if (run.changed) changers += " " + run.pass;
    }
    EXPECT_FALSE(*changed) << module->name() << ": the second run changed it in:" << changers;
    EXPECT_EQ(report.unconverged_fixpoints, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, DefaultPipeline, ::testing::ValuesIn(AllCorpus()),
                         [](const auto& info) { return CorpusTestName(info.param); });

}  // namespace
}  // namespace seam::testing
