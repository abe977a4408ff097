// `seam bench FILE...`: per module, the median time of each fusion strategy
// after a warm-up, side by side in one run with the machine's copy
// bandwidth: stitch's speed-up over xla and none, kernel counts, the plan's
// estimated DRAM bytes, and the achieved bandwidth (every input read once,
// every output written once, per second) as a fraction of the copy
// bandwidth. --json prints the same as one JSON object.
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "seam/eval/arguments.h"
#include "seam/passes/pipeline.h"
#include "seam/runtime/executable.h"
#include "seam/runtime/measure.h"
#include "seam/tools/cli_util.h"
#include "seam/tools/commands.h"
#include "seam/util/status_macros.h"

namespace seam {
namespace {

struct BenchOptions {
  std::vector<std::string> files;
  std::string backend = "cpu";
  std::string strategies = "none,xla,stitch";
  int repeat = 11;
  uint64_t seed = 0;
  bool json = false;
};

struct StrategyResult {
  runtime::Timing timing;
  int64_t kernels = 0;        // compiled kernels that launch
  int64_t library_calls = 0;  // BLAS dots and convolutions
  int64_t interpreted = 0;    // ops or kernels no compiled path covers
  double dram_bytes = 0;      // the plan's estimate
  double compile_s = 0;
};

struct Workload {
  std::string name;
  std::string file;
  double bytes = 0;  // inputs read once + outputs written once
  std::map<std::string, StrategyResult> strategies;
};

double ArrayBytes(const Shape& shape) {
  if (shape.IsTuple()) {
    double sum = 0;
    for (const Shape& element : shape.tuple_shapes()) sum += ArrayBytes(element);
    return sum;
  }
  return static_cast<double>(shape.ElementCount().value_or(0)) * DTypeByteSize(shape.dtype());
}

double MinimumTraffic(const Computation& entry) {
  double bytes = ArrayBytes(entry.root()->shape());
  for (const Instruction* param : entry.parameters()) {
    if (param != nullptr) bytes += ArrayBytes(param->shape());
  }
  return bytes;
}

absl::StatusOr<StrategyResult> Measure(const Module& module, fusion::Strategy strategy,
                                       const std::vector<Literal>& arguments, int repeat) {
  runtime::ExecutableOptions options;
  options.plan.strategy = strategy;
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      runtime::Executable::Compile(module, options);
  if (!executable.ok()) return executable.status();
  absl::Status failure;
  StrategyResult result;
  result.timing = runtime::TimeRuns(
      [&] {
        absl::StatusOr<Literal> out = (*executable)->Run(arguments);
        if (!out.ok()) {
          failure = out.status();
          return;
        }
        (*executable)->Recycle(std::move(*out));
      },
      repeat);
  if (!failure.ok()) return failure;
  const runtime::ExecutableStats& stats = (*executable)->stats();
  result.kernels = stats.compiled_kernels;
  result.library_calls = stats.blas_calls;
  result.interpreted = static_cast<int64_t>(stats.fallbacks.size());
  result.dram_bytes = (*executable)->plan().Totals().cost.dram_bytes();
  result.compile_s = stats.codegen_seconds + stats.compile_seconds;
  return result;
}

absl::StatusOr<Workload> BenchFile(const BenchOptions& options, const std::string& file,
                                   const std::vector<std::string>& strategies, int index,
                                   int count) {
  absl::StatusOr<std::unique_ptr<Module>> module = LoadModule(file, "bench");
  if (!module.ok()) return module.status();
  const Computation& entry = *(*module)->entry();
  SEAM_RETURN_IF_ERROR(CheckArgumentsFitInMemory(entry));
  Workload workload;
  workload.name = (*module)->name();
  workload.file = file;
  workload.bytes = MinimumTraffic(entry);
  std::vector<Literal> arguments = RandomArguments(entry, options.seed);
  absl::StatusOr<Pipeline> pipeline = Pipeline::Parse("default");
  if (!pipeline.ok()) return pipeline.status();
  absl::StatusOr<bool> changed = pipeline->Run(**module, PipelineOptions{});
  if (!changed.ok()) return changed.status();
  for (const std::string& name : strategies) {
    std::fprintf(stderr, "[%d/%d] %s: %s\n", index + 1, count, workload.name.c_str(), name.c_str());
    absl::StatusOr<fusion::Strategy> strategy = fusion::StrategyByName(name);
    if (!strategy.ok()) return strategy.status();
    absl::StatusOr<StrategyResult> result = Measure(**module, *strategy, arguments, options.repeat);
    if (!result.ok()) return result.status();
    workload.strategies[name] = *result;
  }
  return workload;
}

// stitch's speed-up over `base`, or 0 when either was not measured.
double SpeedUp(const Workload& w, const std::string& base) {
  auto stitch = w.strategies.find("stitch"), other = w.strategies.find(base);
  if (stitch == w.strategies.end() || other == w.strategies.end()) return 0;
  return other->second.timing.median_s / stitch->second.timing.median_s;
}

// The fastest measured strategy's bandwidth: stitch when measured.
double AchievedGBps(const Workload& w) {
  auto it = w.strategies.find("stitch");
  if (it == w.strategies.end()) it = w.strategies.begin();
  return w.bytes / it->second.timing.median_s / 1e9;
}

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      absl::StrAppendFormat(&out, "\\u%04x", c);
      continue;
    }
    out += c;
  }
  return out + "\"";
}

