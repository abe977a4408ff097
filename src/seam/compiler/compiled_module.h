// A module compiled from HLO text for one backend, ready to run: what the
// Python API (`seam.compile`, `seam.jit`) holds per function. The text goes
// through the pass pipeline (from the module cache when it holds the
// result), is checked to be runnable, and is compiled once; runs may then
// come from any thread (they take turns: an executable's buffer pool and
// statistics are its own).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "seam/eval/evaluator.h"
#include "seam/ir/literal.h"
#include "seam/ir/module.h"
#include "seam/runtime/executable.h"

namespace seam::runtime {
class CudaExecutable;
}  // namespace seam::runtime

namespace seam::compiler {

struct CompileOptions {
  std::string backend = "cpu";     // cpu, cuda or interp
  std::string fusion = "stitch";   // none, xla or stitch
  std::string passes = "default";  // a pipeline spec, or "none"
  bool excess_precision = true;    // cpu: bf16/f16 kept in f32 inside kernels, as XLA
};

// Where the compile's time went, and what runs how.
struct CompileReport {
  double parse_seconds = 0, passes_seconds = 0;  // parse: the cached entry on a hit
  bool module_cache_hit = false;
};

// An argument in the caller's memory: C-contiguous elements of `shape`.
struct ArgumentView {
  Shape shape;
  const void* data = nullptr;
  size_t bytes = 0;
};

class CompiledModule {
 public:
  // `text` holds one HLO module; `filename` names it in error messages.
  static absl::StatusOr<std::unique_ptr<CompiledModule>> FromText(const std::string& text,
                                                                  const std::string& filename,
                                                                  const CompileOptions& options);
  ~CompiledModule();

  // The entry computation's parameters (after the passes, which keep them).
  absl::Span<Instruction* const> parameters() const;

  // Checks each argument against its parameter (InvalidArgument naming the
  // parameter otherwise) and runs the module on the arguments where they
  // lie (no copy); the caller keeps them alive and unchanged until it
  // returns.
  absl::StatusOr<Literal> Run(absl::Span<const ArgumentView> arguments);

  // The module after the passes, as HLO text; the fusion plan as `seam
  // plan` prints it (empty for the interpreter).
  std::string OptimizedHlo() const;
  std::string PlanText() const;

  const CompileOptions& options() const { return options_; }
  const CompileReport& report() const { return report_; }
  // The executable's statistics (cpu and cuda; empty for interp).
  runtime::ExecutableStats stats() const;

 private:
  CompiledModule() = default;
  absl::Status CheckArguments(absl::Span<const ArgumentView> arguments) const;

  CompileOptions options_;
  CompileReport report_;
  std::unique_ptr<Module> module_;
  fusion::FusionPlan plan_;  // cpu and cuda
  std::unique_ptr<runtime::Executable> cpu_;
  std::unique_ptr<runtime::CudaExecutable> cuda_;
  Evaluator interpreter_;
  mutable std::mutex mu_;  // one run at a time
};

}  // namespace seam::compiler
