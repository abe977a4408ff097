// Random memory-intensive graphs (random_graph.h) through every fusion
// strategy on the CPU backend, on the CUDA backend where a device is
// present and under the CUDA emulator, against the interpreter: 2,000 graphs per run, 100 to a
// module so each strategy compiles 20 shared objects (or cubins); on the CPU, stitch once more with
// every output written by non-temporal stores. A mismatch prints the smallest prefix of the failing
// graph that still fails, as a module to feed `seam run --fusion=... --verify --passes=none`.
#include "absl/strings/str_cat.h"
#include "backends.h"
#include "gtest/gtest.h"
#include "seam/gym/random_graph.h"
#include "seam/eval/arguments.h"
#include "seam/eval/compare.h"
#include "seam/eval/evaluator.h"
#include "seam/text/parser.h"

namespace seam::testing {
using gym::MakeRandomGraph;
using gym::RandomGraph;
using gym::ModuleText;
namespace {

constexpr int kModules = 20;
constexpr int kGraphsPerModule = 100;
constexpr int kOpsPerGraph = 8;

struct Outcome {
  std::string error;                  // compile or run failure
  std::vector<std::string> mismatch;  // per output: "" when equal
};

// Runs `text` compiled with `strategy` and in the interpreter. With
// `streamed`, the device's last-level cache is one byte, so every output of
// 4-byte elements goes through the staged non-temporal store path.
Outcome Check(Backend backend, const std::string& text, fusion::Strategy strategy,
              bool streamed = false) {
  Outcome outcome;
  absl::StatusOr<std::vector<std::unique_ptr<Module>>> modules = ParseHloText(text, "random");
  if (!modules.ok()) {
    outcome.error = absl::StrCat("generated HLO does not parse: ", modules.status().message());
    return outcome;
  }
  Module& module = *modules->front();
  std::vector<Literal> arguments = RandomArguments(*module.entry(), /*seed=*/1);
  Evaluator oracle;
  oracle.set_wide_accumulation(true);
  absl::StatusOr<Literal> want = oracle.Run(module, arguments);
  if (!want.ok()) {
    outcome.error = std::string(want.status().message());
    return outcome;
  }
  CompiledRun run = CompileAndRun(backend, module, strategy, arguments, streamed);
  if (!run.result.ok()) {
    outcome.error = std::string(run.result.status().message());
    return outcome;
  }
  const absl::StatusOr<Literal>& got = run.result;
  for (size_t i = 0; i < want->tuple_elements().size(); ++i) {
    outcome.mismatch.push_back(DescribeDifferences(got->tuple_elements()[i],
                                                   want->tuple_elements()[i], &RewriteTolerance,
                                                   absl::StrCat("output ", i)));
  }
  return outcome;
}

bool Fails(const Outcome& o) {
  return !o.error.empty() ||
         std::any_of(o.mismatch.begin(), o.mismatch.end(), [](auto& m) { return !m.empty(); });
}

// The smallest prefix of `graph` (its last instruction the only output)
// that still fails.
std::string Reduce(Backend backend, const RandomGraph& graph, fusion::Strategy strategy,
                   bool streamed) {
  for (size_t n = graph.parameters + 1; n <= graph.lines.size(); ++n) {
    RandomGraph prefix = graph;
    prefix.lines.resize(n);
    std::string line = prefix.lines.back();
    std::string name = line.substr(2, line.find(' ', 2) - 2);
    std::string type = line.substr(line.find("= ") + 2);
    type = type.substr(0, type.find(' '));
    if (type.rfind("pred", 0) == 0 || type.rfind("s32", 0) == 0) continue;
    prefix.outputs = {name};
    prefix.output_types = {type};
    std::string text = ModuleText({prefix}, "reduced");
    if (Fails(Check(backend, text, strategy, streamed))) return text;
  }
  return ModuleText({graph}, "unreduced");
}

class RandomGraphs : public ::testing::TestWithParam<std::tuple<int, Backend>> {};

TEST_P(RandomGraphs, EveryStrategyMatchesTheInterpreter) {
  const auto [m, backend] = GetParam();
  if (absl::Status present = BackendPresent(backend); !present.ok()) {
    GTEST_SKIP() << present.message();
  }
  std::vector<RandomGraph> graphs;
  std::vector<size_t> first_output;  // per graph, its first output's tuple index
  size_t outputs = 0;
  for (int g = 0; g < kGraphsPerModule; ++g) {
    graphs.push_back(MakeRandomGraph(static_cast<uint64_t>(m) * 100003 + g, absl::StrCat("g", g, "_"),
                                     kOpsPerGraph));
    first_output.push_back(outputs);
    outputs += graphs.back().outputs.size();
  }
  std::string text = ModuleText(graphs, absl::StrCat("random_", m));
  for (auto [strategy, streamed] : {std::pair{fusion::Strategy::kNone, false},
                                    std::pair{fusion::Strategy::kXla, false},
                                    std::pair{fusion::Strategy::kStitch, false},
                                    std::pair{fusion::Strategy::kStitch, true}}) {
    if (streamed && backend != Backend::kCpu) continue;
    Outcome outcome = Check(backend, text, strategy, streamed);
    ASSERT_EQ(outcome.error, "") << fusion::StrategyName(strategy) << (streamed ? " streamed" : "")
                                 << "\n" << text;
    for (size_t g = 0; g < graphs.size(); ++g) {
      bool bad = false;
      for (size_t o = 0; o < graphs[g].outputs.size(); ++o) {
        bad |= !outcome.mismatch[first_output[g] + o].empty();
      }
      if (!bad) continue;
      ADD_FAILURE() << "graph " << g << " of module " << m << " differs with --backend="
                    << BackendName(backend) << " --fusion=" << fusion::StrategyName(strategy)
                    << (streamed ? " (outputs streamed)" : "") << "; reduced reproducer:\n"
                    << Reduce(backend, graphs[g], strategy, streamed);
      return;
    }
  }
}

// "<index>" on the CPU, "<index>_cuda" on a GPU, "<index>_cuda_sim" emulated.
std::string CaseName(const ::testing::TestParamInfo<std::tuple<int, Backend>>& info) {
  return absl::StrCat(std::get<0>(info.param), BackendSuffix(std::get<1>(info.param)));
}

INSTANTIATE_TEST_SUITE_P(Modules, RandomGraphs,
                         ::testing::Combine(::testing::Range(0, kModules),
                                            ::testing::ValuesIn(AllBackends())),
                         CaseName);

}  // namespace
}  // namespace seam::testing