void PrintJson(double copy_gbps, const std::vector<Workload>& workloads) {
  std::vector<std::string> items;
  for (const Workload& w : workloads) {
    std::vector<std::string> strategies;
    for (const auto& [name, r] : w.strategies) {
      double gbps = w.bytes / r.timing.median_s / 1e9;
      strategies.push_back(absl::StrFormat(
          "%s: {\"median_ms\": %.4f, \"min_ms\": %.4f, \"max_ms\": %.4f, \"runs\": %d, "
          "\"kernels\": %d, \"library_calls\": %d, \"interpreted\": %d, \"dram_bytes\": %.0f, "
          "\"gbps\": %.3f, \"of_copy\": %.4f, \"compile_s\": %.3f}",
          JsonString(name), 1e3 * r.timing.median_s, 1e3 * r.timing.min_s, 1e3 * r.timing.max_s,
          r.timing.runs, r.kernels, r.library_calls, r.interpreted, r.dram_bytes, gbps,
          gbps / copy_gbps, r.compile_s));
    }
    items.push_back(absl::StrFormat(
        "{\"name\": %s, \"file\": %s, \"bytes\": %.0f, \"stitch_over_xla\": %.4f, "
        "\"stitch_over_none\": %.4f, \"strategies\": {%s}}",
        JsonString(w.name), JsonString(w.file), w.bytes, SpeedUp(w, "xla"), SpeedUp(w, "none"),
        absl::StrJoin(strategies, ", ")));
  }
  std::printf("{\"backend\": \"cpu\", \"copy_gbps\": %.3f, \"workloads\": [%s]}\n", copy_gbps,
              absl::StrJoin(items, ", ").c_str());
}

void PrintTable(double copy_gbps, const std::vector<std::string>& strategies,
                const std::vector<Workload>& workloads) {
  std::printf("copy bandwidth: %.1f GB/s (OpenMP copy, the kernels' compiler and flags)\n",
              copy_gbps);
  std::printf("%-34s", "workload");
  for (const std::string& s : strategies) std::printf(" %10s", (s + " ms").c_str());
  std::printf(" %8s %8s %7s %8s %7s\n", "st/xla", "st/none", "kernels", "GB/s", "of copy");
  for (const Workload& w : workloads) {
    std::printf("%-34s", w.name.substr(0, 34).c_str());
    for (const std::string& s : strategies) {
      std::printf(" %10.3f", 1e3 * w.strategies.at(s).timing.median_s);
    }
    std::vector<std::string> kernels;
    for (const std::string& s : strategies) kernels.push_back(absl::StrCat(w.strategies.at(s).kernels));
    double gbps = AchievedGBps(w);
    std::printf(" %7.2fx %7.2fx %7s %8.1f %6.0f%%\n", SpeedUp(w, "xla"), SpeedUp(w, "none"),
                absl::StrJoin(kernels, "/").c_str(), gbps, 100 * gbps / copy_gbps);
  }
}

int Bench(const BenchOptions& options) {
  if (options.backend != "cpu") {
    return Fail(absl::UnavailableError(
        absl::StrCat("--backend=", options.backend, ": not available in this build")));
  }
  std::vector<std::string> strategies = absl::StrSplit(options.strategies, ',', absl::SkipEmpty());
  for (const std::string& s : strategies) {
    absl::StatusOr<fusion::Strategy> strategy = fusion::StrategyByName(s);
    if (!strategy.ok()) return Fail(strategy.status());
  }
  absl::StatusOr<double> copy_gbps = runtime::CopyBandwidthGBps(options.repeat);
  if (!copy_gbps.ok()) return Fail(copy_gbps.status());
  std::vector<Workload> workloads;
  for (size_t k = 0; k < options.files.size(); ++k) {
    absl::StatusOr<Workload> w = BenchFile(options, options.files[k], strategies,
                                           static_cast<int>(k),
                                           static_cast<int>(options.files.size()));
    if (!w.ok()) return FailAt(options.files[k], w.status());
    workloads.push_back(std::move(*w));
  }
  if (options.json) {
    PrintJson(*copy_gbps, workloads);
  } else {
    PrintTable(*copy_gbps, strategies, workloads);
  }
  return 0;
}

}  // namespace

std::function<int()> AddBenchCommand(CLI::App& app) {
  auto options = std::make_shared<BenchOptions>();
  CLI::App* command = app.add_subcommand(
      "bench", "Time modules under each fusion strategy against the machine's copy bandwidth");
  command->add_option("FILES", options->files, "HLO text files, one module each")->required();
  command->add_option("--backend", options->backend, "Where to run: cpu")->default_val("cpu");
  command->add_option("--strategies", options->strategies,
                      "Comma-separated fusion strategies to time (none, xla, stitch)")
      ->default_val("none,xla,stitch");
  command->add_option("--repeat", options->repeat, "Timed runs per strategy, after one warm-up")
      ->check(CLI::PositiveNumber)
      ->default_val(11);
  command->add_option("--seed", options->seed, "Seed for the random inputs")->default_val(0);
  command->add_flag("--json", options->json, "Print one JSON object instead of a table");
  return [options]() { return Bench(*options); };
}

}  // namespace seam
