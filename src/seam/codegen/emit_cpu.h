// Renders scheduled kernel IR as C++ for the CPU backend: SIMD loops,
// parallel loops on Seam's thread pool.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "seam/codegen/kernel_ir.h"

namespace seam::codegen {

// Loops touching fewer elements run on the calling thread: splitting them
// saves less than waking threads costs, and on a busy machine a woken
// thread may wait milliseconds for a core (a small loss module ran 0.03 ->
// 0.4 ms beside a competing process when every loop was split).
constexpr int64_t kMinElementsToSplit = int64_t{1} << 15;

// `extern "C" void <ir.name>(void* const* buffers, const seam_pool*
// threads)`, buffers in the IR's order (see cpu_kernel_abi.h).
absl::StatusOr<std::string> EmitCpuKernel(const KernelIr& ir);

// A library call's epilogue (see fusion::Epilogue) as the
// seam_cpu_epilogue `<name>` (cpu_kernel_abi.h): buffers are the call's
// result, the epilogue's inputs in order, then its result, which may be
// the call's result itself (each element is read before it is written).
absl::StatusOr<std::string> EmitCpuEpilogue(const Instruction& call, const fusion::Epilogue& epilogue,
                                            const std::string& name, bool excess_precision);

// A whole source file: the prelude, then the kernels.
std::string CpuSourceFile(const std::vector<std::string>& kernels);

}  // namespace seam::codegen
