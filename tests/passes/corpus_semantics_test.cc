// Every registered pass preserves what the corpus modules compute: on the
// small and medium corpus, each pass alone runs with verification after it
// and the outputs on random inputs (seed 0) must equal the unoptimised
// module's within RewriteTolerance. On the large corpus, the default
// pipeline and one run of every pass in registry order are checked the same
// way; on the modules the interpreter cannot run in CI time, validity only.
#include <map>

#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "../common/test_names.h"
#include "gtest/gtest.h"
#include "pass_test_util.h"
#include "seam/passes/registry.h"

namespace seam::testing {
namespace {

std::vector<std::string> PassNames() {
  std::vector<std::string> names;
  for (const PassInfo& info : RegisteredPasses()) names.emplace_back(info.name);
  return names;
}

// The reference outputs of every module of a corpus file, computed once.
// A module the interpreter has no semantics for (a custom-call without a
// handler) gets a null output and is checked for validity only.
struct Reference {
  std::vector<std::vector<Literal>> arguments;
  std::vector<absl::StatusOr<std::optional<Literal>>> outputs;
};

const Reference& ReferenceFor(const std::string& file) {
  static auto* cache = new std::map<std::string, Reference>();
  auto it = cache->find(file);
  if (it != cache->end()) return it->second;
  Reference& reference = (*cache)[file];
  for (const std::unique_ptr<Module>& module : LoadCorpusModules(file)) {
    reference.arguments.push_back(RandomArguments(*module->entry(), /*seed=*/0));
    if (!CheckInterpretable(*module).ok()) {
      reference.outputs.push_back(std::nullopt);
      continue;
    }
    absl::StatusOr<Literal> output = Interpret(*module, reference.arguments.back());
    if (output.ok()) {
      reference.outputs.push_back(std::optional<Literal>(std::move(*output)));
    } else {
      reference.outputs.push_back(output.status());
    }
  }
  return reference;
}

// Checks `spec` on every module of `file`; with `interpret`, outputs too.
void ExpectPreserves(const std::string& file, const std::string& spec, bool interpret) {
  std::vector<std::unique_ptr<Module>> modules = LoadCorpusModules(file);
  ASSERT_FALSE(modules.empty()) << file << " does not parse";
  const Reference* reference = interpret ? &ReferenceFor(file) : nullptr;
  for (size_t i = 0; i < modules.size(); ++i) {
    const std::vector<Literal>* arguments = nullptr;
    const Literal* expected = nullptr;
    if (reference != nullptr) {
      ASSERT_TRUE(reference->outputs[i].ok()) << file << ": " << reference->outputs[i].status();
      if (reference->outputs[i]->has_value()) {
        arguments = &reference->arguments[i];
        expected = &**reference->outputs[i];
      }
    }
    std::string problem = CheckPipelinePreserves(*modules[i], spec, arguments, expected);
    EXPECT_EQ(problem, "") << file << " module " << modules[i]->name() << " --passes=" << spec
                           << "\nreproduce: seam run " << CorpusPath(file) << " --backend=interp --passes=" << spec
                           << " --verify";
  }
}

std::string TestName(const std::string& file, const std::string& spec) {
  return TestIdentifier(absl::StrCat(file.substr(0, file.find('.')), "_", spec));
}

class EveryPass : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(EveryPass, PreservesOutputs) {
  ExpectPreserves(std::get<0>(GetParam()), std::get<1>(GetParam()), /*interpret=*/true);
}

std::vector<std::string> SmallAndMedium() {
  std::vector<std::string> files = SmallCorpus();
  files.insert(files.end(), MediumCorpus().begin(), MediumCorpus().end());
  return files;
}

INSTANTIATE_TEST_SUITE_P(Corpus, EveryPass,
                         ::testing::Combine(::testing::ValuesIn(SmallAndMedium()),
                                            ::testing::ValuesIn(PassNames())),
                         [](const auto& info) {
                           return TestName(std::get<0>(info.param), std::get<1>(info.param));
                         });

class EveryPassValidity : public EveryPass {};

TEST_P(EveryPassValidity, KeepsModuleValid) {
  ExpectPreserves(std::get<0>(GetParam()), std::get<1>(GetParam()), /*interpret=*/false);
}

std::vector<std::string> LargeAndUninterpreted() {
  std::vector<std::string> files = LargeCorpus();
  files.insert(files.end(), UninterpretedCorpus().begin(), UninterpretedCorpus().end());
  return files;
}

INSTANTIATE_TEST_SUITE_P(Corpus, EveryPassValidity,
                         ::testing::Combine(::testing::ValuesIn(LargeAndUninterpreted()),
                                            ::testing::ValuesIn(PassNames())),
                         [](const auto& info) {
                           return TestName(std::get<0>(info.param), std::get<1>(info.param));
                         });

// Each large module is interpreted three times (before, after the default
// pipeline, after every pass once): the costliest test, 1-2 minutes each.
class LargeModule : public ::testing::TestWithParam<std::string> {};

TEST_P(LargeModule, DefaultPipelinePreservesOutputs) {
  ExpectPreserves(GetParam(), "default", /*interpret=*/true);
}

TEST_P(LargeModule, EveryPassOncePreservesOutputs) {
  ExpectPreserves(GetParam(), absl::StrJoin(PassNames(), ","), /*interpret=*/true);
}

INSTANTIATE_TEST_SUITE_P(Corpus, LargeModule, ::testing::ValuesIn(LargeCorpus()),
                         [](const auto& info) { return TestName(info.param, ""); });

}  // namespace
}  // namespace seam::testing
