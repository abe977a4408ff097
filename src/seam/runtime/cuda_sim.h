// The CUDA emulator behind `--backend=cuda-sim`: the kernels Seam emits for
// a GPU, from the very .cu text NVRTC compiles, built by the host's C++
// compiler against a prelude that defines CUDA's built-ins on the CPU,
// and run under CUDA's execution model on emulated device memory. The
// plan, launch shapes (occupancy from ptxas' report, so NVRTC is needed),
// buffer assignment and program schedule are the CUDA backend's; only the
// device is emulated. Matrix products run on the host's BLAS.
//
// It checks what a GPU would not say: out-of-bounds accesses, races on
// shared and global memory, reads of what nothing wrote, barriers and
// shuffles in divergent control flow, and launches beyond the target's
// limits. It cannot see timing, and floating point differs from the
// device's in the last bits (no fused multiply-add contraction; the host's
// libm for exp, tanh, erf...).
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "seam/runtime/cuda_binary.h"
#include "seam/runtime/gpu_device.h"

namespace seam::runtime {

// An emulated device of `target` ("sm_80", "sm_90"): that GPU's limits and
// multiprocessor count. Unavailable when NVRTC is missing (launch shapes
// come from ptxas).
absl::StatusOr<std::unique_ptr<GpuDevice>> OpenCudaSimDevice(const std::string& target);

// The host C++ file the emulator compiles for `program`: its prelude, then
// the kernels of `program.source` exactly as NVRTC gets them (their lines
// numbered as in <module>.cu), then an entry point per kernel.
absl::StatusOr<std::string> CudaSimSource(const CudaBinary& program);

// Writes CudaSimSource(program) to DIR/<module>.sim.cc.
absl::Status WriteCudaSimSource(const std::string& dir, const CudaBinary& program);

}  // namespace seam::runtime
