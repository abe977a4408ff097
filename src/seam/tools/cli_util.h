// What the `seam` subcommands share: reporting a failure (against the
// source file when the error carries a location), loading a one-module
// file, running a pass spec, and refusing arguments that would not fit in memory.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "seam/ir/module.h"
#include "seam/passes/pipeline.h"

namespace seam {

// Prints the error to stderr; returns the exit code 1.
int Fail(const absl::Status& status);
// The same, with the source line and a caret when `status` points into `path`.
int FailAt(const std::string& path, const absl::Status& status);

// The single module in `file` (`command` names the subcommand in the error
// for a file holding several).
absl::StatusOr<std::unique_ptr<Module>> LoadModule(const std::string& file,
                                                   const std::string& command);

// Runs the graph passes of `spec` (as Pipeline::ParseUnlessNone reads it)
// on `module`.
absl::Status RunPassSpec(Module& module, const std::string& spec);

// Refuses to start when the arguments alone would take more than half of
// the machine's memory: the interpreter keeps intermediates too, and a run
// killed by the OOM killer explains nothing.
absl::Status CheckArgumentsFitInMemory(const Computation& entry);

// Warns on stderr about each instruction of `module` that no backend can
// run (no compiled path, and no interpreter semantics): compiling and
// planning go on, but a run would fail there.
void WarnUnrunnable(const std::string& path, const Module& module);

// Ok when `--backend=cuda` can run here; otherwise why not (no driver or
// device), pointing to `seam compile --backend=cuda`, which needs neither.
absl::Status CudaBackendAvailable();

}  // namespace seam
