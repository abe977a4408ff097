// `seam bench FILE...`: per module, the median time of each fusion strategy
// after a warm-up, timed in interleaved rounds (each strategy once per
// round), side by side in one run with the machine's copy bandwidth:
// stitch's speed-up over xla and none (the median of the rounds' ratios),
// kernel counts, the plan's estimated DRAM bytes, and the achieved
// bandwidth (every input read once, every output written once, per second)
// as a fraction of the copy bandwidth. --json prints the same as one JSON
// object.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "seam/compiler/cpu_compiler.h"
#include "seam/compiler/cuda_compiler.h"
#include "seam/eval/arguments.h"
#include "seam/fusion/calibration.h"
#include "seam/runtime/cuda_executable.h"
#include "seam/runtime/executable.h"
#include "seam/runtime/measure.h"
#include "seam/tools/cli_util.h"
#include "seam/tools/commands.h"
#include "seam/util/files.h"
#include "seam/util/status_macros.h"

namespace seam {
namespace {

struct BenchOptions {
  std::vector<std::string> files;
  std::string backend = "cpu";
  std::string strategies = "none,xla,stitch";
  // Graph passes run before planning: A/B timings of pass orders (say,
  // the default pipeline against an order found by `seam gym`).
  std::string passes = "default";
  int repeat = 11;
  uint64_t seed = 0;
  // The arguments (.npy/.npz) instead of random ones: one file only.
  std::string inputs;
  bool json = false;
  // CPU kernels keep bf16/f16 arithmetic in f32 until stored (XLA's default).
  bool excess_precision = true;
  // Library calls run no epilogues (see seam run --help).
  bool no_epilogues = false;
  // Variances fold in their mean's pass (see seam run --help).
  bool one_pass_statistics = true;
  bool online_softmax = true;
  // Time every kernel and check the cost model against the times; write
  // the fitted constants to calibration_out when given.
  bool calibrate = false;
  std::string calibration_out;
};

struct StrategyResult {
  runtime::Timing timing;
  std::vector<double> seconds;  // per round of the interleaved timing
  int64_t kernels = 0;        // compiled kernels that launch
  int64_t library_calls = 0;  // BLAS dots and convolutions
  int64_t interpreted = 0;    // ops or kernels no compiled path covers
  double dram_bytes = 0;      // the plan's estimate
  double compile_s = 0;
  std::vector<fusion::KernelSample> samples;  // with --calibrate
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

// What a strategy compiled, called and interpreted, and what it cost to
// compile, beside its times.
void CountWhatRan(const runtime::ExecutableStats& stats, const fusion::FusionPlan& plan,
                  StrategyResult& result) {
  result.kernels = stats.compiled_kernels;
  result.library_calls = stats.blas_calls;
  result.interpreted = static_cast<int64_t>(stats.fallbacks.size());
  result.dram_bytes = plan.Totals().cost.dram_bytes();
  result.compile_s = stats.codegen_seconds + stats.compile_seconds;
}

// A strategy compiled and warmed up (first touch, thread pool), ready to
// be timed beside the others; `finish` adds what ran and the kernels'
// times once the timing is over.
struct Contender {
  runtime::TimedRun run;
  std::function<absl::Status(StrategyResult&)> finish;
};

absl::StatusOr<Contender> PrepareCpu(const Module& module, fusion::Strategy strategy,
                                     const std::vector<Literal>& arguments,
                                     const BenchOptions& bench) {
  compiler::CpuOptions options;
  options.plan.strategy = strategy;
  options.plan.excess_precision = bench.excess_precision;
  options.plan.library_epilogues = !bench.no_epilogues;
  options.plan.one_pass_statistics = bench.one_pass_statistics;
  options.plan.online_softmax = bench.online_softmax;
  options.profile_kernels = bench.calibrate;
  SEAM_ASSIGN_OR_RETURN(compiler::Compiled<runtime::Executable> compiled,
                        compiler::CompileForCpu(module, options));
  std::shared_ptr<runtime::Executable> executable = std::move(compiled.executable);
  auto plan = std::make_shared<fusion::FusionPlan>(std::move(compiled.plan));
  // Arguments the module lets a run take over (input_output_alias) are
  // given a fresh copy before each run, untimed, as XLA's donated buffers
  // are put back between runs.
  const std::vector<int64_t> donated = module.DonatedParameters();
  auto own = std::make_shared<std::vector<Literal>>(arguments);
  auto run = [executable, &arguments, own, donated]() -> absl::StatusOr<double> {
    for (int64_t p : donated) {
      if (p < static_cast<int64_t>(own->size())) (*own)[p] = arguments[p];
    }
    auto start = std::chrono::steady_clock::now();
    SEAM_ASSIGN_OR_RETURN(Literal out, executable->RunDonating(*own, donated));
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    executable->Recycle(std::move(out));
    return seconds;
  };
  SEAM_RETURN_IF_ERROR(run().status());
  executable->ClearKernelProfile();  // the warm-up stays out of the kernel profile
  Contender contender;
  contender.run = run;
  contender.finish = [executable, plan](StrategyResult& result) {
    for (const runtime::KernelProfile& p : executable->kernel_profile()) {
      if (p.launches == 0) continue;
      const fusion::Kernel& kernel = plan->computations[p.computation].kernels[p.kernel];
      result.samples.push_back({kernel.cost, 1e6 * p.seconds / p.launches});
    }
    CountWhatRan(executable->stats(), *plan, result);
    return absl::OkStatus();
  };
  return contender;
}

// The same on the GPU: arguments sent once, each run timed by events on
// the stream from before its first launch to after its last (so host time
// spent queueing launches, library calls and any host fallback's transfers
// counts too), results handed back before the next run.
absl::StatusOr<Contender> PrepareCuda(const Module& module, fusion::Strategy strategy,
                                      const std::vector<Literal>& arguments, bool emulate) {
  compiler::CudaExecutableOptions options;
  options.strategy = strategy;
  options.emulate = emulate;
  SEAM_ASSIGN_OR_RETURN(compiler::Compiled<runtime::CudaExecutable> compiled,
                        compiler::CompileForCudaDevice(module, options));
  std::shared_ptr<runtime::CudaExecutable> executable = std::move(compiled.executable);
  auto plan = std::make_shared<fusion::FusionPlan>(std::move(compiled.plan));
  SEAM_ASSIGN_OR_RETURN(std::vector<runtime::DeviceValue> uploaded, executable->Upload(arguments));
  auto sent = std::make_shared<std::vector<runtime::DeviceValue>>(std::move(uploaded));
  auto run = [executable, sent]() -> absl::Status {
    return executable->RunOnDevice(*sent).status();
  };
  SEAM_RETURN_IF_ERROR(run());
  Contender contender;
  contender.run = [executable, run]() { return executable->device().ElapsedSeconds(run); };
  contender.finish = [executable, plan](StrategyResult& result) {
    // A kernel that faulted surfaces here, not in the events' times.
    SEAM_RETURN_IF_ERROR(executable->device().Synchronize());
    CountWhatRan(executable->stats(), *plan, result);
    return absl::OkStatus();
  };
  return contender;
}

absl::StatusOr<Workload> BenchModule(const BenchOptions& options, std::optional<Pipeline>& passes,
                                     const std::string& file, std::unique_ptr<Module> module,
                                     const std::vector<std::string>& strategies, int index,
                                     int count) {
  const Computation& entry = *module->entry();
  SEAM_RETURN_IF_ERROR(CheckArgumentsFitInMemory(entry));
  Workload workload;
  workload.name = module->name();
  workload.file = file;
  workload.bytes = MinimumTraffic(entry);
  std::vector<Literal> arguments;
  if (options.inputs.empty()) {
    arguments = RandomArguments(entry, options.seed);
  } else {
    SEAM_ASSIGN_OR_RETURN(arguments, LoadArguments(entry, options.inputs));
  }
  if (passes.has_value()) SEAM_RETURN_IF_ERROR(passes->Run(*module, PipelineOptions{}).status());
  std::vector<Contender> contenders;
  for (const std::string& name : strategies) {
    std::fprintf(stderr, "[%d/%d] %s: compiling %s\n", index + 1, count, workload.name.c_str(),
                 name.c_str());
    SEAM_ASSIGN_OR_RETURN(fusion::Strategy strategy, fusion::StrategyByName(name));
    SEAM_ASSIGN_OR_RETURN(
        Contender contender,
        options.backend != "cpu"
            ? PrepareCuda(*module, strategy, arguments, options.backend == "cuda-sim")
            : PrepareCpu(*module, strategy, arguments, options));
    contenders.push_back(std::move(contender));
  }
  std::fprintf(stderr, "[%d/%d] %s: timing, %d rounds\n", index + 1, count, workload.name.c_str(),
               options.repeat);
  std::vector<runtime::TimedRun> runs;
  for (const Contender& c : contenders) runs.push_back(c.run);
  SEAM_ASSIGN_OR_RETURN(std::vector<std::vector<double>> seconds,
                        runtime::TimeInterleaved(runs, options.repeat));
  for (size_t k = 0; k < strategies.size(); ++k) {
    StrategyResult& result = workload.strategies[strategies[k]];
    result.seconds = seconds[k];
    result.timing = runtime::Summarize(std::move(seconds[k]));
    SEAM_RETURN_IF_ERROR(contenders[k].finish(result));
  }
  return workload;
}

// stitch's speed-up over `base` (the median of the rounds' ratios), or 0
// when either was not measured.
double SpeedUp(const Workload& w, const std::string& base) {
  auto stitch = w.strategies.find("stitch"), other = w.strategies.find(base);
  if (stitch == w.strategies.end() || other == w.strategies.end()) return 0;
  return runtime::MedianRatio(other->second.seconds, stitch->second.seconds);
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

void PrintJson(const std::string& backend, const std::string& passes, double copy_gbps, const std::vector<Workload>& workloads,
               const std::string& cost_model) {
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
  std::printf("{\"backend\": %s, \"passes\": %s, \"copy_gbps\": %.3f, \"workloads\": [%s]%s}\n",
              JsonString(backend).c_str(), JsonString(passes).c_str(), copy_gbps,
              absl::StrJoin(items, ", ").c_str(),
              cost_model.empty() ? "" : absl::StrCat(", \"cost_model\": ", cost_model).c_str());
}

void PrintTable(const std::string& backend, double copy_gbps,
                const std::vector<std::string>& strategies, const std::vector<Workload>& workloads) {
  if (backend == "cuda-sim") {
    std::printf(
        "cuda-sim: the CUDA kernels emulated on the CPU; these times are the emulator's, "
        "not a GPU's\n");
  }
  std::printf("copy bandwidth: %.1f GB/s (%s)\n", copy_gbps,
              backend == "cuda" ? "device-to-device copy of 1 GiB, timed by events"
                                : "pool copy, the kernels' compiler and flags");
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

struct CostModelCheck {
  fusion::ModelAccuracy before, after;
  target::DeviceSpec calibrated;
};

// The cost model's estimates of every timed kernel against the times, as
// planned and after fitting the host's constants to them.
CostModelCheck CheckCostModel(const std::vector<Workload>& workloads, double copy_gbps) {
  std::vector<fusion::KernelSample> samples;
  for (const Workload& w : workloads) {
    for (const auto& [name, r] : w.strategies) {
      samples.insert(samples.end(), r.samples.begin(), r.samples.end());
    }
  }
  target::DeviceSpec host = target::HostCpuSpec();
  CostModelCheck check;
  check.before = fusion::Accuracy(samples, host);
  check.calibrated = fusion::Calibrate(host, samples, copy_gbps);
  check.after = fusion::Accuracy(samples, check.calibrated);
  return check;
}

std::string AccuracyJson(const fusion::ModelAccuracy& a) {
  return absl::StrFormat(
      "{\"rank_correlation\": %.4f, \"median_abs_log2_error\": %.4f, \"rms_log2_error\": %.4f}",
      a.rank_correlation, a.median_abs_log2_error, a.rms_log2_error);
}

std::string ConstantsJson(const target::DeviceSpec& d) {
  return absl::StrFormat(
      "{\"dram_gbps\": %.3f, \"cache_gbps\": %.3f, \"flops_per_ns\": %.4f, "
      "\"launch_us\": %.4f, \"grid_barrier_us\": %.4f}",
      d.dram_gbps, d.cache_gbps, d.flops_per_ns, d.launch_us, d.grid_barrier_us);
}

// The machine's copy bandwidth on the backend timed (a median of at most 11
// copies: many rounds of a tiny module must not mean as many 512 MB copies).
absl::StatusOr<double> CopyBandwidth(const BenchOptions& options) {
  const int repeat = std::min(options.repeat, 11);
  if (options.backend != "cuda") return runtime::CopyBandwidthGBps(repeat);
  SEAM_ASSIGN_OR_RETURN(std::unique_ptr<runtime::cuda::Context> context, runtime::cuda::Context::Open());
  return runtime::DeviceCopyBandwidthGBps(*context, repeat);
}

int Bench(const BenchOptions& options) {
  if (options.backend != "cpu") {
    if (options.backend == "cuda") {
      if (absl::Status device = CudaBackendAvailable(); !device.ok()) return Fail(device);
    }
    if (options.calibrate) {
      return Fail(absl::InvalidArgumentError("--calibrate fits the CPU's constants: use --backend=cpu"));
    }
  }
  if (!options.inputs.empty() && options.files.size() != 1) {
    return Fail(absl::InvalidArgumentError("--inputs gives one module's arguments: bench one file"));
  }
  std::vector<std::string> strategies = absl::StrSplit(options.strategies, ',', absl::SkipEmpty());
  if (strategies.empty()) {
    return Fail(absl::InvalidArgumentError("--strategies: name one or more of none, xla, stitch"));
  }
  for (size_t k = 0; k < strategies.size(); ++k) {
    absl::StatusOr<fusion::Strategy> strategy = fusion::StrategyByName(strategies[k]);
    if (!strategy.ok()) return Fail(strategy.status());
    if (std::find(strategies.begin(), strategies.begin() + k, strategies[k]) !=
        strategies.begin() + k) {
      return Fail(absl::InvalidArgumentError(
          absl::StrCat("--strategies: '", strategies[k], "' is named twice")));
    }
  }
  // Parsed before anything is timed: a typo fails fast.
  absl::StatusOr<std::optional<Pipeline>> passes = Pipeline::ParseUnlessNone(options.passes);
  if (!passes.ok()) return Fail(passes.status());
  absl::StatusOr<double> copy_gbps = CopyBandwidth(options);
  if (!copy_gbps.ok()) return Fail(copy_gbps.status());
  std::vector<Workload> workloads;
  for (size_t k = 0; k < options.files.size(); ++k) {
    // Load errors are complete already; later ones may point into the file.
    absl::StatusOr<std::unique_ptr<Module>> module = LoadModule(options.files[k], "bench");
    if (!module.ok()) return Fail(module.status());
    absl::StatusOr<Workload> w =
        BenchModule(options, *passes, options.files[k], std::move(*module), strategies,
                    static_cast<int>(k), static_cast<int>(options.files.size()));
    if (!w.ok()) return FailAt(options.files[k], w.status());
    workloads.push_back(std::move(*w));
  }
  std::optional<CostModelCheck> check;
  if (options.calibrate) check = CheckCostModel(workloads, *copy_gbps);
  if (options.json) {
    std::string cost_model;
    if (check.has_value()) {
      cost_model = absl::StrFormat(
          "{\"kernels\": %d, \"as_planned\": %s, \"calibrated\": %s, \"constants\": %s}",
          check->before.samples, AccuracyJson(check->before), AccuracyJson(check->after),
          ConstantsJson(check->calibrated));
    }
    PrintJson(options.backend, options.passes, *copy_gbps, workloads, cost_model);
  } else {
    PrintTable(options.backend, *copy_gbps, strategies, workloads);
    if (check.has_value()) {
      std::printf(
          "cost model, %d kernels: rank correlation %.3f, |log2(estimate/measured)| median %.2f "
          "rms %.2f as planned; %.3f, %.2f, %.2f calibrated (DRAM %.1f GB/s, L2 %.1f GB/s, "
          "%.2f ops/ns, region %.2f us, grid barrier %.2f us)\n",
          check->before.samples, check->before.rank_correlation,
          check->before.median_abs_log2_error, check->before.rms_log2_error,
          check->after.rank_correlation, check->after.median_abs_log2_error,
          check->after.rms_log2_error, check->calibrated.dram_gbps,
          check->calibrated.cache_gbps, check->calibrated.flops_per_ns,
          check->calibrated.launch_us, check->calibrated.grid_barrier_us);
    }
  }
  if (check.has_value() && !options.calibration_out.empty()) {
    absl::Status written =
        WriteFile(options.calibration_out, ConstantsJson(check->calibrated) + "\n");
    if (!written.ok()) return Fail(written);
  }
  return 0;
}

}  // namespace

std::function<int()> AddBenchCommand(CLI::App& app) {
  auto options = std::make_shared<BenchOptions>();
  CLI::App* command = app.add_subcommand(
      "bench", "Time modules under each fusion strategy against the machine's copy bandwidth");
  command->add_option("FILES", options->files, "HLO text files, one module each")->required();
  command
      ->add_option("--backend", options->backend,
                   "Where to run: cpu, cuda (an NVIDIA GPU) or cuda-sim (the CUDA kernels "
                   "emulated on the CPU: its times say nothing of a GPU's)")
      ->check(CLI::IsMember({"cpu", "cuda", "cuda-sim"}))
      ->default_val("cpu");
  command->add_option("--strategies", options->strategies,
                      "Comma-separated fusion strategies to time (none, xla, stitch)")
      ->default_val("none,xla,stitch");
  command->add_option("--passes", options->passes,
                      "Graph passes run before planning: a pipeline spec, `default` or `none`")
      ->default_val("default");
  command
      ->add_option("--repeat", options->repeat,
                   "Rounds of timed runs, each strategy once per round, after one warm-up")
      ->check(CLI::Range(1, 1000000))
      ->default_val(11);
  command->add_option("--seed", options->seed, "Seed for the random inputs")
      ->check(NonNegativeInteger())
      ->default_val(0);
  command->add_option("--inputs", options->inputs,
                      "Arguments from a .npy/.npz file (arrays named after the parameters, or "
                      "NumPy's arr_0, arr_1... in order) "
                      "instead of random ones; one module only");
  command->add_flag("--json", options->json, "Print one JSON object instead of a table");
  command->add_flag("--excess-precision,!--no-excess-precision", options->excess_precision,
                    "cpu: keep bf16/f16 arithmetic in f32 inside a kernel (the default, as XLA's); "
                    "see seam run --help");
  command->add_flag("--no-epilogues", options->no_epilogues,
                    "cpu: library calls leave the elementwise work after them to the kernels; "
                    "see seam run --help");
  command->add_flag("--one-pass-statistics,!--no-one-pass-statistics", options->one_pass_statistics,
                    "cpu: see seam run --help");
  command->add_flag("--online-softmax,!--no-online-softmax", options->online_softmax,
                    "cpu: see seam run --help");
  CLI::Option* calibrate =
      command->add_flag("--calibrate", options->calibrate,
                        "Time every kernel, report the cost model's rank correlation and error "
                        "against the times, and fit the host's constants to them");
  command
      ->add_option("--calibration-out", options->calibration_out,
                   "With --calibrate: write the fitted constants (JSON) here; "
                   "SEAM_CPU_CALIBRATION=FILE makes planning use them")
      ->needs(calibrate);
  return [options]() { return Bench(*options); };
}

}  // namespace seam
