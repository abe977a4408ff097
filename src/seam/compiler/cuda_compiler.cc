#include "seam/compiler/cuda_compiler.h"

#include <chrono>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "seam/codegen/kernel_ir.h"
#include "seam/codegen/render_common.h"
#include "seam/compiler/program_builder.h"
#include "seam/fusion/plan_printer.h"
#include "seam/runtime/cuda_driver.h"
#include "seam/runtime/cuda_sim.h"
#include "seam/runtime/host_blas.h"
#include "seam/util/files.h"
#include "seam/util/status_macros.h"

namespace seam::compiler {

using codegen::LoweredKernel;
using runtime::CompileToCubin;
using runtime::CompileToPtx;
using runtime::CudaKernelResources;
using runtime::DeviceSpecForTarget;
using runtime::NvrtcResult;

namespace {

// Renders the lowered kernel `l`.
void Render(CudaProgram& program, const LoweredKernel& l) {
  program.rendered.insert_or_assign(l.name,
                                    l.ir.ok() ? codegen::EmitCudaKernel(*l.ir)
                                              : absl::StatusOr<codegen::CudaKernel>(l.ir.status()));
}

// The program's distinct kernels and .cu file from what is rendered, in
// plan order (identical kernels share the first one's symbol).
void Assemble(CudaProgram& program) {
  program.kernels.clear();
  program.symbol_of.clear();
  program.symbol_of_name.clear();
  program.not_generated.clear();
  codegen::KernelDeduplicator distinct;
  for (size_t c = 0; c < program.plan.computations.size(); ++c) {
    const fusion::ComputationPlan& cp = program.plan.computations[c];
    for (size_t k = 0; k < cp.kernels.size(); ++k) {
      if (cp.kernels[k].alias_only) continue;
      const std::string& name = program.lowered[c][k].name;
      const absl::StatusOr<codegen::CudaKernel>& kernel = program.rendered.at(name);
      if (!kernel.ok()) {
        program.not_generated.push_back(
            absl::StrCat(cp.kernels[k].Name(), ": ", kernel.status().message()));
        continue;
      }
      bool fresh = false;
      std::string symbol = distinct.Add(name, kernel->source, &fresh);
      program.symbol_of[&cp.kernels[k]] = symbol;
      program.symbol_of_name[name] = symbol;
      if (fresh) program.kernels.push_back(*kernel);
    }
  }
  program.source = codegen::CudaSourceFile(program.kernels);
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

absl::StatusOr<CudaProgram> RenderForCuda(const Module& module, fusion::Strategy strategy,
                                          const std::string& target) {
  SEAM_ASSIGN_OR_RETURN(target::DeviceSpec device, DeviceSpecForTarget(target));
  auto start = std::chrono::steady_clock::now();
  CudaProgram program;
  program.name = module.name();
  fusion::PlanOptions options;
  options.strategy = strategy;
  options.device = device;
  // Half values round where they are made: excess precision is the CPU
  // kernels' (XLA's GPU backend rounds too).
  options.excess_precision = false;
  SEAM_ASSIGN_OR_RETURN(program.plan, fusion::PlanModule(module, options));
  program.lowered = LowerPlan(program.plan);
  for (const std::vector<LoweredKernel>& computation : program.lowered) {
    for (const LoweredKernel& l : computation) {
      if (!l.name.empty()) Render(program, l);
    }
  }
  Assemble(program);
  program.codegen_seconds = SecondsSince(start);
  return program;
}

namespace {

// PTX and a cubin for every kernel of `program`, and what each uses.
absl::Status CompileAndMeasure(CudaProgram& program, const std::string& target, bool with_ptx) {
  if (with_ptx) {
    absl::StatusOr<NvrtcResult> ptx = CompileToPtx(program.source, target);
    if (!ptx.ok()) return ptx.status();
    program.ptx = *std::move(ptx);
  }
  absl::StatusOr<NvrtcResult> cubin = CompileToCubin(program.source, target);
  if (!cubin.ok()) return cubin.status();
  program.cubin = *std::move(cubin);
  absl::StatusOr<absl::flat_hash_map<std::string, target::KernelResources>> used =
      ParsePtxasReport(program.cubin.text);
  if (!used.ok()) return used.status();
  const target::DeviceSpec& device = program.plan.device;
  program.resources.clear();
  for (const codegen::CudaKernel& k : program.kernels) {
    auto it = used->find(k.name);
    if (it == used->end()) {
      return absl::InternalError(absl::StrCat("ptxas reported nothing for kernel ", k.name));
    }
    CudaKernelResources r;
    r.used = it->second;
    r.used.dynamic_shared_bytes = k.shared_bytes;
    r.resident_blocks_per_unit = target::ResidentBlocksPerUnit(device, k.threads, r.used);
    if (r.resident_blocks_per_unit == 0) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "kernel ", k.name, " does not fit on one SM of ", device.name, ": ", k.threads,
          " threads of ", r.used.registers, " registers, ",
          r.used.static_shared_bytes + r.used.dynamic_shared_bytes, " bytes of shared memory"));
    }
    r.grid = k.grid_barriers ? std::min(k.max_blocks, r.resident_blocks_per_unit * device.units)
                             : k.max_blocks;
    program.resources.push_back(r);
  }
  return absl::OkStatus();
}

constexpr int64_t kFewestThreads = 128;
constexpr int kRelaxRounds = 2;

}  // namespace

