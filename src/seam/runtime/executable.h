// A module compiled for the CPU, as runtime loads and runs it: the
// generated kernels built into one shared object, and per computation a schedule of steps
// (launch a kernel, call BLAS, or run an op in the interpreter). Whatever
// does not run compiled is listed in stats().fallbacks: never silent.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "seam/codegen/kernel_ir.h"
#include "seam/ir/literal.h"
#include "seam/runtime/host_store.h"
#include "seam/runtime/jit.h"
#include "seam/runtime/program.h"
#include "seam/runtime/run_stats.h"

namespace seam::runtime {

struct ExecutableOptions {
  // Time every compiled kernel launch (see Executable::kernel_profile).
  bool profile_kernels = false;
  // Time every step by what runs it (ExecutableStats::time).
  bool profile_steps = false;
  // How the kernels are compiled (the host's ISA by default).
  CompilerOptions compiler;
};

// What the CPU compiler makes of a module: each computation's schedule of
// steps, and the C++ of its distinct kernels.
struct CpuCode {
  Programs programs;
  std::string source;  // one translation unit; empty when there are no kernels
  int64_t distinct_kernels = 0;
  double codegen_seconds = 0;
};

class Executable {
 public:
  // Builds `code`'s kernels into a shared object (through the JIT cache)
  // and binds the steps to them. The module must outlive this.
  static absl::StatusOr<std::unique_ptr<Executable>> Load(const Module& module, CpuCode code,
                                                          const ExecutableOptions& options);
  ~Executable();

  // Runs the entry computation on one argument per parameter.
  absl::StatusOr<Literal> Run(absl::Span<const Literal> arguments);

  // As Run, but the arguments of the parameters in `donated` are the run's
  // own (XLA's donation, which input_output_alias declares): it may write
  // into them and hand them out as outputs, and leaves them moved-from.
  absl::StatusOr<Literal> RunDonating(std::vector<Literal>& arguments,
                                      absl::Span<const int64_t> donated);

  // Hands a result's memory back for the next runs (for callers that run
  // repeatedly and are done with a result).
  void Recycle(Literal value);

  // Runs and recycles the result at once: for timing repeated runs whose
  // results nobody reads.
  absl::Status RunAndDiscard(absl::Span<const Literal> arguments);

  const ExecutableStats& stats() const { return stats_; }
  // With ExecutableOptions::profile_kernels: every compiled kernel (in no
  // particular order); empty otherwise.
  const std::vector<KernelProfile>& kernel_profile() const { return store_.profile(); }
  // Starts the profile afresh (after warm-up runs, say).
  void ClearKernelProfile() {
    for (KernelProfile& p : store_.profile()) p.seconds = 0, p.launches = 0;
  }

 private:
  Executable() = default;
  absl::Status Build(const Module& module, CpuCode code, const ExecutableOptions& options);
  absl::StatusOr<Literal> RunEntry(std::vector<HostValue> arguments, double argument_bytes);
  absl::Status CheckMemory(const Module& module, const Programs& programs);

  const Module* module_ = nullptr;
  std::vector<std::unique_ptr<codegen::KernelIr>> irs_;
  std::shared_ptr<SharedObject> object_;
  ProgramMap programs_;
  HostStore store_;
  ExecutableStats stats_;
  int runs_raising_pool_limit_ = 4;  // runs left after which the pool's limit rises to its peak
  bool profile_steps_ = false;
};

}  // namespace seam::runtime
