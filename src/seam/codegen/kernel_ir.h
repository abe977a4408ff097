// The kernel IR: one stitched kernel with every decision made: the
// buffers it reads and writes, its stages (one per fusion group: a loop
// over the group's iteration space computing its members element by
// element), where every value passed between stages lives, the phases
// separated by grid-wide barriers, and (scheduled for a target) the loop
// nest those stages run in. The one renderer only renders it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "seam/codegen/loop_nest.h"
#include "seam/fusion/fusion_plan.h"
#include "seam/target/device_spec.h"

namespace seam::codegen {

// Where a value a stage computes for later readers lives (AStitch's
// schemes): registers need no entry; regional values live in a per-block
// tile buffer (shared memory on a GPU, a thread's cache-sized buffer on a
// CPU) within one phase; global ones in a kernel-private buffer.
enum class Storage : uint8_t { kInput, kOutput, kTile, kScratch };

enum class LoopKind : uint8_t {
  // Every element of the dominant's shape, rows x row_length.
  kElementwise,
  // Each row of the reduce input folds into one value per reduction.
  kRowReduce,
  // Blocks fold chunks of the reduced elements into partial results, one per
  // kept element; a second phase combines the partials in a fixed order
  // (column and full reductions, split rows). Deterministic: no atomics.
  kPartialReduce,
};

// One loop over an elementwise stage's rows, storing some of its roots,
// `vector` elements a thread step.
struct RootLoop {
  std::vector<const Instruction*> roots;
  int64_t vector = 1;
};

// How a stage's elements meet a GPU block's threads: `group` rows of the
// block's task at a time, `lanes` threads along each row (striding it,
// coalesced), `vector` consecutive elements a thread takes per step (rows
// a whole number of vectors load as 128-bit accesses); an elementwise
// stage's roots in one loop or several.
struct ThreadLayout {
  int64_t group = 1;
  int64_t lanes = 1;
  int64_t vector = 1;
  std::vector<RootLoop> loops;
};

struct Stage {
  int group = 0;
  LoopKind kind = LoopKind::kElementwise;
  // Values the stage writes for others: the group's dominants.
  std::vector<const Instruction*> roots;
  // The reduces among the roots (all with one input shape and dimensions).
  std::vector<const Instruction*> reductions;
  std::vector<const Instruction*> members;  // post order
  // The iteration space: the reduce input's dimensions for reductions, the
  // dominant's otherwise; `row_dims` leading dimensions make the rows.
  std::vector<int64_t> dims;
  int row_dims = 0;
  // kPartialReduce: which dimensions of `dims` are folded, and into how many
  // chunks of the folded elements.
  std::vector<bool> folded;
  int64_t chunks = 1;
  // kPartialReduce of a sum of squared deviations folded in stage `host`'s
  // pass as running statistics of `value` (one-pass statistics; a CPU
  // schedule): its own folding phase is empty, its combining phase meets
  // the chunks' statistics with `center`. Partials: the chunks' means,
  // then their centred sums of squares, in double.
  struct OnePass {
    const Instruction* value = nullptr;
    const Instruction* center = nullptr;
    int host = -1;
  };
  std::optional<OnePass> one_pass;
  // kRowReduce of a softmax's sum of shifted exps folded in the pass of
  // stage `online_host`, its max, as a running max and a rescaled sum
  // (online softmax; a CPU schedule); -1 otherwise.
  int online_host = -1;
  fusion::ThreadMapping mapping;
  ThreadLayout layout;  // GPU kernels (MapGpuThreads)
  int phase = 0;  // kPartialReduce takes two: folding and combining

