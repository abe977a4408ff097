// Start-up of a module run before, by phase: reading and parsing the text
// and the default pipeline (or, from the module cache, reading the
// optimized module), the fusion plan, the kernels' programs and C++ source,
// and the kernel cache lookup with dlopen. Each phase's median over N runs
// (the first run, which fills the caches, is not counted), with and without
// the module cache, interleaved. This is what a user waits for before a
// module's first run.
// Usage: seam_startup_bench [--repeat N] [FILE...]; default: the Gemma-3 module.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "bench_util.h"
#include "seam/compiler/cpu_compiler.h"
#include "seam/compiler/module_cache.h"
#include "seam/fusion/planner.h"
#include "seam/passes/pipeline.h"
#include "seam/runtime/executable.h"
#include "seam/text/parser.h"

namespace {

double MillisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

struct Phases {
  std::vector<double> parse, passes, plan, codegen, cache, total;
};

// The module of `path` after the default pipeline: from the module cache,
// or parsed and optimized as if the cache were empty.
seam::compiler::OptimizedModule Optimize(const std::string& path, bool module_cache) {
  absl::StatusOr<seam::Pipeline> pipeline = seam::Pipeline::Parse("default");
  if (!pipeline.ok()) seam::bench::Die(pipeline.status());
  auto parse = [&] { return seam::ParseHloModule(ReadFile(path), path); };
  if (module_cache) {
    absl::StatusOr<seam::compiler::OptimizedModule> optimized =
        seam::compiler::LoadOptimizedModule(path, *pipeline, {}, parse);
    if (!optimized.ok()) seam::bench::Die(optimized.status());
    return std::move(*optimized);
  }
  seam::compiler::OptimizedModule optimized;
  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<seam::Module>> module = parse();
  if (!module.ok()) seam::bench::Die(module.status());
  optimized.parse_seconds = MillisecondsSince(start) / 1e3;
  start = std::chrono::steady_clock::now();
  if (absl::StatusOr<bool> changed = pipeline->Run(**module); !changed.ok()) {
    seam::bench::Die(changed.status());
  }
  optimized.passes_seconds = MillisecondsSince(start) / 1e3;
  optimized.module = std::move(*module);
  return optimized;
}

void TimeOnce(const std::string& path, bool module_cache, Phases& phases) {
  seam::compiler::OptimizedModule optimized = Optimize(path, module_cache);
  seam::Module& module = *optimized.module;
  const double parse = optimized.parse_seconds * 1e3;
  const double passes = optimized.passes_seconds * 1e3;

  // The plan on its own, to split Compile's codegen time into planning and
  // the rest; Compile plans again.
  auto plan_start = std::chrono::steady_clock::now();
  seam::compiler::CpuOptions options;
  absl::StatusOr<seam::fusion::FusionPlan> plan = seam::fusion::PlanModule(module, options.plan);
  if (!plan.ok()) seam::bench::Die(plan.status());
  const double plan_ms = MillisecondsSince(plan_start);

  auto compile_start = std::chrono::steady_clock::now();
  absl::StatusOr<seam::compiler::Compiled<seam::runtime::Executable>> executable =
      seam::compiler::CompileForCpu(module, options);
  if (!executable.ok()) seam::bench::Die(executable.status());
  const double compile = MillisecondsSince(compile_start);
  const seam::runtime::ExecutableStats& stats = (*executable)->stats();
  const double cache = stats.compile_seconds * 1e3;

  phases.parse.push_back(parse);
  phases.passes.push_back(passes);
  phases.plan.push_back(plan_ms);
  phases.codegen.push_back(compile - cache - plan_ms);
  phases.cache.push_back(cache);
  phases.total.push_back(parse + passes + compile);
}

}  // namespace

int main(int argc, char** argv) {
  auto [repeat, paths] = seam::bench::ParseRepeatAndFiles(argc, argv, 7);
  if (paths.empty()) paths.push_back(SEAM_SOURCE_ROOT "/../shared/hlo/xla_gemma3_1b_flax_call.hlo");
  std::printf("%-40s %-13s %7s %7s %7s %7s %7s %7s\n", "module (median ms)", "optimized by",
              "total", "parse", "passes", "plan", "codegen", "so");
  for (const std::string& path : paths) {
    Phases cached, uncached;
    TimeOnce(path, true, cached);  // fills the caches
    cached = Phases();
    for (int r = 0; r < repeat; ++r) {
      TimeOnce(path, true, cached);
      TimeOnce(path, false, uncached);
    }
    std::string name = path.substr(path.rfind('/') + 1);
    for (const auto& [phases, how] : {std::pair{&uncached, "passes"}, {&cached, "module cache"}}) {
      std::printf("%-40s %-13s %7.1f %7.1f %7.1f %7.1f %7.1f %7.1f\n", name.substr(0, 40).c_str(),
                  how, Median(phases->total), Median(phases->parse), Median(phases->passes),
                  Median(phases->plan), Median(phases->codegen), Median(phases->cache));
    }
  }
  return 0;
}
