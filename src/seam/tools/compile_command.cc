// `seam compile FILE --backend=cuda --target=sm_90`: compile every kernel
// of a module ahead of time, without a device: the default pipeline (or
// --passes=SPEC), fusion planned for the target's GPU, CUDA C++ rendered and
// compiled to PTX by NVRTC. Prints what was compiled; --emit=cuda prints
// the kernels' source (no prelude; without NVRTC); --dump-to=DIR writes the
// .cu, .ptx and .cubin. `--backend=cpu --emit=cpp` prints the C++ the CPU
// backend would build for this machine (--dump-to=DIR: plan.txt and
// kernels.cc).
#include <cstdio>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "seam/compiler/cpu_compiler.h"
#include "seam/compiler/cuda_compiler.h"
#include "seam/fusion/cost_model.h"
#include "seam/tools/cli_util.h"
#include "seam/tools/commands.h"

namespace seam {
namespace {

struct CompileOptions {
  std::string file;
  std::string backend = "cuda";
  std::string target = "sm_90";
  std::string fusion = "stitch";
  std::string passes = "default";
  std::string emit = "summary";
  std::string dump_to;
};

void PrintKernels(const compiler::CudaProgram& program) {
  for (const codegen::CudaKernel& k : program.kernels) {
    std::printf("// %s: %lld threads, %lld bytes shared, up to %lld blocks%s\n%s\n",
                k.name.c_str(), static_cast<long long>(k.threads),
                static_cast<long long>(k.shared_bytes), static_cast<long long>(k.max_blocks),
                k.grid_barriers ? ", cooperative (grid barriers)" : "", k.source.c_str());
  }
}

// The CPU backend's C++ for this machine, rendered, not built.
int RenderCpu(const CompileOptions& options, const Module& module, fusion::Strategy strategy) {
  if (options.emit != "cpp") {
    return Fail(absl::InvalidArgumentError("--backend=cpu emits cpp only (--emit=cpp)"));
  }
  compiler::CpuOptions cpu;
  cpu.plan.strategy = strategy;
  cpu.dump_to = options.dump_to;
  absl::StatusOr<std::string> source = compiler::RenderForCpu(module, cpu);
  if (!source.ok()) return FailAt(options.file, source.status());
  std::printf("%s", source->c_str());
  return 0;
}

int Compile(const CompileOptions& options) {
  absl::StatusOr<fusion::Strategy> strategy = fusion::StrategyByName(options.fusion);
  if (!strategy.ok()) return Fail(strategy.status());
  absl::StatusOr<std::unique_ptr<Module>> module = LoadModule(options.file, "compile");
  if (!module.ok()) return Fail(module.status());
  absl::Status passed = RunPassSpec(**module, options.passes);
  if (!passed.ok()) return FailAt(options.file, passed);
  WarnUnrunnable(options.file, **module);
  if (options.backend == "cpu") return RenderCpu(options, **module, *strategy);
  if (options.emit == "cpp") {
    return Fail(absl::InvalidArgumentError("--emit=cpp is the CPU backend's (--backend=cpu)"));
  }
  // Printing the source needs no NVRTC; PTX (printed or written) does.
  bool render_only = options.emit == "cuda" && options.dump_to.empty();
  absl::StatusOr<compiler::CudaProgram> program =
      render_only ? compiler::RenderForCuda(**module, *strategy, options.target)
                  : compiler::CompileForCuda(**module, *strategy, options.target);
  if (!program.ok()) return FailAt(options.file, program.status());
  if (!options.dump_to.empty()) {
    absl::Status dumped =
        compiler::WriteCudaProgram(options.dump_to, (*module)->name(), options.target, *program);
    if (!dumped.ok()) return Fail(dumped);
  }
  if (options.emit == "cuda") {
    PrintKernels(*program);
    return 0;
  }
  if (options.emit == "ptx") {
    std::printf("%s", program->ptx.text.c_str());
    return 0;
  }
  std::printf("%s: %zu kernel(s) as %zu distinct CUDA kernel(s) for %s (fusion %s), %zu KB of "
              "PTX; codegen %.3f s, NVRTC %.3f s%s\n",
              (*module)->name().c_str(), program->symbol_of.size(), program->kernels.size(),
              options.target.c_str(),
              options.fusion.c_str(), program->ptx.text.size() / 1024, program->codegen_seconds,
              program->ptx.seconds, program->ptx.cache_hit ? " (cache hit)" : "");
  // Resource feedback: what each kernel uses, how many blocks an SM holds,
  // the grid it launches, and the plan's estimate with that occupancy.
  const target::DeviceSpec& device = program->plan.device;
  std::printf("%-14s %7s %5s %8s %7s %9s %6s %11s %11s\n", "kernel", "threads", "regs",
              "smem", "spills", "blocks/SM", "grid", "assumed us", "measured us");
  for (size_t i = 0; i < program->kernels.size(); ++i) {
    const codegen::CudaKernel& k = program->kernels[i];
    const runtime::CudaKernelResources& r = program->resources[i];
    double assumed = 0, measured = 0;
    fusion::CompiledLaunch launch{k.threads, r.resident_blocks_per_unit};
    for (const auto& [planned, symbol] : program->symbol_of) {
      if (symbol != k.name) continue;
      assumed += fusion::EstimateTimeUs(fusion::EstimateKernelCost(*planned, device), device);
      measured += fusion::EstimateTimeUs(
          fusion::EstimateKernelCost(*planned, device, &launch), device);
    }
    std::printf("%-14s %7lld %5lld %8lld %7lld %9lld %6lld %11.1f %11.1f\n", k.name.c_str(),
                static_cast<long long>(k.threads), static_cast<long long>(r.used.registers),
                static_cast<long long>(r.used.static_shared_bytes + r.used.dynamic_shared_bytes),
                static_cast<long long>(r.used.spill_bytes),
                static_cast<long long>(r.resident_blocks_per_unit), static_cast<long long>(r.grid),
                assumed, measured);
  }
  for (const std::string& r : program->relaxed) std::printf("relaxed %s\n", r.c_str());
  if (!program->not_generated.empty()) {
    std::printf("not generated: %zu kernel(s) (they would run in the interpreter)\n",
                program->not_generated.size());
    for (const std::string& why : program->not_generated) std::printf("  %s\n", why.c_str());
  }
  return 0;
}

}  // namespace

std::function<int()> AddCompileCommand(CLI::App& app) {
  auto options = std::make_shared<CompileOptions>();
  CLI::App* command = app.add_subcommand(
      "compile",
      "Compile a module's kernels ahead of time for a GPU (no device needed), or print the CPU's");
  command->add_option("FILE", options->file, "HLO text file holding one module")->required();
  command
      ->add_option("--backend", options->backend,
                   "cuda, or cpu (with --emit=cpp: the C++ the CPU backend builds when it runs)")
      ->check(CLI::IsMember({"cuda", "cpu"}))
      ->default_val("cuda");
  command->add_option("--target", options->target, "GPU architecture: sm_80 (A100) or sm_90 (H100)")
      ->check(CLI::IsMember({"sm_80", "sm_90"}))
      ->default_val("sm_90");
  command->add_option("--fusion", options->fusion, "none, xla or stitch")
      ->check(CLI::IsMember({"none", "xla", "stitch"}))
      ->default_val("stitch");
  command->add_option("--passes", options->passes,
                      "Pipeline spec run first (default: the default pipeline; `none` for the "
                      "module as written)");
  command
      ->add_option("--emit", options->emit,
                   "What to print: summary, cuda (the kernels' source), ptx, or cpp (the CPU "
                   "kernels' source)")
      ->check(CLI::IsMember({"summary", "cuda", "ptx", "cpp"}));
  command->add_option("--dump-to", options->dump_to,
                      "Write <module>.cu, <module>.<target>.ptx and .cubin and the plan to this directory");
  return [options]() { return Compile(*options); };
}

}  // namespace seam
