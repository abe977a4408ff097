// What every backend's executable runs: per computation of a fusion plan, a
// schedule of steps (launch a generated kernel, run a kernel op by op in
// the interpreter, alias a reshape, or run one instruction: a library call,
// control flow, or an interpreter fallback). Backends differ in where
// values live and how a kernel launches, not in what runs when.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "seam/codegen/kernel_ir.h"
#include "seam/ir/literal.h"

namespace seam::runtime {

struct Step {
  // kOpKernel: one instruction no planned kernel holds (gather, scatter,
  // reduce-window...) run by generated code of its own.
  enum class Kind { kKernel, kInterpretKernel, kAlias, kInstruction, kOpKernel };
  Kind kind = Kind::kInstruction;
  // A planned kernel's step: the kernel's index in its computation's plan,
  // and its instructions in post order (its outputs are the step's writes).
  int planned = -1;
  std::vector<const Instruction*> members;
  const codegen::KernelIr* ir = nullptr;
  std::string symbol;  // kKernel, kOpKernel, a library call's epilogue: the generated function
  // A library call running an epilogue on its result: the step then also
  // reads the epilogue's inputs (after the call's operands) and writes
  // its result instead.
  bool epilogue = false;
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
  int planned = -1;  // the computation's index in the plan
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

// The branch a conditional takes for `selector`: a pred picks the true (0)
// or false (1) computation; an index outside [0, branches) takes the last
// branch, as in XLA.
int64_t BranchIndex(const Literal& selector, int64_t branches);

// The operand whose value an instruction passes on unchanged on one device
// (an optimization barrier, add-dependency's value, a placement or transfer
// custom-call), which executors share rather than copy; -1 for any other.
int ForwardedOperand(const Instruction& instruction);

// What every executor runs itself, needing neither generated code nor the
// interpreter: parameters, constants, tuples, tokens, control flow and
// forwarded values.
bool RunsAsStructure(const Instruction& instruction);

// For an alias step whose every member is an output reshaping a distinct
// value the step reads (a reshape keeps its operand's bytes): per write,
// the index of its read. Empty otherwise (the interpreter runs it).
std::vector<size_t> ReshapedReads(const Step& step);

// Bytes of every array in `shape` (a tuple's summed).
double ShapeBytes(const Shape& shape);

// The most bytes the values of `computation` hold at once as its program
// runs (a loop's, call's or branch's own peak, or a library call's packed
// operands, added while it runs); arguments are the caller's and not
// counted. An estimate taken before anything runs.
double EstimatePeakBytes(const Programs& programs, const Computation& computation);

}  // namespace seam::runtime
