#include "seam/runtime/cuda_compiler.h"

#include <chrono>
#include <filesystem>
#include <fstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "seam/codegen/kernel_ir.h"
#include "seam/codegen/render_common.h"
#include "seam/fusion/plan_printer.h"
#include "seam/runtime/cuda_driver.h"

namespace seam::runtime {

absl::StatusOr<fusion::DeviceSpec> DeviceSpecForTarget(const std::string& target) {
  if (target == "sm_90") return fusion::H100Spec();
  if (target == "sm_80") return fusion::A100Spec();
  return absl::InvalidArgumentError(
      absl::StrCat("unknown CUDA target '", target, "': expected sm_80 or sm_90"));
}

absl::StatusOr<CudaProgram> RenderForCuda(
    const Module& module, fusion::Strategy strategy, const std::string& target,
    const absl::flat_hash_map<std::string, int64_t>& thread_caps) {
  absl::StatusOr<fusion::DeviceSpec> device = DeviceSpecForTarget(target);
  if (!device.ok()) return device.status();
  auto start = std::chrono::steady_clock::now();
  CudaProgram program;
  program.name = module.name();
  fusion::PlanOptions options;
  options.strategy = strategy;
  options.device = *device;
  absl::StatusOr<fusion::FusionPlan> plan = fusion::PlanModule(module, options);
  if (!plan.ok()) return plan.status();
  program.plan = std::move(*plan);
  codegen::KernelDeduplicator distinct;
  for (size_t c = 0; c < program.plan.computations.size(); ++c) {
    for (const fusion::Kernel& k : program.plan.computations[c].kernels) {
      if (k.alias_only) continue;
      std::string symbol = absl::StrCat("seam_c", c, "_k", k.id);
      absl::StatusOr<codegen::KernelIr> ir = codegen::LowerKernel(k, *device, symbol);
      absl::StatusOr<codegen::CudaKernel> kernel =
          ir.ok() ? codegen::EmitCudaKernel(*ir, *device,
                                            thread_caps.contains(symbol) ? thread_caps.at(symbol) : 0)
                  : absl::StatusOr<codegen::CudaKernel>(ir.status());
      if (kernel.ok()) {
        bool fresh = false;
        program.symbol_of[&k] = distinct.Add(symbol, kernel->source, &fresh);
        program.symbol_of_name[symbol] = program.symbol_of[&k];
        if (fresh) program.kernels.push_back(*std::move(kernel));
      } else {
        program.not_generated.push_back(absl::StrCat(k.Name(), ": ", kernel.status().message()));
      }
    }
  }
  program.source = codegen::CudaSourceFile(program.kernels);
  program.codegen_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
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
  absl::StatusOr<absl::flat_hash_map<std::string, fusion::KernelResources>> used =
      ParsePtxasReport(program.cubin.text);
  if (!used.ok()) return used.status();
  const fusion::DeviceSpec& device = program.plan.device;
  program.resources.clear();
  for (const codegen::CudaKernel& k : program.kernels) {
    auto it = used->find(k.name);
    if (it == used->end()) {
      return absl::InternalError(absl::StrCat("ptxas reported nothing for kernel ", k.name));
    }
    CudaKernelResources r;
    r.used = it->second;
    r.used.dynamic_shared_bytes = k.shared_bytes;
    r.resident_blocks_per_unit = fusion::ResidentBlocksPerUnit(device, k.threads, r.used);
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
  absl::flat_hash_map<std::string, int64_t> caps;
  std::vector<std::string> relaxed;
  for (int round = 0;; ++round) {
    absl::StatusOr<CudaProgram> program = RenderForCuda(module, strategy, target, caps);
    if (!program.ok() || program->kernels.empty()) return program;
    if (absl::Status compiled = CompileAndMeasure(*program, target, with_ptx); !compiled.ok()) {
      return compiled;
    }
    bool again = false;
    for (size_t i = 0; round < kRelaxRounds && i < program->kernels.size(); ++i) {
      const codegen::CudaKernel& k = program->kernels[i];
      const fusion::KernelResources& used = program->resources[i].used;
      // Only spills under the register cap of the launch bounds: fewer
      // threads raise the cap. (Spills below it are ptxas' own choice.)
      bool capped = used.registers >= fusion::RegisterCap(program->plan.device, k.threads);
      int64_t spilled = used.spill_bytes;
      if (spilled == 0 || !capped || k.threads <= kFewestThreads) continue;
      relaxed.push_back(absl::StrCat(k.name, ": ", k.threads, " -> ", k.threads / 2,
                                     " threads (", spilled, " bytes of spills)"));
      for (const auto& [name, symbol] : program->symbol_of_name) {
        if (symbol == k.name) caps[name] = k.threads / 2;
      }
      again = true;
    }
    if (!again) {
      program->relaxed = std::move(relaxed);
      return program;
    }
  }
}

namespace {

absl::Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) return absl::PermissionDeniedError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteCudaProgram(const std::string& dir, const std::string& name,
                              const std::string& target, const CudaProgram& program) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) return absl::PermissionDeniedError(absl::StrCat("cannot create ", dir, ": ", error.message()));
  std::string stem = absl::StrCat(dir, "/", name);
  absl::Status written = WriteFile(stem + ".cu", program.source);
  if (written.ok()) written = WriteFile(stem + ".plan.txt", fusion::PlanToText(program.plan));
  if (written.ok() && !program.kernels.empty()) {
    written = WriteFile(absl::StrCat(stem, ".", target, ".ptx"), program.ptx.text);
    if (written.ok()) written = WriteFile(absl::StrCat(stem, ".", target, ".cubin"), program.cubin.cubin);
  }
  return written;
}

absl::StatusOr<absl::flat_hash_map<std::string, fusion::KernelResources>> ParsePtxasReport(
    const std::string& report) {
  absl::flat_hash_map<std::string, fusion::KernelResources> used;
  fusion::KernelResources* current = nullptr;
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

absl::Status CudaDevicePresent() { return cuda::DevicePresent(); }

}  // namespace seam::runtime
