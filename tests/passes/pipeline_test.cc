// The registry and pipeline specs: names, parsing, errors, fixpoints, dumps.
#include "seam/passes/pipeline.h"

#include <filesystem>

#include "absl/container/flat_hash_set.h"
#include "gtest/gtest.h"
#include "seam/passes/registry.h"
#include "seam/text/parser.h"

namespace seam {
namespace {

TEST(Registry, NamesAreUniqueAndMatchThePasses) {
  absl::flat_hash_set<absl::string_view> seen;
  for (const PassInfo& info : RegisteredPasses()) {
    EXPECT_TRUE(seen.insert(info.name).second) << "duplicate pass " << info.name;
    EXPECT_FALSE(info.description.empty()) << info.name;
    EXPECT_EQ(info.Create()->name(), info.name);
    EXPECT_EQ(FindPass(info.name), &info);
  }
  EXPECT_EQ(FindPass("no-such-pass"), nullptr);
}

TEST(PipelineSpec, ParsesNestedFixpointsToCanonicalText) {
  absl::StatusOr<Pipeline> p = Pipeline::Parse(" dce , fixpoint( dce,fixpoint(dce) ),dce");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->ToString(), "dce,fixpoint(dce,fixpoint(dce)),dce");
}

TEST(PipelineSpec, DefaultExpandsToTheDefaultPipeline) {
  absl::StatusOr<Pipeline> p = Pipeline::Parse("default");
  absl::StatusOr<Pipeline> q = Pipeline::Parse(kDefaultPipeline);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_EQ(p->ToString(), q->ToString());
}

TEST(PipelineSpec, TheDefaultIsItsPhasesInOrder) {
  // The default pipeline as it was written out before its phases had names.
  absl::StatusOr<Pipeline> written = Pipeline::Parse(
      "layout-normalization,sharding-remover,transfer-remover,collective-simplifier,"
      "optimization-barrier-expander,call-inliner,map-inline,flatten-call-graph,"
      "batchnorm-expander,gelu-expander,computation-deduplicator,dce,"
      "fixpoint(algsimp,cse,constant-folding,tuple-simplifier,zero-sized-hlo-elimination,"
      "gather-simplifier,sort-simplifier,reduce-decomposer,conditional-simplifier,"
      "while-loop-simplifier,dce),"
      "while-loop-invariant-code-motion,channels-last,"
      "fixpoint(reshape-mover,transpose-folding,conv-operand-folding,convert-mover,"
      "simplify-fp-conversions,slice-sinker,algsimp,cse,dce),"
      "dot-strength-reduction,broadcast-canonicalizer,"
      "fixpoint(algsimp,cse,constant-folding,tuple-simplifier,while-loop-simplifier,"
      "computation-deduplicator,dce)");
  absl::StatusOr<Pipeline> named = Pipeline::Parse("default");
  ASSERT_TRUE(written.ok()) << written.status();
  ASSERT_TRUE(named.ok()) << named.status();
  EXPECT_EQ(named->ToString(), written->ToString());
}

TEST(PipelineSpec, NamedPipelinesParseAndShadowNoPass) {
  ASSERT_FALSE(NamedPipelines().empty());
  EXPECT_EQ(NamedPipelines()[0].name, "default");
  for (const NamedPipeline& named : NamedPipelines()) {
    SCOPED_TRACE(named.name);
    EXPECT_EQ(FindPass(named.name), nullptr);
    EXPECT_EQ(FindNamedPipeline(named.name), &named);
    absl::StatusOr<Pipeline> by_name = Pipeline::Parse(named.name);
    absl::StatusOr<Pipeline> by_spec = Pipeline::Parse(named.spec);
    ASSERT_TRUE(by_name.ok()) << by_name.status();
    ASSERT_TRUE(by_spec.ok()) << by_spec.status();
    EXPECT_EQ(by_name->ToString(), by_spec->ToString());
    EXPECT_FALSE(named.description.empty());
  }
  EXPECT_EQ(FindNamedPipeline("dce"), nullptr);
}

TEST(PipelineSpec, ErrorsNameTheColumn) {
  struct Case {
    const char* spec;
    const char* message;
  } cases[] = {
      {"dce,dcee", "--passes: unknown pass 'dcee' (did you mean 'dce'?) at column 5 of 'dce,dcee'"},
      {"", "--passes: expected a pass name at the end at column 1 of ''"},
      {"dce,", "--passes: expected a pass name at the end at column 5 of 'dce,'"},
      {"fixpoint(dce", "--passes: expected ')' to close fixpoint( at column 13 of 'fixpoint(dce'"},
      {"fixpoint dce", "--passes: expected '(' after fixpoint at column 10 of 'fixpoint dce'"},
      {"dce)", "--passes: unexpected ')' at column 4 of 'dce)'"},
      {"zzzzzzzz", "--passes: unknown pass 'zzzzzzzz' (`seam passes` lists them) at column 1 of "
                   "'zzzzzzzz'"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Pipeline> p = Pipeline::Parse(c.spec);
    ASSERT_FALSE(p.ok()) << c.spec;
    EXPECT_EQ(p.status().message(), c.message);
  }
}

constexpr char kDeadCode[] = R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  a = f32[4] negate(p)
  b = f32[4] negate(a)
  ROOT r = f32[4] add(p, p)
})";

TEST(PipelineRun, ReportsChangesTimesAndOpCounts) {
  auto module = ParseHloModule(kDeadCode);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<Pipeline> p = Pipeline::Parse("fixpoint(dce)");
  ASSERT_TRUE(p.ok());
  PipelineReport report;
  absl::StatusOr<bool> changed = p->Run(**module, {}, &report);
  ASSERT_TRUE(changed.ok());
  EXPECT_TRUE(*changed);
  ASSERT_EQ(report.runs.size(), 2u);  // changed once, then confirmed the fixpoint
  EXPECT_TRUE(report.runs[0].changed);
  EXPECT_EQ(report.runs[0].ops_before, 4);
  EXPECT_EQ(report.runs[0].ops_after, 2);
  EXPECT_FALSE(report.runs[1].changed);
  EXPECT_NE(report.Summary().find("dce"), std::string::npos);
}

TEST(PipelineRun, DumpsTheModuleAfterEveryChange) {
  auto module = ParseHloModule(kDeadCode);
  ASSERT_TRUE(module.ok());
  std::string dir = ::testing::TempDir() + "/seam_dump_test";
  std::filesystem::remove_all(dir);
  absl::StatusOr<Pipeline> p = Pipeline::Parse("dce,dce");
  ASSERT_TRUE(p.ok());
  PipelineOptions options;
  options.dump_to = dir;
  ASSERT_TRUE(p->Run(**module, options).ok());
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    files.push_back(entry.path().filename().string());
  }
  ASSERT_EQ(files.size(), 1u);  // the second dce changed nothing
  EXPECT_EQ(files[0], "0001.m.dce.hlo");
}

}  // namespace
}  // namespace seam
