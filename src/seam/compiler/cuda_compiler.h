// Ahead-of-time compilation of a module's kernels for an NVIDIA GPU: plan
// fusion for the target's device numbers, lower every planned kernel once,
// render it as CUDA C++ and compile all of them as one NVRTC program to
// PTX and a cubin, then schedule the steps that launch them. Needs NVRTC,
// not a GPU (but CompileForCudaDevice opens one, or the emulator).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "seam/codegen/emit_cuda.h"
#include "seam/codegen/kernel_ir.h"
#include "seam/compiler/compiled.h"
#include "seam/fusion/planner.h"
#include "seam/ir/module.h"
#include "seam/runtime/cuda_binary.h"
#include "seam/runtime/cuda_executable.h"
#include "seam/runtime/program.h"

namespace seam::compiler {

// A module compiled for an NVIDIA GPU: its plan, every planned kernel
// lowered once, and the binary a device loads (the distinct CUDA kernels,
// the .cu file and cubin made of them, and what each kernel uses).
struct CudaProgram : runtime::CudaBinary {
  fusion::FusionPlan plan;
  // Every planned kernel lowered once: rendered here, and bound to its
  // buffers by the schedule that launches it.
  codegen::LoweredPlan lowered;
  // Each lowered kernel as rendered, by planned name (a kernel that
  // spilled is laid out again on fewer threads, and rendered again).
  absl::flat_hash_map<std::string, absl::StatusOr<codegen::CudaKernel>> rendered;
  // The symbol each generated planned kernel launches, and by planned
  // kernel name ("seam_c<computation>_k<id>").
  absl::flat_hash_map<const fusion::Kernel*, std::string> symbol_of;
  absl::flat_hash_map<std::string, std::string> symbol_of_name;
  // Kernels rendered again with fewer threads because they spilled.
  std::vector<std::string> relaxed;
  // Planned kernels generated code does not cover, with why (on a device
  // they would run in the interpreter, as on the CPU backend).
  std::vector<std::string> not_generated;
};

struct CudaExecutableOptions {
  fusion::Strategy strategy = fusion::Strategy::kStitch;
  // Run on the CUDA emulator for `target` instead of device 0.
  bool emulate = false;
  std::string target = "sm_90";
  // When set: the plan, the .cu, the .ptx and the .cubin go here (and
  // under the emulator, the host C++ it compiles: <module>.sim.cc).
  std::string dump_to;
  // Applied to the compiled program before it is loaded: for tests that
  // break emitted kernels on purpose and expect the emulator to say so.
  std::function<void(CudaProgram&)> rewrite_program;
};

// Plans, lowers and renders the kernels (no PTX: needs no NVRTC). The
// device follows `target`; `module` should have been through the default
// pipeline.
absl::StatusOr<CudaProgram> RenderForCuda(const Module& module, fusion::Strategy strategy,
                                          const std::string& target);

// RenderForCuda, then NVRTC to PTX, and each kernel's resources from
// ptxas (a cubin compile) with the occupancy they allow. Assume, apply,
// relax: kernels that spill at the register cap of their launch bounds are
// rendered again, alone, with half the threads (raising the cap), down to
// 128, at most twice.
// Without `with_ptx` only the cubin is made (what a device loads).
absl::StatusOr<CudaProgram> CompileForCuda(const Module& module, fusion::Strategy strategy,
                                           const std::string& target, bool with_ptx = true);

// Writes DIR/<name>.cu and DIR/<name>.plan.txt, and with compiled
// kernels DIR/<name>.<target>.ptx and .cubin (DIR is created).
absl::Status WriteCudaProgram(const std::string& dir, const std::string& name,
                              const std::string& target, const CudaProgram& program);

// Each kernel's use of registers, shared memory and spills, parsed from
// ptxas' report (CompileToCubin), by kernel name.
absl::StatusOr<absl::flat_hash_map<std::string, target::KernelResources>> ParsePtxasReport(
    const std::string& report);

// The schedule of steps for `program`: its lowered kernels bound by name to
// the CUDA kernels rendered for them, dots cuBLAS takes run on the device
// where `gemm` (cuBLAS is present). Needs no device.
runtime::Programs ScheduleCudaProgram(const CudaProgram& program, bool gemm = true);

// Opens device 0 (or the emulator), plans `module` (which should have been
// through the default pipeline) for its architecture, compiles, schedules
// and loads its kernels. Unavailable without a device. The module must
// outlive the executable.
absl::StatusOr<Compiled<runtime::CudaExecutable>> CompileForCudaDevice(
    const Module& module, const CudaExecutableOptions& options);

}  // namespace seam::compiler