absl::StatusOr<CudaProgram> CompileForCuda(const Module& module, fusion::Strategy strategy,
                                           const std::string& target, bool with_ptx) {
  SEAM_ASSIGN_OR_RETURN(CudaProgram program, RenderForCuda(module, strategy, target));
  for (int round = 0;; ++round) {
    if (program.kernels.empty()) return program;
    SEAM_RETURN_IF_ERROR(CompileAndMeasure(program, target, with_ptx));
    if (round == kRelaxRounds) return program;
    // Only spills under the register cap of the launch bounds: fewer
    // threads raise the cap. (Spills below it are ptxas' own choice.)
    std::vector<LoweredKernel*> spilled;
    for (size_t i = 0; i < program.kernels.size(); ++i) {
      const codegen::CudaKernel& k = program.kernels[i];
      const target::KernelResources& used = program.resources[i].used;
      bool capped = used.registers >= target::RegisterCap(program.plan.device, k.threads);
      if (used.spill_bytes == 0 || !capped || k.threads <= kFewestThreads) continue;
      program.relaxed.push_back(absl::StrCat(k.name, ": ", k.threads, " -> ", k.threads / 2,
                                             " threads (", used.spill_bytes, " bytes of spills)"));
      for (std::vector<LoweredKernel>& computation : program.lowered) {
        for (LoweredKernel& l : computation) {
          auto symbol = program.symbol_of_name.find(l.name);
          if (symbol == program.symbol_of_name.end() || symbol->second != k.name) continue;
          absl::Status scheduled =
              codegen::ScheduleKernel(*l.ir, program.plan.device, k.threads / 2);
          if (!scheduled.ok()) l.ir = scheduled;
          spilled.push_back(&l);
        }
      }
    }
    if (spilled.empty()) return program;
    auto start = std::chrono::steady_clock::now();
    for (LoweredKernel* l : spilled) Render(program, *l);
    Assemble(program);
    program.codegen_seconds += SecondsSince(start);
  }
}

absl::Status WriteCudaProgram(const std::string& dir, const std::string& name,
                              const std::string& target, const CudaProgram& program) {
  SEAM_RETURN_IF_ERROR(CreateDirectories(dir));
  std::string stem = absl::StrCat(dir, "/", name);
  absl::Status written = WriteFile(stem + ".cu", program.source);
  if (written.ok()) written = WriteFile(stem + ".plan.txt", fusion::PlanToText(program.plan));
  if (written.ok() && !program.kernels.empty()) {
    written = WriteFile(absl::StrCat(stem, ".", target, ".ptx"), program.ptx.text);
    if (written.ok())
      written = WriteFile(absl::StrCat(stem, ".", target, ".cubin"), program.cubin.cubin);
  }
  return written;
}

