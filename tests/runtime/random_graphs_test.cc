// Random memory-intensive graphs (random_graph.h) through every fusion
// strategy on the CPU backend, against the interpreter: 2,000 graphs per
// run, 100 to a module so each strategy compiles 20 shared objects; stitch
// once more with every output written by non-temporal stores. A
// mismatch prints the smallest prefix of the failing graph that still
// fails, as a module to feed `seam run --fusion=... --verify --passes=none`.
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "seam/gym/random_graph.h"
#include "seam/eval/arguments.h"
#include "seam/eval/compare.h"
#include "seam/eval/evaluator.h"
#include "seam/runtime/executable.h"
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
// `streamed`, the device's last-level cache is one byte, so every output
// goes through the staged non-temporal store path.
Outcome Check(const std::string& text, fusion::Strategy strategy, bool streamed = false) {
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
  runtime::ExecutableOptions options;
  options.plan.strategy = strategy;
  if (streamed) options.plan.device.last_level_cache_bytes = 1;
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      runtime::Executable::Compile(module, options);
  if (!want.ok() || !executable.ok()) {
    outcome.error = std::string(!want.ok() ? want.status().message() : executable.status().message());
    return outcome;
  }
  absl::StatusOr<Literal> got = (*executable)->Run(arguments);
  if (!got.ok()) {
    outcome.error = std::string(got.status().message());
    return outcome;
  }
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
std::string Reduce(const RandomGraph& graph, fusion::Strategy strategy, bool streamed) {
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
    if (Fails(Check(text, strategy, streamed))) return text;
  }
  return ModuleText({graph}, "unreduced");
}

class RandomGraphs : public ::testing::TestWithParam<int> {};

TEST_P(RandomGraphs, EveryStrategyMatchesTheInterpreter) {
  int m = GetParam();
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
    Outcome outcome = Check(text, strategy, streamed);
    ASSERT_EQ(outcome.error, "") << fusion::StrategyName(strategy) << (streamed ? " streamed" : "")
                                 << "\n" << text;
    for (size_t g = 0; g < graphs.size(); ++g) {
      bool bad = false;
      for (size_t o = 0; o < graphs[g].outputs.size(); ++o) {
        bad |= !outcome.mismatch[first_output[g] + o].empty();
      }
      if (!bad) continue;
      ADD_FAILURE() << "graph " << g << " of module " << m << " differs with --fusion="
                    << fusion::StrategyName(strategy) << (streamed ? " (outputs streamed)" : "")
                    << "; reduced reproducer:\n"
                    << Reduce(graphs[g], strategy, streamed);
      return;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Modules, RandomGraphs, ::testing::Range(0, kModules));

}  // namespace
}  // namespace seam::testing
