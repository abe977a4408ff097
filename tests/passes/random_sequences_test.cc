// Random pass sequences, as the pass-ordering environment will run them:
// 1,000 sequences of 20 passes drawn uniformly from the registry (seeded,
// so reproducible), spread over the small corpus, each verified after every
// pass and interpreted at the end against the unoptimised module.
#include <random>

#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "pass_test_util.h"
#include "seam/passes/registry.h"

namespace seam::testing {
namespace {

constexpr int kShards = 10;
constexpr int kSequencesPerShard = 100;
constexpr int kSequenceLength = 20;

// One unoptimised module of the small corpus and its reference outputs.
struct Subject {
  std::string file;
  size_t index;  // which module of the file
  std::vector<Literal> arguments;
  Literal expected;
};

const std::vector<Subject>& Subjects() {
  static auto* subjects = [] {
    auto* all = new std::vector<Subject>();
    for (const std::string& file : SmallCorpus()) {
      std::vector<std::unique_ptr<Module>> modules = LoadCorpusModules(file);
      for (size_t i = 0; i < modules.size(); ++i) {
        if (!CheckInterpretable(*modules[i]).ok()) continue;
        std::vector<Literal> arguments = RandomArguments(*modules[i]->entry(), /*seed=*/0);
        absl::StatusOr<Literal> expected = Interpret(*modules[i], arguments);
        if (!expected.ok()) continue;  // corpus_semantics_test reports it
        all->push_back(Subject{file, i, std::move(arguments), std::move(*expected)});
      }
    }
    return all;
  }();
  return *subjects;
}

class RandomSequences : public ::testing::TestWithParam<int> {};

TEST_P(RandomSequences, KeepModulesValidAndEqual) {
  const std::vector<Subject>& subjects = Subjects();
  ASSERT_FALSE(subjects.empty());
  const std::vector<PassInfo>& passes = RegisteredPasses();
  std::mt19937_64 random(1000 + GetParam());
  std::uniform_int_distribution<size_t> pick_pass(0, passes.size() - 1);
  int failures = 0;
  for (int s = 0; s < kSequencesPerShard && failures < 3; ++s) {
    const Subject& subject = subjects[(GetParam() * kSequencesPerShard + s) % subjects.size()];
    std::vector<std::string> sequence;
    for (int p = 0; p < kSequenceLength; ++p) {
      sequence.emplace_back(passes[pick_pass(random)].name);
    }
    std::string spec = absl::StrJoin(sequence, ",");
    std::vector<std::unique_ptr<Module>> modules = LoadCorpusModules(subject.file);
    ASSERT_GT(modules.size(), subject.index);
    std::string problem =
        CheckPipelinePreserves(*modules[subject.index], spec, &subject.arguments, &subject.expected);
    if (!problem.empty()) {
      ++failures;
      ADD_FAILURE() << subject.file << " module " << subject.index << ": " << problem
                    << "\nreproduce: seam run " << CorpusPath(subject.file) << " --backend=interp --passes=" << spec
                    << " --verify";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shards, RandomSequences, ::testing::Range(0, kShards));

}  // namespace
}  // namespace seam::testing
