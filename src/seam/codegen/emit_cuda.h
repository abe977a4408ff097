// The CUDA rendering of scheduled kernel IR (AStitch's schemes on a GPU):
// one __global__ function per kernel. Local values are registers; regional
// values live in shared memory, with __syncthreads() after each stage and
// warp shuffles for row reductions; global values live in global memory,
// and phases are separated by a grid-wide barrier (cooperative launch, so
// every block must be resident). Blocks loop over their tasks, so any grid
// from one block up computes the whole kernel (vertical packing).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "seam/codegen/kernel_ir.h"
#include "seam/target/device_spec.h"

namespace seam::codegen {

// A rendered CUDA kernel and what launching it takes. Its parameters are
// the IR's buffers, in order, as typed device pointers, each 16-byte
// aligned (the kernels assume it for 128-bit accesses; cuMemAlloc gives
// 256).
struct CudaKernel {
  std::string name;
  std::string source;  // the __global__ function, without the prelude
  int64_t parameters = 0;  // buffers, b0 .. b<parameters - 1>
  int64_t threads = 0;  // per block (also its __launch_bounds__)
  int64_t shared_bytes = 0;  // dynamic shared memory: the tile buffers
  int64_t max_blocks = 1;  // blocks beyond this find no work
  bool grid_barriers = false;  // needs a cooperative launch
};

// Renders `ir` as scheduled for a GPU (ScheduleKernel).
absl::StatusOr<CudaKernel> EmitCudaKernel(const KernelIr& ir);

// One NVRTC program: the prelude, then the kernels.
std::string CudaSourceFile(const std::vector<CudaKernel>& kernels);

}  // namespace seam::codegen
