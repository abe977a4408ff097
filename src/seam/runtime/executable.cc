#include "seam/runtime/executable.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "seam/util/machine.h"
#include "seam/util/status_macros.h"

namespace seam::runtime {
namespace {

double ArgumentBytes(absl::Span<const Literal> arguments) {
  double bytes = 0;
  for (const Literal& a : arguments) bytes += ShapeBytes(a.shape());
  return bytes;
}

}  // namespace

Executable::~Executable() = default;

absl::StatusOr<std::unique_ptr<Executable>> Executable::Load(const Module& module, CpuCode code,
                                                             const ExecutableOptions& options) {
  std::unique_ptr<Executable> executable(new Executable());
  SEAM_RETURN_IF_ERROR(executable->Build(module, std::move(code), options));
  return executable;
}

absl::Status Executable::Build(const Module& module, CpuCode code,
                               const ExecutableOptions& options) {
  module_ = &module;
  profile_steps_ = options.profile_steps;
  Programs programs = std::move(code.programs);
  SEAM_RETURN_IF_ERROR(CheckMemory(module, programs));
  stats_.CountPrograms(programs);
  programs_ = std::move(programs.by_computation);
  irs_ = std::move(programs.irs);
  stats_.distinct_kernels = code.distinct_kernels;
  stats_.codegen_seconds = code.codegen_seconds;
  if (code.source.empty()) return absl::OkStatus();
  SEAM_ASSIGN_OR_RETURN(CompileResult compiled, CompileAndLoad(code.source, options.compiler));
  object_ = compiled.object;
  stats_.compile_seconds = compiled.seconds;
  stats_.cache_hit = compiled.cache_hit;
  stats_.shared_object = compiled.path;
  std::vector<HostStore::LaunchEntry>& launches = store_.launches();
  for (auto& [computation, program] : programs_) {
    for (Step& s : program->steps) {
      if (s.kind != Step::Kind::kKernel && s.kind != Step::Kind::kOpKernel && !s.epilogue) continue;
      SEAM_ASSIGN_OR_RETURN(void* address, object_->Symbol(s.symbol));
      s.launch = static_cast<int>(launches.size());
      HostStore::LaunchEntry& launch = launches.emplace_back();
      if (s.epilogue) {
        launch.epilogue = reinterpret_cast<seam_cpu_epilogue>(address);
        continue;
      }
      launch.function = reinterpret_cast<seam_cpu_kernel>(address);
      if (options.profile_kernels && s.kind == Step::Kind::kKernel) {
        launch.profile = static_cast<int>(store_.profile().size());
        store_.profile().push_back({program->planned, s.planned, 0, 0});
      }
    }
  }
  return absl::OkStatus();
}

// The estimate of what a run holds at once, refused before anything runs
// when the machine does not have it.
absl::Status Executable::CheckMemory(const Module& module, const Programs& programs) {
  double arguments = 0;
  for (const Instruction* p : module.entry()->parameters()) {
    if (p != nullptr) arguments += ShapeBytes(p->shape());
  }
  stats_.estimated_peak_bytes = arguments + EstimatePeakBytes(programs, *module.entry());
  // Memory beyond what a whole run holds at once is never needed.
  store_.host_pool().set_limit(static_cast<size_t>(stats_.estimated_peak_bytes));
  const double available = static_cast<double>(AvailableMemoryBytes());
  if (available > 0 && stats_.estimated_peak_bytes > available) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "'%s' needs about %.2f GiB at its peak (arguments, constants, results and intermediates); "
        "this machine has %.2f GiB available",
        module.name(), stats_.estimated_peak_bytes / (1 << 30), available / (1 << 30)));
  }
  return absl::OkStatus();
}

absl::StatusOr<Literal> Executable::Run(absl::Span<const Literal> arguments) {
  SEAM_RETURN_IF_ERROR(CheckArguments(*module_->entry(), arguments));
  std::vector<HostValue> borrowed;
  for (const Literal& a : arguments) borrowed.push_back(HostValue::Borrowed(a));
  return RunEntry(std::move(borrowed), ArgumentBytes(arguments));
}

absl::StatusOr<Literal> Executable::RunDonating(std::vector<Literal>& arguments,
                                                absl::Span<const int64_t> donated) {
  SEAM_RETURN_IF_ERROR(CheckArguments(*module_->entry(), arguments));
  const double bytes = ArgumentBytes(arguments);
  std::vector<HostValue> held;
  for (const Literal& a : arguments) held.push_back(HostValue::Borrowed(a));
  for (int64_t p : donated) {
    if (p >= 0 && p < static_cast<int64_t>(held.size())) {
      held[p] = HostValue::Owned(std::move(arguments[p]));
    }
  }
  return RunEntry(std::move(held), bytes);
}

absl::StatusOr<Literal> Executable::RunEntry(std::vector<HostValue> arguments,
                                             double argument_bytes) {
  ProgramRunner<HostStore> runner(store_, programs_, stats_, profile_steps_);
  SEAM_ASSIGN_OR_RETURN(HostValue value,
                        runner.Run(*programs_.at(module_->entry()), std::move(arguments)));
  Literal result = std::move(*value.literal);  // the run's own
  BufferPool& pool = store_.host_pool();
  stats_.peak_bytes =
      std::max<double>(stats_.peak_bytes, static_cast<double>(pool.peak_bytes()) +
                                              store_.constant_bytes() + argument_bytes);
  // After each of the first runs, while the pool learns which sizes a run
  // asks for (MobileNetV2 still freed 0.4 GB a run with the limit raised
  // once); then it stays, so that best fits that miss cannot ratchet it up
  // run by run (resnet50: 100 MB more over 30 runs).
  if (runs_raising_pool_limit_ > 0) {
    pool.RaiseLimitToPeak();
    --runs_raising_pool_limit_;
  }
  store_.Disown(result);
  return result;
}

void Executable::Recycle(Literal value) { store_.Recycle(std::move(value)); }

absl::Status Executable::RunAndDiscard(absl::Span<const Literal> arguments) {
  SEAM_ASSIGN_OR_RETURN(Literal out, Run(arguments));
  Recycle(std::move(out));
  return absl::OkStatus();
}

}  // namespace seam::runtime