  int64_t Rows() const;
  int64_t RowLength() const;
};

struct KernelBuffer {
  const Instruction* value = nullptr;  // null for partial results
  Storage storage = Storage::kInput;
  DType dtype = DType::kF32;
  int64_t elements = 0;
  // kScratch partial results: the reduction they belong to.
  const Instruction* partials_of = nullptr;
  // kOutput or kScratch that the last-level cache will not hold for its
  // readers (see AssignStorage), so it is written past the caches
  // (non-temporal stores on a CPU, sparing the read-for-ownership of every
  // line), except by a CPU stage computing a transcendental per element
  // (see the CPU schedule). Never pred: bool has no vector storage to
  // stream from; nor 2-byte types (see AssignStorage).
  bool streamed = false;
};

struct KernelIr {
  std::string name;
  // The compiled function's buffer arguments, in order: inputs, outputs,
  // scratch. Tile buffers are the kernel's own.
  std::vector<KernelBuffer> buffers;
  std::vector<Stage> stages;
  int phases = 0;
  // GPU kernels: the threads of a block, a whole number of warps
  // (MapGpuThreads); 0 on the CPU.
  int64_t block_threads = 0;
  // Every value read from memory inside the kernel, and where.
  absl::flat_hash_map<const Instruction*, Storage> storage;
  // For tile values: the stage (and so phase) writing them.
  absl::flat_hash_map<const Instruction*, int> tile_stage;
  // Excess precision, as XLA allows by default: bf16/f16 arithmetic stays
  // in float until stored in its own type (explicit converts to a half type
  // still round, and a half value rounds before it becomes an integer or a
  // predicate). A chain of half-typed ops skips a rounding per op (layer
  // norm bf16 about 2x); its result may differ from the interpreter's, which
  // rounds every half-typed result (what `false` does), by an ulp or so.
  // The CPU backend's plans turn it on by default (PlanOptions); the CUDA
  // backend keeps it off until a device run has checked it.
  bool excess_precision = false;
  // Divisions by a value constant along a CPU stage's rows (a softmax's
  // sum, a norm's scale), computed as a multiplication by its reciprocal:
  // the loop along the row computes the reciprocal once, where a vector
  // division costs several multiplications. Within an ulp and a half of
  // the division (two roundings); apart where the divisor is below
  // 2^-126, whose reciprocal overflows. Half-typed ones only with excess
  // precision (in float, as the rest of the chain; rounded at each op, a
  // reciprocal's ulp could move the half-typed result).
  absl::flat_hash_set<const Instruction*> reciprocal_divisions;

  // The schedule (ScheduleKernel): the loop nest, the memory the kernel
  // declares, and on a GPU what a launch needs.
  Body nest;
  std::vector<Allocation> allocations;
  int64_t shared_bytes = 0;  // a GPU block's: its tile and shared arrays
  int64_t max_blocks = 1;    // a GPU grid's: blocks beyond this find no work
  bool grid_barriers = false;

  int BufferIndex(const Instruction* value) const;
  int PartialsIndex(const Instruction* reduction) const;
};

// A planned kernel lowered once (aliases are not): what a backend renders,
// and what the schedule binds the kernel's buffers by.
struct LoweredKernel {
  std::string name;  // "seam_c<computation>_k<id>"
  absl::StatusOr<codegen::KernelIr> ir = absl::UnimplementedError("an alias: nothing to lower");
};
// By computation and kernel, in the plan's order.
using LoweredPlan = std::vector<std::vector<LoweredKernel>>;

// Whether generated code computes `i`: its element types, its op and, for an
// elementwise op, its scalar expression; Unimplemented says why not.
absl::Status CheckGenerated(const Instruction& i);

// Decides how a GPU kernel's stages meet its threads: a block of enough
// threads for the widest stage's block, a whole number of warps, at most
// `max_threads` (0: the device's limit; fewer threads raise the register
// cap of a kernel that spilled), and each stage's ThreadLayout. LowerKernel
// calls it for a GPU device.
void MapGpuThreads(KernelIr& ir, const target::DeviceSpec& device, int64_t max_threads = 0);

// Schedules `ir` for `device`: its loop nest, allocations and launch
// needs (on a GPU after MapGpuThreads with `max_threads`). Unimplemented
// when a GPU block's tile and shared arrays exceed the device's shared
// memory.
absl::Status ScheduleKernel(KernelIr& ir, const target::DeviceSpec& device,
                            int64_t max_threads = 0);
absl::Status ScheduleForCpu(KernelIr& ir, const target::DeviceSpec& device);
absl::Status ScheduleForGpu(KernelIr& ir, const target::DeviceSpec& device);

// Lowers a planned kernel. Unimplemented when the kernel holds what
// generated code does not compute (complex types, variadic reduces...): the
// executor then runs its ops one by one in the interpreter, and says so.
absl::StatusOr<KernelIr> LowerKernel(const fusion::Kernel& kernel, const target::DeviceSpec& device,
                                     std::string name);

}  // namespace seam::codegen
