#include "seam/compiler/cpu_compiler.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "seam/codegen/emit_cpu.h"
#include "seam/codegen/op_kernels.h"
#include "seam/codegen/render_common.h"
#include "seam/compiler/program_builder.h"
#include "seam/fusion/plan_printer.h"
#include "seam/runtime/host_blas.h"
#include "seam/util/files.h"
#include "seam/util/status_macros.h"

namespace seam::compiler {
namespace {

absl::Status Dump(const std::string& dir, const fusion::FusionPlan& plan,
                  const std::string& source) {
  SEAM_RETURN_IF_ERROR(CreateDirectories(dir));
  SEAM_RETURN_IF_ERROR(WriteFile(dir + "/plan.txt", fusion::PlanToText(plan)));
  return WriteFile(dir + "/kernels.cc", source);
}

// The schedules and kernel source of `plan`; with options.dump_to, plan.txt
// and kernels.cc are written there.
absl::StatusOr<runtime::CpuCode> Generate(const fusion::FusionPlan& plan,
                                          const CpuOptions& options) {
  auto start = std::chrono::steady_clock::now();
  runtime::CpuCode code;
  std::vector<std::string> sources;
  codegen::KernelDeduplicator distinct;
  // The symbol generated `source` is under: an identical function's when
  // one came before, else `name`, its source kept for the shared object.
  auto keep = [&](const std::string& name,
                  absl::StatusOr<std::string> source) -> absl::StatusOr<std::string> {
    if (!source.ok()) return source.status();
    bool fresh = false;
    std::string symbol = distinct.Add(name, *source, &fresh);
    if (fresh) sources.push_back(*std::move(source));
    return symbol;
  };
  GenerateKernel generate{
      [](const codegen::KernelIr& ir, const std::string&) { return codegen::EmitCpuKernel(ir); },
      keep};
  auto generate_op = [&](const Instruction& op, const std::string& name) {
    return keep(name, codegen::EmitCpuOpKernel(op, name));
  };
  const bool excess_precision = plan.excess_precision;
  auto generate_epilogue = [&](const Instruction& call, const fusion::Epilogue& epilogue,
                               const std::string& name) {
    return keep(name, codegen::EmitCpuEpilogue(call, epilogue, name, excess_precision));
  };
  code.programs = BuildPrograms(plan, LowerPlan(plan), generate, runtime::HostBlasServes, nullptr,
                                generate_op, generate_epilogue);
  code.distinct_kernels = static_cast<int64_t>(sources.size());
  std::string source = codegen::CpuSourceFile(sources);
  code.codegen_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!options.dump_to.empty()) SEAM_RETURN_IF_ERROR(Dump(options.dump_to, plan, source));
  if (!sources.empty()) code.source = std::move(source);
  return code;
}

}  // namespace

absl::StatusOr<std::string> RenderForCpu(const Module& module, const CpuOptions& options) {
  SEAM_ASSIGN_OR_RETURN(fusion::FusionPlan plan, fusion::PlanModule(module, options.plan));
  SEAM_ASSIGN_OR_RETURN(runtime::CpuCode code, Generate(plan, options));
  return code.source;
}

absl::StatusOr<Compiled<runtime::Executable>> CompileForCpu(const Module& module,
                                                            const CpuOptions& options) {
  Compiled<runtime::Executable> compiled;
  SEAM_ASSIGN_OR_RETURN(compiled.plan, fusion::PlanModule(module, options.plan));
  SEAM_ASSIGN_OR_RETURN(runtime::CpuCode code, Generate(compiled.plan, options));
  SEAM_ASSIGN_OR_RETURN(compiled.executable,
                        runtime::Executable::Load(module, std::move(code), options));
  return compiled;
}

}  // namespace seam::compiler
