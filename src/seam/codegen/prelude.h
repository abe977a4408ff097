// What every generated source file starts with: standard headers, the
// interpreter's scalar semantics (eval/scalar_ops.h) and 16-bit float
// conversions (ir/float16.cc), embedded at build time so compiled kernels
// compute what the interpreter computes: exactly, but for exp, tanh and
// log on floats, which kernels evaluate within 2 ulp (CPU: vectorizable
// polynomials; CUDA: its math library).
#pragma once

#include <string>

namespace seam::codegen {

extern const char kScalarOpsSource[];
extern const char kFloat16Source[];
extern const char kCpuKernelAbiSource[];
extern const char kCudaSimAbiSource[];
extern const char kCudaSimBuiltinsSource[];
// Helpers every target's prelude holds (prelude.cc).
extern const char kPortableHelpers[];

// The C++ prelude for CPU kernels.
std::string CpuPrelude();
// The CUDA C++ prelude for NVRTC (prelude_cuda.cc): the same semantics on
// libcu++ (cuda::std) and CUDA's math library, compiled as device code.
std::string CudaPrelude();
// The prelude of the same kernels compiled for the host by the CUDA
// emulator (cuda-sim): CUDA's built-ins on the CPU (cuda_sim_builtins.h),
// then the same semantics and helpers.
std::string CudaSimPrelude();

}  // namespace seam::codegen
