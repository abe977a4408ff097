// The CPU backend's compile driver: plan a module's fusion, lower every
// planned kernel once, generate C++ for the kernels, the instructions
// outside them and the library calls' epilogues, schedule each
// computation's steps, and load the result as an executable.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "seam/ir/module.h"
#include "seam/runtime/executable.h"

namespace seam::compiler {

// The plan, schedules and kernel source of `module` (which should have
// been through the default pipeline); with options.dump_to, plan.txt and
// kernels.cc are written there.
absl::StatusOr<runtime::CpuCode> GenerateForCpu(const Module& module,
                                                const runtime::ExecutableOptions& options);

// GenerateForCpu, then the kernels built and loaded. The module must
// outlive the executable.
absl::StatusOr<std::unique_ptr<runtime::Executable>> CompileForCpu(
    const Module& module, const runtime::ExecutableOptions& options);

}  // namespace seam::compiler
