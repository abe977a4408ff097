// A module compiled for an NVIDIA GPU, as runtime loads and launches it:
// its plan, every planned kernel lowered once, the distinct CUDA kernels
// with the .cu file and cubin made of them, and what each kernel uses.
#pragma once

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "seam/codegen/emit_cuda.h"
#include "seam/codegen/kernel_ir.h"
#include "seam/fusion/fusion_plan.h"
#include "seam/fusion/occupancy.h"
#include "seam/runtime/nvrtc.h"

namespace seam::runtime {

// The device numbers plans are made with for a target: sm_80 an A100,
// sm_90 an H100.
absl::StatusOr<fusion::DeviceSpec> DeviceSpecForTarget(const std::string& target);

// What the compiler made of one distinct kernel, and how it launches.
struct CudaKernelResources {
  fusion::KernelResources used;
  int64_t resident_blocks_per_unit = 0;  // blocks an SM holds at once
  // Blocks launched: every task's block, but no more than are resident at
  // once for a kernel with grid barriers (its blocks loop over the rest).
  int64_t grid = 0;
};

struct CudaProgram {
  std::string name;  // the module's
  fusion::FusionPlan plan;
  // Every planned kernel lowered once: rendered here, and bound to its
  // buffers by the schedule that launches it.
  codegen::LoweredPlan lowered;
  // Each lowered kernel as rendered, by planned name, with at most
  // thread_caps' threads where a cap is set.
  absl::flat_hash_map<std::string, absl::StatusOr<codegen::CudaKernel>> rendered;
  absl::flat_hash_map<std::string, int64_t> thread_caps;
  // Distinct kernels (identical ones share a symbol: symbol_of).
  std::vector<codegen::CudaKernel> kernels;
  // The symbol each generated planned kernel launches, and by planned
  // kernel name ("seam_c<computation>_k<id>").
  absl::flat_hash_map<const fusion::Kernel*, std::string> symbol_of;
  absl::flat_hash_map<std::string, std::string> symbol_of_name;
  // Kernels rendered again with fewer threads because they spilled.
  std::vector<std::string> relaxed;
  // Planned kernels generated code does not cover, with why (on a device
  // they would run in the interpreter, as on the CPU backend).
  std::vector<std::string> not_generated;
  std::string source;  // the .cu file
  NvrtcResult ptx;     // empty when there are no kernels
  NvrtcResult cubin;   // CompileForCuda: the cubin, and ptxas' report
  // Per distinct kernel, from ptxas (CompileForCuda only).
  std::vector<CudaKernelResources> resources;
  double codegen_seconds = 0;
};

// Ok when a CUDA driver and at least one device are present; otherwise
// why not (Unavailable), for `--backend=cuda` to say.
absl::Status CudaDevicePresent();

}  // namespace seam::runtime
