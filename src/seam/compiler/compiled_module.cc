#include "seam/compiler/compiled_module.h"

#include <chrono>
#include <optional>

#include "absl/strings/str_cat.h"
#include "seam/compiler/cpu_compiler.h"
#include "seam/compiler/cuda_compiler.h"
#include "seam/compiler/module_cache.h"
#include "seam/fusion/plan_printer.h"
#include "seam/passes/pipeline.h"
#include "seam/runtime/cuda_executable.h"
#include "seam/text/parser.h"
#include "seam/text/printer.h"
#include "seam/util/status_macros.h"

namespace seam::compiler {

using runtime::CudaDevicePresent;
using runtime::ExecutableStats;

absl::StatusOr<std::unique_ptr<CompiledModule>> CompiledModule::FromText(
    const std::string& text, const std::string& filename, const CompileOptions& options) {
  if (options.backend != "cpu" && options.backend != "cuda" && options.backend != "interp") {
    return absl::InvalidArgumentError(
        absl::StrCat("backend '", options.backend, "': expected cpu, cuda or interp"));
  }
  SEAM_ASSIGN_OR_RETURN(fusion::Strategy strategy, fusion::StrategyByName(options.fusion));
  if (options.backend == "cuda") SEAM_RETURN_IF_ERROR(CudaDevicePresent());
  std::unique_ptr<CompiledModule> compiled(new CompiledModule());
  compiled->options_ = options;
  auto parse = [&] { return ParseHloModule(text, filename); };
  SEAM_ASSIGN_OR_RETURN(std::optional<Pipeline> pipeline,
                        Pipeline::ParseUnlessNone(options.passes));
  if (!pipeline.has_value()) {
    auto start = std::chrono::steady_clock::now();
    SEAM_ASSIGN_OR_RETURN(compiled->module_, parse());
    compiled->report_.parse_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  } else {
    SEAM_ASSIGN_OR_RETURN(OptimizedModule optimized,
                          OptimizeModuleText(text, *pipeline, PipelineOptions{}, parse));
    compiled->module_ = std::move(optimized.module);
    compiled->report_.parse_seconds = optimized.parse_seconds;
    compiled->report_.passes_seconds = optimized.passes_seconds;
    compiled->report_.module_cache_hit = optimized.cache_hit;
  }
  // What no backend can run is refused here, at compile time, not at the
  // first call.
  SEAM_RETURN_IF_ERROR(CheckInterpretable(*compiled->module_));
  if (options.backend == "cpu") {
    CpuOptions cpu;
    cpu.plan.strategy = strategy;
    cpu.plan.excess_precision = options.excess_precision;
    SEAM_ASSIGN_OR_RETURN(Compiled<runtime::Executable> executable,
                          CompileForCpu(*compiled->module_, cpu));
    compiled->plan_ = std::move(executable.plan);
    compiled->cpu_ = std::move(executable.executable);
  } else if (options.backend == "cuda") {
    CudaExecutableOptions cuda;
    cuda.strategy = strategy;
    SEAM_ASSIGN_OR_RETURN(Compiled<runtime::CudaExecutable> executable,
                          CompileForCudaDevice(*compiled->module_, cuda));
    compiled->plan_ = std::move(executable.plan);
    compiled->cuda_ = std::move(executable.executable);
  }
  return compiled;
}

CompiledModule::~CompiledModule() = default;

absl::Span<Instruction* const> CompiledModule::parameters() const {
  return module_->entry()->parameters();
}

absl::Status CompiledModule::CheckArguments(absl::Span<const ArgumentView> arguments) const {
  absl::Span<Instruction* const> params = parameters();
  if (arguments.size() != params.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the module takes ", params.size(), " argument(s); given ", arguments.size()));
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const Shape& given = arguments[i].shape;
    const std::optional<int64_t> count = given.IsArray() ? given.ElementCount() : std::nullopt;
    if (!count ||
        arguments[i].bytes != static_cast<size_t>(*count) * DTypeByteSize(given.dtype())) {
      return absl::InvalidArgumentError(absl::StrCat("argument ", i, ": ", arguments[i].bytes,
                                                     " bytes for ", given.ToString(false)));
    }
    // The same element type and dimensions (layouts are the runtime's own).
    const Shape& wanted = params[i]->shape();
    if (!wanted.IsArray() || wanted.dtype() != given.dtype() || wanted.dims() != given.dims()) {
      return absl::InvalidArgumentError(
          absl::StrCat("argument ", i, " (parameter '", params[i]->name(), "') is ",
                       given.ToString(false), "; the module takes ", wanted.ToString(false)));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Literal> CompiledModule::Run(absl::Span<const ArgumentView> arguments) {
  SEAM_RETURN_IF_ERROR(CheckArguments(arguments));
  // The arrays are read where they lie: their memory is lent to the
  // literals for the run (see LentBytes).
  std::vector<Literal> lent;
  lent.reserve(arguments.size());
  for (const ArgumentView& a : arguments) {
    lent.push_back(Literal::FromBytes(a.shape, LentBytes(a.data, a.bytes)));
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (cpu_ != nullptr) return cpu_->Run(lent);
  if (cuda_ != nullptr) return cuda_->Run(lent);
  return interpreter_.Run(*module_, lent);
}

std::string CompiledModule::OptimizedHlo() const { return PrintModule(*module_); }

std::string CompiledModule::PlanText() const {
  return cpu_ != nullptr || cuda_ != nullptr ? fusion::PlanToText(plan_) : "";
}

ExecutableStats CompiledModule::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (cpu_ != nullptr) return cpu_->stats();
  if (cuda_ != nullptr) return cuda_->stats();
  return {};
}

}  // namespace seam::compiler
