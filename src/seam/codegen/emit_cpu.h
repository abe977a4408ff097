// Renders kernel IR as C++ for the CPU backend: SIMD loops, parallel loops on Seam's thread pool.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "seam/codegen/kernel_ir.h"

namespace seam::codegen {

// `extern "C" void <ir.name>(void* const* buffers)`, buffers in the IR's
// order.
absl::StatusOr<std::string> EmitCpuKernel(const KernelIr& ir);

// A whole source file: the prelude, then the kernels.
std::string CpuSourceFile(const std::vector<std::string>& kernels);

}  // namespace seam::codegen
