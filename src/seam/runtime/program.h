// What every backend's executable runs: per computation of a fusion plan, a
// schedule of steps (launch a generated kernel, run a kernel op by op in
// the interpreter, alias a reshape, or run one instruction: a library call,
// control flow, or an interpreter fallback). Backends differ in where
// values live and how a kernel launches, not in what runs when.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "seam/codegen/kernel_ir.h"
#include "seam/fusion/fusion_plan.h"
#include "seam/ir/literal.h"

namespace seam::runtime {

struct Step {
  // kOpKernel: one instruction no planned kernel holds (gather, scatter,
  // reduce-window...) run by generated code of its own.
  enum class Kind { kKernel, kInterpretKernel, kAlias, kInstruction, kOpKernel };
  Kind kind = Kind::kInstruction;
  const fusion::Kernel* kernel = nullptr;
  const codegen::KernelIr* ir = nullptr;
  std::string symbol;  // kKernel, kOpKernel, a library call's epilogue: the generated function
  // A library call's epilogue, run by the call on its result: the step
  // then also reads the epilogue's inputs and writes its result instead.
  const fusion::Epilogue* epilogue = nullptr;
  int launch = -1;     // kKernel, kOpKernel: the backend's entry for it (function, profile)
  const Instruction* instruction = nullptr;
  std::vector<const Instruction*> reads;   // values it needs
  std::vector<const Instruction*> writes;  // values it produces
  int position = 0;                        // post-order position, for a stable schedule
  // The program's slot (Program::slots) of each read, each write and, for
  // a launch, each of its kernel's buffers (-1: scratch): a run finds its
  // values by index, not by hashing.
  std::vector<int> read_slots;
  std::vector<int> write_slots;
  std::vector<int> buffer_slots;
};

struct Program {
  const Computation* computation = nullptr;
  std::vector<Step> steps;
  absl::flat_hash_map<const Instruction*, int> readers;  // reads of each value, over all steps
  // Every value a step reads or writes, numbered from 0, and each one's
  // reads by that number: a run keeps its values in vectors.
  absl::flat_hash_map<const Instruction*, int> slots;
  std::vector<int> readers_by_slot;
  // Tuples read only by get-tuple-elements, each of another index: those
  // may take their element out instead of viewing it.
  absl::flat_hash_set<const Instruction*> split_tuples;
};

// Every computation's program, and the kernel IR its launch steps bind
// their buffers by.
struct Programs {
  absl::flat_hash_map<const Computation*, std::unique_ptr<Program>> by_computation;
  std::vector<std::unique_ptr<codegen::KernelIr>> irs;
  int64_t compiled_kernels = 0;
  int64_t op_kernels = 0;
  int64_t aliases = 0;
  int64_t library_calls = 0;
  int64_t epilogues = 0;  // library calls running their epilogue's generated code
  // Whatever runs in the interpreter instead, as "name (opcode): why".
  std::vector<std::string> fallbacks;
};

// A planned kernel lowered once (aliases are not): what a backend renders,
// and what the schedule binds the kernel's buffers by.
struct LoweredKernel {
  std::string name;  // "seam_c<computation>_k<id>"
  absl::StatusOr<codegen::KernelIr> ir = absl::UnimplementedError("an alias: nothing to lower");
};
// By computation and kernel, in the plan's order.
using LoweredPlan = std::vector<std::vector<LoweredKernel>>;

// Lowers every planned kernel but aliases, one kernel a task on the thread
// pool.
LoweredPlan LowerPlan(const fusion::FusionPlan& plan);

// A backend's code for the planned kernels, in two steps. `emit` writes
// the code of one kernel lowered as `ir` under the symbol `name`, or says
// why there is none; it is called for several kernels at once, from the
// thread pool (emitting is most of a warm start's code generation, and
// each kernel's is independent). `keep` then takes each kernel's code in
// plan order, on the calling thread, and gives the symbol its launch calls
// (an identical kernel's, when one came before), or why there is none
// (the kernel then runs op by op in the interpreter, listed as a
// fallback): what it keeps does not depend on how the threads ran.
struct GenerateKernel {
  std::function<absl::StatusOr<std::string>(const codegen::KernelIr& ir, const std::string& name)>
      emit;
  std::function<absl::StatusOr<std::string>(const std::string& name,
                                            absl::StatusOr<std::string> code)>
      keep;
};

// A backend's code for an instruction outside every planned kernel that
// it neither runs itself nor hands to a library, under the symbol `name`:
// the symbol its launch calls, or why there is none (the interpreter runs
// it, listed as a fallback).
using GenerateOpKernel =
    std::function<absl::StatusOr<std::string>(const Instruction& op, const std::string& name)>;

// Whether the backend serves this instruction with a library (BLAS dot,
// convolution) rather than the interpreter.
using IsLibraryCall = std::function<bool(const Instruction&)>;

// A backend's code for library call `call`'s epilogue under the symbol
// `name`: the symbol, or why there is none (its ops then run one by one,
// listed as fallbacks).
using GenerateEpilogue = std::function<absl::StatusOr<std::string>(
    const Instruction& call, const fusion::Epilogue& epilogue, const std::string& name)>;

// How the backend runs an instruction that is neither structure, control
// flow nor a library call, for stats().fallbacks ("interpreter" when not
// given).
using DescribeFallback = std::function<std::string(const Instruction&)>;

// The branch a conditional takes for `selector`: a pred picks the true (0)
// or false (1) computation; an index outside [0, branches) takes the last
// branch, as in XLA.
int64_t BranchIndex(const Literal& selector, int64_t branches);

// Generates every lowered kernel of `plan` through `generate` (emitting on
// the thread pool, one kernel a task) and schedules each computation's
// steps; the steps own the kernels' IR.
// Instructions left out of kernels go to `generate_op` when given (symbols
// "seam_c<computation>_op<position>"), library calls' epilogues to
// `generate_epilogue` ("seam_c<computation>_epilogue<position>").
Programs BuildPrograms(const fusion::FusionPlan& plan, LoweredPlan lowered,
                       const GenerateKernel& generate, const IsLibraryCall& library_call,
                       const DescribeFallback& describe_fallback = nullptr,
                       const GenerateOpKernel& generate_op = nullptr,
                       const GenerateEpilogue& generate_epilogue = nullptr);

// Bytes of every array in `shape` (a tuple's summed).
double ShapeBytes(const Shape& shape);

// The most bytes the values of `computation` hold at once as its program
// runs (a loop's, call's or branch's own peak, or a library call's packed
// operands, added while it runs); arguments are the caller's and not
// counted. An estimate taken before anything runs.
double EstimatePeakBytes(const Programs& programs, const Computation& computation);

}  // namespace seam::runtime
