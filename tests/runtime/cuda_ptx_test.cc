// Every kernel Seam generates for a GPU compiles: each module of the corpus
// (tests/corpus/hlo, every module of every file) and of the benchmark suite
// (bench/workloads), after the default pipeline, under each fusion strategy,
// rendered as CUDA C++ and compiled by NVRTC to PTX for sm_80 (planned for
// an A100) and sm_90 (an H100), and the CUDA backend's schedule launches
// each with its buffers; and so do 400 random graphs. NVRTC needs no
// GPU; where it is not installed the tests skip, saying so. Running the PTX
// needs a device: not here.
#include <algorithm>
#include <filesystem>

#include "../common/test_names.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "seam/compiler/cuda_compiler.h"
#include "seam/gym/random_graph.h"
#include "seam/passes/pipeline.h"
#include "seam/runtime/cuda_executable.h"
#include "seam/text/parser.h"

namespace seam::runtime {
using compiler::CudaProgram;
namespace {

constexpr fusion::Strategy kStrategies[] = {fusion::Strategy::kNone, fusion::Strategy::kXla,
                                            fusion::Strategy::kStitch};
constexpr const char* kTargets[] = {"sm_80", "sm_90"};

// Paths from the source root of every HLO file in `dir`.
std::vector<std::string> HloFiles(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(SEAM_SOURCE_ROOT "/" + dir)) {
    std::string ext = entry.path().extension().string();
    if (ext == ".hlo" || ext == ".txt") files.push_back(dir + "/" + entry.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string NameOf(const std::string& file) {
  return seam::testing::CorpusTestName(std::filesystem::path(file).filename().string());
}

// Every launch step of the CUDA backend's schedule binds to a rendered
// kernel whose parameters are the step's buffers (the schedule lowers the
// plan's kernels again: it must find what was rendered).
void ExpectLaunchable(const CudaProgram& program, const std::string& what) {
  absl::flat_hash_map<std::string, const codegen::CudaKernel*> by_name;
  for (const codegen::CudaKernel& k : program.kernels) by_name[k.name] = &k;
  Programs programs = compiler::ScheduleCudaProgram(program);
  size_t interpreted = 0;
  for (const auto& [computation, steps] : programs.by_computation) {
    for (const Step& step : steps->steps) {
      interpreted += step.kind == Step::Kind::kInterpretKernel;
      if (step.kind != Step::Kind::kKernel) continue;
      auto it = by_name.find(step.symbol);
      ASSERT_NE(it, by_name.end()) << what << ": " << step.symbol << " was not rendered";
      const std::string& source = it->second->source;
      absl::string_view signature = absl::string_view(source).substr(0, source.find('{'));
      int64_t parameters = 0;
      for (size_t at = signature.find("__restrict__ b"); at != absl::string_view::npos;
           at = signature.find("__restrict__ b", at + 1)) {
        ++parameters;
      }
      EXPECT_EQ(parameters, static_cast<int64_t>(step.ir->buffers.size()))
          << what << ": " << step.symbol << " (" << step.ir->name << ")";
    }
  }
  EXPECT_EQ(interpreted, program.not_generated.size()) << what;
}

// Compiles every module of `text` for both targets under every strategy;
// returns how many kernels compiled.
int64_t ExpectAllCompile(const std::vector<std::unique_ptr<Module>>& modules,
                         const std::string& what) {
  int64_t kernels = 0;
  for (const std::unique_ptr<Module>& module : modules) {
    for (fusion::Strategy strategy : kStrategies) {
      for (const char* target : kTargets) {
        absl::StatusOr<CudaProgram> program = compiler::CompileForCuda(*module, strategy, target);
        EXPECT_TRUE(program.ok()) << what << " (" << module->name() << ") --fusion="
                                  << fusion::StrategyName(strategy) << " --target=" << target
                                  << ": " << program.status();
        if (!program.ok()) continue;
        EXPECT_TRUE(program->not_generated.empty())
            << what << " --fusion=" << fusion::StrategyName(strategy) << ": "
            << absl::StrJoin(program->not_generated, "; ");
        if (!program->kernels.empty()) {
          EXPECT_NE(program->ptx.text.find(".entry " + program->kernels.front().name), std::string::npos);
        }
        ExpectLaunchable(*program, absl::StrCat(what, " (", module->name(), ") --fusion=",
                                                fusion::StrategyName(strategy), " --target=", target));
        kernels += static_cast<int64_t>(program->kernels.size());
      }
    }
  }
  return kernels;
}

class CudaPtx : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    absl::Status nvrtc = NvrtcAvailable();
    if (!nvrtc.ok()) GTEST_SKIP() << nvrtc.message();
  }
};

TEST_P(CudaPtx, EveryKernelCompilesForSm80AndSm90) {
  absl::StatusOr<std::vector<std::unique_ptr<Module>>> modules =
      ParseHloFile(SEAM_SOURCE_ROOT "/" + GetParam());
  ASSERT_TRUE(modules.ok()) << modules.status();
  absl::StatusOr<Pipeline> pipeline = Pipeline::Parse("default");
  for (std::unique_ptr<Module>& module : *modules) {
    ASSERT_TRUE(pipeline->Run(*module, PipelineOptions{}).ok());
  }
  int64_t kernels = ExpectAllCompile(*modules, GetParam());
  // Modules XLA already fused (their work inside `fusion` ops) leave Seam
  // nothing to plan; every other file has memory-intensive kernels.
  bool already_fused = false;
  for (const std::unique_ptr<Module>& module : *modules) {
    for (const auto& c : module->computations()) {
      for (const auto& i : c->instructions()) already_fused |= i->opcode() == Opcode::kFusion;
    }
  }
  if (!already_fused) {
    EXPECT_GT(kernels, 0) << "no memory-intensive kernel in " << GetParam();
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, CudaPtx, ::testing::ValuesIn(HloFiles("tests/corpus/hlo")),
                         [](const auto& info) { return NameOf(info.param); });
INSTANTIATE_TEST_SUITE_P(Workloads, CudaPtx, ::testing::ValuesIn(HloFiles("bench/workloads")),
                         [](const auto& info) { return NameOf(info.param); });

// Random graphs (random_graph.h): four sets of 100, each case a quarter of
// one (about 80 s of NVRTC on one core, so that CI's sample of the cases
// fits its budget).
class CudaPtxRandom : public CudaPtx {};

TEST_P(CudaPtxRandom, EveryKernelCompilesForSm80AndSm90) {
  const int shard = std::stoi(GetParam());
  const int set = shard / 4, first = shard % 4 * 25;
  std::vector<seam::gym::RandomGraph> graphs;
  for (int g = first; g < first + 25; ++g) {
    graphs.push_back(seam::gym::MakeRandomGraph(static_cast<uint64_t>(set) * 7919 + 17 + g,
                                                absl::StrCat("g", g, "_"), 8));
  }
  std::string text = seam::gym::ModuleText(graphs, absl::StrCat("random_", set, "_", first));
  absl::StatusOr<std::vector<std::unique_ptr<Module>>> modules = ParseHloText(text, "random");
  ASSERT_TRUE(modules.ok()) << modules.status();
  EXPECT_GT(ExpectAllCompile(*modules, absl::StrCat("random module ", set, " from ", first)), 0);
}

INSTANTIATE_TEST_SUITE_P(Modules, CudaPtxRandom,
                         ::testing::Values("0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10",
                                           "11", "12", "13", "14", "15"));

}  // namespace
}  // namespace seam::runtime
