// The CPU backend's compile driver: plan a module's fusion, lower every
// planned kernel once, generate C++ for the kernels, the instructions
// outside them and the library calls' epilogues, schedule each
// computation's steps, and load the result as an executable.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "seam/compiler/compiled.h"
#include "seam/fusion/planner.h"
#include "seam/ir/module.h"
#include "seam/runtime/executable.h"

namespace seam::compiler {

struct CpuOptions : runtime::ExecutableOptions {
  fusion::PlanOptions plan;
  // When set: the plan (plan.txt) and the generated C++ (kernels.cc) go here.
  std::string dump_to;
};

// Plans `module` (which should have been through the default pipeline) and
// generates its kernels' C++ without building it: the source file (empty
// when nothing is generated), and with options.dump_to plan.txt and
// kernels.cc written there.
absl::StatusOr<std::string> RenderForCpu(const Module& module, const CpuOptions& options);

// Plans `module` (which should have been through the default pipeline),
// generates its kernels, builds them into a shared object and loads it.
// The module must outlive the executable.
absl::StatusOr<Compiled<runtime::Executable>> CompileForCpu(const Module& module,
                                                            const CpuOptions& options);

}  // namespace seam::compiler
