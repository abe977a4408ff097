// A module compiled for the CPU: its fusion plan, the generated kernels
// built into one shared object, and per computation a schedule of steps
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
#include "seam/eval/evaluator.h"
#include "seam/fusion/planner.h"
#include "seam/ir/literal.h"
#include "seam/runtime/buffer_pool.h"
#include "seam/runtime/jit.h"
#include "seam/runtime/program.h"
#include "seam/runtime/thread_pool.h"

namespace seam::runtime {

struct ExecutableOptions {
  fusion::PlanOptions plan;
  // When set: the plan (plan.txt) and the generated C++ (kernels.cc) go here.
  std::string dump_to;
  // Time every compiled kernel launch (see Executable::kernel_profile).
  bool profile_kernels = false;
  // Time every step by what runs it (ExecutableStats::time).
  bool profile_steps = false;
};

// Where a run's time went, summed over runs (with profile_steps): generated
// kernels, generated single-instruction kernels, library calls (BLAS), the
// interpreter, and the rest (constants, tuples, copies).
struct StepTimes {
  double kernels = 0, op_kernels = 0, library = 0, interpreter = 0, other = 0;
};

// One compiled kernel's measured time over all runs so far, beside the
// plan's estimate (the cost model's prediction for it).
struct KernelProfile {
  const fusion::Kernel* kernel = nullptr;
  double seconds = 0;  // summed over launches
  int64_t launches = 0;
};

struct ExecutableStats {
  int64_t compiled_kernels = 0;  // kernel steps running compiled code
  int64_t op_kernels = 0;        // single instructions running generated code (gather, scatter...)
  int64_t distinct_kernels = 0;  // functions in the shared object (identical kernels share one)
  int64_t aliases = 0;           // reshapes that move no data
  int64_t blas_calls = 0;        // dots and convolutions served by BLAS (static count)
  int64_t epilogues = 0;         // of those, calls running their consumers as an epilogue
  // Dynamic-update-slices and scatters that wrote into their dead operand
  // instead of a copy, over all runs so far.
  int64_t in_place_updates = 0;
  // Everything the interpreter runs instead, as "name (opcode): why".
  std::vector<std::string> fallbacks;
  // Bytes a run holds at once: estimated from the schedule before any run
  // (Compile refuses a module the machine's available memory cannot
  // hold), and measured over the runs so far (arguments, constants and
  // the executable's own buffers; memory the interpreter allocates is not
  // counted).
  double estimated_peak_bytes = 0;
  double peak_bytes = 0;
  StepTimes time;  // with ExecutableOptions::profile_steps
  double codegen_seconds = 0;
  double compile_seconds = 0;    // C++ compiler, or cache lookup on a hit
  bool cache_hit = false;
  std::string shared_object;
};

// What the CPU compiler makes of a module: its plan, each computation's
// schedule of steps, and the C++ of its distinct kernels.
struct CpuCode {
  fusion::FusionPlan plan;
  Programs programs;   // its steps point into `plan`
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
  const std::vector<KernelProfile>& kernel_profile() const { return profile_; }
  // Starts the profile afresh (after warm-up runs, say).
  void ClearKernelProfile() {
    for (KernelProfile& p : profile_) p.seconds = 0, p.launches = 0;
  }
  const fusion::FusionPlan& plan() const { return plan_; }

 public:
  struct Held;
  class Values;

 private:
  // A launch step's compiled function, and its entry in the profile; or a
  // library call's epilogue.
  struct Launch {
    seam_cpu_kernel function = nullptr;
    seam_cpu_epilogue epilogue = nullptr;
    int profile = -1;
  };

  Executable() = default;
  absl::Status Build(const Module& module, CpuCode code, const ExecutableOptions& options);
  absl::StatusOr<Literal> RunProgram(const Program& program, std::vector<Held> arguments);
  absl::StatusOr<Literal> RunEntry(std::vector<Held> arguments, double argument_bytes);
  absl::StatusOr<Literal> RunInstruction(const Instruction& instruction,
                                         absl::Span<const Literal* const> operands);
  // A library call and its epilogue, which reads `inputs` beside the call's result.
  absl::StatusOr<Literal> RunWithEpilogue(const Step& step, absl::Span<const Literal* const> operands,
                                          absl::Span<void* const> inputs);
  absl::StatusOr<Literal> RunWhile(const Instruction& instruction, Literal state);
  absl::StatusOr<const Literal*> Constant(const Instruction& constant);
  Literal TakeResult(const Shape& shape);
  Literal CopyOfBytes(const Literal& array);
  Literal CopyOf(const Literal& value);
  absl::Status CheckMemory(const Module& module, const Programs& programs);
  void CountTime(const Step& step, double seconds);
  void GiveBack(Held& held);
  absl::Status RunKernel(const Step& step, Values& values);

  const Module* module_ = nullptr;
  fusion::FusionPlan plan_;
  std::vector<std::unique_ptr<codegen::KernelIr>> irs_;
  std::shared_ptr<SharedObject> object_;
  std::vector<Launch> launches_;
  absl::flat_hash_map<const Computation*, std::unique_ptr<Program>> programs_;
  Evaluator evaluator_;
  ExecutableStats stats_;
  BufferPool pool_;
  int runs_raising_pool_limit_ = 4;  // runs left after which the pool's limit rises to its peak
  // Every constant's value once computed, read in place by every run.
  absl::flat_hash_map<const Instruction*, std::unique_ptr<Literal>> constants_;
  double constant_bytes_ = 0;
  std::vector<KernelProfile> profile_;
  bool profile_steps_ = false;
};

}  // namespace seam::runtime
