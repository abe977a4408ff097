// What a device loads of a module compiled for an NVIDIA GPU: the distinct
// CUDA kernels, the .cu file and cubin made of them, and what each kernel
// uses and how it launches.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "seam/codegen/emit_cuda.h"
#include "seam/runtime/nvrtc.h"
#include "seam/target/device_spec.h"
#include "seam/target/occupancy.h"

namespace seam::runtime {

// The device numbers plans are made with for an architecture: sm_80 an
// A100, sm_90 an H100.
absl::StatusOr<target::DeviceSpec> DeviceSpecForTarget(const std::string& arch);

// What the compiler made of one distinct kernel, and how it launches.
struct CudaKernelResources {
  target::KernelResources used;
  int64_t resident_blocks_per_unit = 0;  // blocks an SM holds at once
  // Blocks launched: every task's block, but no more than are resident at
  // once for a kernel with grid barriers (its blocks loop over the rest).
  int64_t grid = 0;
};

struct CudaBinary {
  std::string name;  // the module's
  // Distinct kernels (identical planned kernels share one).
  std::vector<codegen::CudaKernel> kernels;
  std::string source;  // the .cu file
  NvrtcResult ptx;     // empty when there are no kernels, or PTX was not asked for
  NvrtcResult cubin;   // the cubin, and ptxas' report
  // Per distinct kernel, from ptxas.
  std::vector<CudaKernelResources> resources;
  double codegen_seconds = 0;
};

// Ok when a CUDA driver and at least one device are present; otherwise
// why not (Unavailable), for `--backend=cuda` to say.
absl::Status CudaDevicePresent();

}  // namespace seam::runtime