absl::StatusOr<absl::flat_hash_map<std::string, target::KernelResources>> ParsePtxasReport(
    const std::string& report) {
  absl::flat_hash_map<std::string, target::KernelResources> used;
  target::KernelResources* current = nullptr;
  // The number right before `unit` in `line`, or -1.
  auto number_before = [](absl::string_view line, absl::string_view unit) -> int64_t {
    size_t at = line.find(unit);
    if (at == absl::string_view::npos) return -1;
    size_t begin = line.rfind(' ', at > 0 ? at - 1 : 0);
    int64_t n = 0;
    return absl::SimpleAtoi(line.substr(begin + 1, at - begin - 1), &n) ? n : -1;
  };
  for (absl::string_view line : absl::StrSplit(report, '\n')) {
    constexpr absl::string_view kEntry = "Compiling entry function '";
    if (size_t at = line.find(kEntry); at != absl::string_view::npos) {
      absl::string_view rest = line.substr(at + kEntry.size());
      current = &used[std::string(rest.substr(0, rest.find('\'')))];
      continue;
    }
    if (current == nullptr) continue;
    if (int64_t n = number_before(line, " registers"); n >= 0) current->registers = n;
    if (int64_t n = number_before(line, " bytes smem"); n >= 0) current->static_shared_bytes = n;
    if (int64_t n = number_before(line, " bytes stack frame"); n >= 0) current->stack_bytes = n;
    int64_t stores = number_before(line, " bytes spill stores");
    int64_t loads = number_before(line, " bytes spill loads");
    if (stores >= 0 && loads >= 0) current->spill_bytes = stores + loads;
  }
  if (used.empty()) return absl::InternalError("ptxas reported no kernel");
  return used;
}

runtime::Programs ScheduleCudaProgram(const CudaProgram& program, bool gemm) {
  // The kernels were generated and compiled before: a kernel's code is
  // the symbol it was compiled under.
  GenerateKernel generate{
      [&](const codegen::KernelIr&, const std::string& name) -> absl::StatusOr<std::string> {
        auto it = program.symbol_of_name.find(name);
        if (it != program.symbol_of_name.end()) return it->second;
        return absl::UnimplementedError("no CUDA kernel generated (see the compile report)");
      },
      [](const std::string&, absl::StatusOr<std::string> symbol) { return symbol; }};
  auto describe_fallback = [](const Instruction& i) -> std::string {
    return runtime::HostBlasServes(i) ? "host BLAS, operands to the host and back"
                                      : "interpreter, operands to the host and back";
  };
  auto on_device = [gemm](const Instruction& dot) { return gemm && runtime::CublasTakes(dot); };
  return BuildPrograms(program.plan, program.lowered, generate, on_device, describe_fallback);
}

absl::StatusOr<Compiled<runtime::CudaExecutable>> CompileForCudaDevice(
    const Module& module, const CudaExecutableOptions& options) {
  SEAM_ASSIGN_OR_RETURN(
      std::shared_ptr<runtime::GpuDevice> device,
      options.emulate ? runtime::OpenCudaSimDevice(options.target) : runtime::OpenCudaDevice());
  const runtime::cuda::DeviceInfo& info = device->info();
  const std::string arch = info.Arch();
  if (absl::StatusOr<target::DeviceSpec> spec = DeviceSpecForTarget(arch); !spec.ok()) {
    return absl::UnimplementedError(
        absl::StrCat("device ", info.name, " is ", arch, ": ", spec.status().message()));
  }
  // PTX only when it is dumped: the device loads the cubin.
  SEAM_ASSIGN_OR_RETURN(CudaProgram program, CompileForCuda(module, options.strategy, arch,
                                                            /*with_ptx=*/!options.dump_to.empty()));
  if (options.rewrite_program) options.rewrite_program(program);
  if (!options.dump_to.empty()) {
    SEAM_RETURN_IF_ERROR(WriteCudaProgram(options.dump_to, module.name(), arch, program));
    if (options.emulate)
      SEAM_RETURN_IF_ERROR(runtime::WriteCudaSimSource(options.dump_to, program));
  }
  runtime::Programs programs = ScheduleCudaProgram(program, device->HasGemm());
  Compiled<runtime::CudaExecutable> compiled;
  compiled.plan = std::move(program.plan);
  SEAM_ASSIGN_OR_RETURN(compiled.executable,
                        runtime::CudaExecutable::Load(module, std::move(device),
                                                      static_cast<runtime::CudaBinary&&>(program),
                                                      std::move(programs)));
  return compiled;
}

}  // namespace seam::compiler
