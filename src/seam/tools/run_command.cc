// `seam run FILE`: run a module on inputs (.npy/.npz, or random from --seed)
// and print a summary of every output; --output saves them as .npz.
// --backend=cpu (the default) runs the default pipeline (or --passes=SPEC),
// plans fusion with --fusion=none|xla|stitch and runs compiled kernels;
// --backend=cuda does the same on an NVIDIA GPU;
// --backend=interp interprets, after --passes=SPEC when given. With
// --verify the module also runs as written in the interpreter, on the same
// inputs, and the outputs must agree.
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "seam/compiler/cpu_compiler.h"
#include "seam/compiler/cuda_compiler.h"
#include "seam/compiler/module_cache.h"
#include "seam/eval/arguments.h"
#include "seam/eval/compare.h"
#include "seam/eval/evaluator.h"
#include "seam/eval/npy.h"
#include "seam/eval/random_fill.h"
#include "seam/eval/verify.h"
#include "seam/passes/pipeline.h"
#include "seam/runtime/cuda_executable.h"
#include "seam/runtime/executable.h"
#include "seam/text/parser.h"
#include "seam/tools/cli_util.h"
#include "seam/tools/commands.h"
#include "seam/util/status_macros.h"

namespace seam {
namespace {

struct RunOptions {
  std::string file;
  std::string inputs;
  std::string output;
  uint64_t seed = 0;
  std::string backend = "cpu";
  std::string target = "sm_90";  // cuda-sim's
  std::string fusion = "stitch";
  std::string passes;
  std::string dump_to;
  bool verify = false;
  bool profile = false;
  bool excess_precision = true;  // XLA's default too
  bool no_epilogues = false;
  bool one_pass_statistics = true;
  bool online_softmax = true;
};

// Seconds from the command's start to a runnable module, by phase.
struct StartUp {
  double parse = 0;   // reading and parsing the HLO text
  double passes = 0;  // the graph passes
  bool module_cache_hit = false;  // the optimized module came from the module cache
};

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Runs the module as written on `arguments` and judges `results` against
// it (JudgeOutputs: an output over its bounds is let through when one-ulp
// nudges move the module as written by an eighth as much or more).
int VerifyAgainstOriginal(const RunOptions& options, const std::vector<Literal>& arguments,
                          const std::vector<NamedResult>& results) {
  absl::StatusOr<std::unique_ptr<Module>> original = LoadModule(options.file, "run");
  if (!original.ok()) return Fail(original.status());
  // Compiled kernels accumulate bf16/f16 reductions in f32; so does their oracle.
  const bool wide = options.backend != "interp";
  absl::StatusOr<std::vector<OutputVerdict>> verdicts =
      JudgeOutputs(**original, arguments, results, wide, options.seed);
  if (!verdicts.ok()) {
    if (verdicts.status().code() == absl::StatusCode::kFailedPrecondition) {
      std::printf("verify: FAILED: %s\n", std::string(verdicts.status().message()).c_str());
      return 1;
    }
    return FailAt(options.file, verdicts.status());
  }
  std::string sensitive, failed;  // outputs let through by their sensitivity; failures
  for (const OutputVerdict& v : *verdicts) {
    failed += v.failure;
    if (v.failure.empty() && !v.second_look.empty())
      sensitive += absl::StrCat("  ", v.second_look, "\n");
  }
  if (!sensitive.empty()) {
    std::printf(
        "verify: over the bounds but within %g times how far the module as written "
        "moves when its inputs and rounded results move by one ulp, or moved by its "
        "own magnitude (outputs that amplify rounding):\n%s",
        kSensitivityFactor, sensitive.c_str());
  }
  if (!failed.empty()) {
    std::printf("verify: FAILED: outputs differ from the module as written\n%s", failed.c_str());
    return 1;
  }
  ArrayError worst;
  std::string worst_name;
  for (const OutputVerdict& v : *verdicts) {
    if (!v.error.has_value()) continue;
    if (worst_name.empty() || v.error->max_relative > worst.max_relative) {
      worst = *v.error, worst_name = v.name;
    }
  }
  std::printf("verify: %zu output(s) match the module as written", verdicts->size());
  if (!worst_name.empty()) {
    std::printf("; farthest: %s, %s", worst_name.c_str(), FormatArrayError(worst).c_str());
  }
  std::printf("\n");
  return 0;
}

// Prints what was compiled and what runs without it (the interpreter, or
// on a GPU also the host's BLAS).
void PrintCompiled(const RunOptions& options, const StartUp& start_up,
                   const runtime::ExecutableStats& stats, const fusion::FusionPlan& plan) {
  bool cuda = options.backend != "cpu";
  const char* compiler = options.backend == "cuda-sim" ? "NVRTC and host C++"
                         : cuda                        ? "NVRTC"
                                                       : "C++";
  std::printf(
      "compiled: %lld kernel(s) (fusion %s; %lld memory-intensive kernels planned), "
      "%lld op kernel(s), %lld %s call(s), %lld alias(es); codegen %.3f s, %s %.3f s%s\n",
      static_cast<long long>(stats.compiled_kernels), options.fusion.c_str(),
      static_cast<long long>(plan.Totals().MemoryIntensiveKernels()),
      static_cast<long long>(stats.op_kernels), static_cast<long long>(stats.blas_calls),
      cuda ? "cuBLAS" : "BLAS", static_cast<long long>(stats.aliases), stats.codegen_seconds,
      compiler, stats.compile_seconds, stats.cache_hit ? " (cache hit)" : "");
  if (stats.epilogues > 0) {
    std::printf("epilogues: %lld library call(s) run the elementwise work on their result as "
                "they write it (seam plan shows which)\n",
                static_cast<long long>(stats.epilogues));
  }
  if (!stats.fallbacks.empty()) {
    std::printf(cuda ? "on the host: %zu op(s) or kernel(s) no GPU path covers\n"
                     : "interpreted: %zu op(s) or kernel(s) no compiled path covers\n",
                stats.fallbacks.size());
    for (const std::string& f : stats.fallbacks) std::printf("  %s\n", f.c_str());
  }
  const double total = start_up.parse + start_up.passes + stats.codegen_seconds +
                       stats.compile_seconds;
  const std::string front =
      start_up.module_cache_hit
          ? absl::StrFormat("optimized module from the cache %.1f", 1e3 * start_up.parse)
          : absl::StrFormat("parse %.1f, passes %.1f", 1e3 * start_up.parse,
                            1e3 * start_up.passes);
  std::printf("start-up: %.1f ms (%s, plan and codegen %.1f, %s %.1f)\n", 1e3 * total,
              front.c_str(), 1e3 * stats.codegen_seconds, compiler, 1e3 * stats.compile_seconds);
}

// Runs once more, warm (constants built, memory pooled), taking over the
// arguments input_output_alias donates as seam bench's runs do, and prints
// where that run's time went.
void PrintProfile(runtime::Executable& executable, const Module& module,
                  const std::vector<Literal>& arguments) {
  runtime::StepTimes before = executable.stats().time;
  std::vector<Literal> own = arguments;
  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<Literal> ran = executable.RunDonating(own, module.DonatedParameters());
  double total = SecondsSince(start);
  if (!ran.ok()) return;
  const runtime::StepTimes& t = executable.stats().time;
  std::printf("profile (a warm run, %.3f ms): kernels %.3f ms, op kernels %.3f ms, BLAS %.3f ms, "
              "interpreter %.3f ms, the rest %.3f ms\n",
              total * 1e3, (t.kernels - before.kernels) * 1e3,
              (t.op_kernels - before.op_kernels) * 1e3, (t.library - before.library) * 1e3,
              (t.interpreter - before.interpreter) * 1e3, (t.other - before.other) * 1e3);
}

// Plans, compiles and runs the module on the CPU or CUDA backend.
absl::StatusOr<Literal> RunCompiled(const RunOptions& options, const StartUp& start_up,
                                    const Module& module, const std::vector<Literal>& arguments,
                                    double& seconds) {
  absl::StatusOr<fusion::Strategy> strategy = fusion::StrategyByName(options.fusion);
  if (!strategy.ok()) return strategy.status();
  auto timed = [&](auto& executable, const fusion::FusionPlan& plan) {
    PrintCompiled(options, start_up, executable.stats(), plan);
    auto start = std::chrono::steady_clock::now();
    absl::StatusOr<Literal> result = executable.Run(arguments);
    seconds = SecondsSince(start);
    const runtime::ExecutableStats& stats = executable.stats();
    if (stats.estimated_peak_bytes > 0) {
      std::printf("memory: peak %.1f MiB measured, %.1f MiB estimated before the run\n",
                  stats.peak_bytes / (1 << 20), stats.estimated_peak_bytes / (1 << 20));
    }
    return result;
  };
  if (options.backend == "cuda" || options.backend == "cuda-sim") {
    compiler::CudaExecutableOptions cuda_options;
    cuda_options.strategy = *strategy;
    cuda_options.dump_to = options.dump_to;
    cuda_options.emulate = options.backend == "cuda-sim";
    cuda_options.target = options.target;
    absl::StatusOr<compiler::Compiled<runtime::CudaExecutable>> compiled =
        compiler::CompileForCudaDevice(module, cuda_options);
    if (!compiled.ok()) return compiled.status();
    return timed(**compiled, compiled->plan);
  }
  compiler::CpuOptions cpu_options;
  cpu_options.plan.strategy = *strategy;
  cpu_options.dump_to = options.dump_to;
  cpu_options.profile_steps = options.profile;
  cpu_options.plan.excess_precision = options.excess_precision;
  cpu_options.plan.library_epilogues = !options.no_epilogues;
  cpu_options.plan.one_pass_statistics = options.one_pass_statistics;
  cpu_options.plan.online_softmax = options.online_softmax;
  absl::StatusOr<compiler::Compiled<runtime::Executable>> compiled =
      compiler::CompileForCpu(module, cpu_options);
  if (!compiled.ok()) return compiled.status();
  absl::StatusOr<Literal> result = timed(**compiled, compiled->plan);
  if (result.ok() && options.profile) PrintProfile(**compiled, module, arguments);
  return result;
}

int Run(const RunOptions& options) {
  if (options.backend == "cuda") {
    if (absl::Status device = CudaBackendAvailable(); !device.ok()) return Fail(device);
  }
  bool compiled = options.backend != "interp";
  std::string spec = options.passes.empty() && compiled ? "default" : options.passes;
  absl::StatusOr<std::optional<Pipeline>> parsed = Pipeline::ParseUnlessNone(spec);
  if (!parsed.ok()) return Fail(parsed.status());
  std::optional<Pipeline> pipeline = std::move(*parsed);
  if (!pipeline.has_value() && options.verify && !compiled) {
    return Fail(absl::InvalidArgumentError("--verify compares against --passes=SPEC; give both"));
  }
  StartUp start_up;
  std::unique_ptr<Module> module;
  auto load = [&] { return LoadModule(options.file, "run"); };
  if (pipeline.has_value()) {
    PipelineOptions pipeline_options;
    pipeline_options.verify_each = options.verify;
    absl::StatusOr<compiler::OptimizedModule> optimized =
        compiler::LoadOptimizedModule(options.file, *pipeline, pipeline_options, load);
    if (!optimized.ok()) return Fail(optimized.status());
    module = std::move(optimized->module);
    start_up.parse = optimized->parse_seconds;
    start_up.passes = optimized->passes_seconds;
    start_up.module_cache_hit = optimized->cache_hit;
  } else {
    auto parse_start = std::chrono::steady_clock::now();
    absl::StatusOr<std::unique_ptr<Module>> loaded = load();
    if (!loaded.ok()) return Fail(loaded.status());
    module = std::move(*loaded);
    start_up.parse = SecondsSince(parse_start);
  }
  const Computation& entry = *module->entry();
  absl::Status interpretable = CheckInterpretable(*module);
  if (!interpretable.ok()) return FailAt(options.file, interpretable);

  absl::Status fits = CheckArgumentsFitInMemory(entry);
  if (!fits.ok()) return Fail(fits);
  std::vector<Literal> arguments;
  if (options.inputs.empty()) {
    arguments = RandomArguments(entry, options.seed);
  } else {
    absl::StatusOr<std::vector<Literal>> loaded = LoadArguments(entry, options.inputs);
    if (!loaded.ok()) return Fail(loaded.status());
    arguments = std::move(*loaded);
  }

  absl::StatusOr<Literal> result;
  double seconds = 0;
  if (compiled) {
    absl::StatusOr<Literal> run = RunCompiled(options, start_up, *module, arguments, seconds);
    if (!run.ok()) return FailAt(options.file, run.status());
    result = std::move(run);
  } else {
    auto start = std::chrono::steady_clock::now();
    Evaluator evaluator;
    result = evaluator.Run(*module, arguments);
    seconds = SecondsSince(start);
    if (!result.ok()) return FailAt(options.file, result.status());
  }
  std::vector<NamedResult> results = NameResults(entry, std::move(*result));
  std::printf("%s: %zu output(s) on backend %s in %.3f s\n", module->name().c_str(),
              results.size(), options.backend.c_str(), seconds);
  for (const NamedResult& r : results) std::printf("  %s\n", FormatSummary(r).c_str());
  if (!options.output.empty()) {
    std::vector<std::pair<std::string, const Literal*>> arrays;
    for (const NamedResult& r : results) {
      if (!r.value.shape().IsArray()) {
        return Fail(absl::InvalidArgumentError(absl::StrCat(
            "output '", r.name, "' is ", r.value.shape().ToString(false),
            "; only arrays can be saved")));
      }
      arrays.push_back({r.name, &r.value});
    }
    absl::Status written = WriteNpzFile(options.output, arrays);
    if (!written.ok()) return Fail(written);
  }
  if (options.verify) return VerifyAgainstOriginal(options, arguments, results);
  return 0;
}

}  // namespace

std::function<int()> AddRunCommand(CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* command = app.add_subcommand(
      "run", "Run a module on inputs and print a summary of each output");
  command->add_option("FILE", options->file, "HLO text file holding one module")->required();
  command->add_option("--inputs", options->inputs,
                      ".npy (one parameter) or .npz with one array per parameter, named after "
                      "it (or NumPy's arr_0, arr_1... in order); default: random inputs from "
                      "--seed");
  command->add_option("--seed", options->seed, "Seed for random inputs")
      ->check(NonNegativeInteger())
      ->default_val(0);
  command->add_option("--output", options->output, "Write the outputs to this .npz file");
  command
      ->add_option("--backend", options->backend,
                   "Where to run: cpu (compiled kernels), interp (reference interpreter), "
                   "cuda (an NVIDIA GPU) or cuda-sim (the CUDA kernels on the CPU, under an "
                   "emulation of CUDA's execution model that checks bounds, races and "
                   "barriers; slow)")
      ->check(CLI::IsMember({"cpu", "interp", "cuda", "cuda-sim"}))
      ->default_val("cpu");
  command
      ->add_option("--target", options->target,
                   "cuda-sim: the GPU emulated, sm_80 (A100) or sm_90 (H100)")
      ->check(CLI::IsMember({"sm_80", "sm_90"}))
      ->default_val("sm_90");
  CLI::Option* fusion = command
                            ->add_option("--fusion", options->fusion,
                                         "cpu, cuda: fusion strategy, none, xla or stitch")
                            ->check(CLI::IsMember({"none", "xla", "stitch"}))
                            ->default_val("stitch");
  command->add_option("--passes", options->passes,
                      "Run these graph passes first (a pipeline spec, `default`, or `none`); "
                      "cpu and cuda run `default` unless told otherwise");
  CLI::Option* dump_to = command->add_option(
      "--dump-to", options->dump_to,
      "cpu, cuda: write the fusion plan and the generated C++ or CUDA to this directory");
  command->add_flag("--verify", options->verify,
                    "Also run the module as written in the interpreter on the same inputs and "
                    "fail unless the outputs agree (each float output's worst error within 1% "
                    "of its largest magnitude and its rms error within 1e-4 relative, f32; "
                    "bf16 10% and 2e-2; an output over them passes if within 8x how far the "
                    "interpreter's own result moves when its inputs and rounded results move "
                    "by one ulp, or if that moves it by its own magnitude)");
  command->add_flag("--no-epilogues", options->no_epilogues,
                    "cpu: leave the elementwise work after each dot and convolution to the kernels "
                    "instead of running it on the library call's result as it is written");
  command->add_flag("--one-pass-statistics,!--no-one-pass-statistics", options->one_pass_statistics,
                    "cpu: a variance's sum of squared deviations folds in the pass of the mean it "
                    "is centred on (one read of the input fewer; the default); "
                    "--no-one-pass-statistics reads the input again for it, as written");
  command->add_flag("--online-softmax,!--no-online-softmax", options->online_softmax,
                    "cpu: a softmax's sum folds in the pass of its max as a running max and a "
                    "rescaled sum where the cost model says that saves reads (rows past a tile; "
                    "the default); --no-online-softmax keeps the two passes, as written");
  command->add_flag("--excess-precision,!--no-excess-precision", options->excess_precision,
                    "cpu: keep bf16/f16 arithmetic in f32 inside a kernel, rounding where a "
                    "value is stored (the default, as XLA's); with --no-excess-precision every "
                    "bf16/f16 result rounds, as in the interpreter");
  command->add_flag("--profile", options->profile,
                    "cpu: run once more after the first run and print where that run's time "
                    "went (kernels, op kernels, BLAS, interpreter, the rest)");
  return [options, fusion, dump_to]() {
    // The interpreter runs the module op by op: nothing is fused or dumped.
    if (options->backend == "interp") {
      for (const CLI::Option* ignored : {fusion, dump_to}) {
        if (ignored->count() == 0) continue;
        return Fail(absl::InvalidArgumentError(
            absl::StrCat(ignored->get_name(),
                         " does not apply to --backend=interp, which runs the module op "
                         "by op")));
      }
    }
    return Run(*options);
  };
}

}  // namespace seam
