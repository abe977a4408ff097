// A fusion plan: which instructions of each computation run together in one
// kernel, and, inside a kernel, how values pass from producer to consumer.
// Strategies (none, xla, stitch) decide the kernels; AnalyzeKernel derives
// everything else the code generators need (outputs, dominant groups, the
// stitching scheme of every edge, thread mappings, estimated cost).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "seam/ir/module.h"
#include "seam/target/device_spec.h"

namespace seam::fusion {

enum class Strategy : uint8_t { kNone, kXla, kStitch };
absl::string_view StrategyName(Strategy s);

// How a value passes from producer to consumer inside one kernel (AStitch).
// Ops of one kernel with no edge between them are "independent".
enum class Scheme : uint8_t {
  kLocal,     // same thread, element for element: registers / locals
  kRegional,  // one-to-many inside a block: shared memory / a tile buffer + block barrier
  kGlobal,    // any dependence: global memory (L2) + a grid-wide barrier
};
absl::string_view SchemeName(Scheme s);

// How a group's work is spread over the device. A group's iteration space
// is seen as `rows` x `row_length` in row-major order (for a column
// reduction: `row_length` kept columns, each folding `rows` elements).
// GPU: a block is a thread block; CPU: a block is a tile of rows one
// pool thread runs, its "threads" SIMD lanes.
enum class MappingKind : uint8_t { kRow, kColumn };

struct ThreadMapping {
  MappingKind kind = MappingKind::kRow;
  int64_t rows = 1;
  int64_t row_length = 1;
  int64_t rows_per_block = 1;    // > 1: horizontal packing of short rows
  int64_t blocks_per_row = 1;    // > 1: task splitting of long rows (a global stage combines)
  int64_t threads_per_row = 1;   // threads (GPU) or SIMD lanes (CPU) across one row
  int64_t threads_per_block = 1;
  int64_t vector_width = 1;      // elements per vector access
  int64_t blocks = 1;            // grid size
  int64_t tasks_per_block = 1;   // > 1: vertical packing, a block loops over several tasks
  bool reduces = false;          // rows are folded: split rows need their partials combined
  // kColumn on a CPU: the rows are folded a row tile at a time
  // (rows_per_block rows; blocks_per_row tiles) inside the loop of the
  // kernel's row phase over the same rows, which computes or reads them
  // already; the tiles' partials meet after a grid barrier (a layer norm
  // backward's column sums in the pass over its rows).
  bool row_tiled = false;

  std::string ToString() const;
};

// A dominant op and what it computes through local edges.
struct Group {
  int id = 0;
  const Instruction* dominant = nullptr;
  // Dominants merged into this group: they share its mapping and loop
  // (sibling reductions of one input, several outputs of one row space).
  std::vector<const Instruction*> sub_dominants;
  std::vector<const Instruction*> members;  // post order, dominants included
  std::string why;                          // why `dominant` is one
  ThreadMapping mapping;
  // Grid barriers every block passes before this group runs: what an
  // earlier group kept on chip is gone by then.
  int barriers_before = 0;
};

// Whether a reduction group folds chunks of its reduced elements into
// partial results that a second phase combines (column and full
// reductions, split rows), rather than each row in one thread step.
bool FoldsIntoPartials(const Group& g);

struct Edge {
  const Instruction* producer = nullptr;
  const Instruction* consumer = nullptr;
  Scheme scheme = Scheme::kLocal;
  std::string reason;  // for regional and global: why not a cheaper scheme
};

struct Cost {
  double dram_read_bytes = 0;
  double dram_write_bytes = 0;
  double scratch_bytes = 0;  // global-scheme values written and read back (L2)
  double flops = 0;          // simple-op units, transcendentals weighted
  int64_t launches = 0;
  int64_t grid_barriers = 0;
  int64_t onchip_bytes = 0;  // regional buffers of one block
  double parallelism = 1;    // fraction of the device's parallel units kept busy
  double time_us = 0;

  double dram_bytes() const { return dram_read_bytes + dram_write_bytes; }
  Cost& operator+=(const Cost& other);
};

// A group whose sum of squared deviations folds beside an earlier group's
// reduction, in that group's pass over the same elements (one-pass
// statistics; see one_pass_statistics.h). Indices into Kernel::groups.
struct OnePassStatistic {
  int group = 0;  // its dominant: the sum of squared deviations
  int host = 0;   // the earlier reduction whose pass it shares
};

// A group whose sum of shifted exps folds beside its max's reduction, in
// that group's pass over the same rows, as a running max and a rescaled
// sum (online softmax; see online_softmax.h). Indices into Kernel::groups.
struct OnlineSoftmax {
  int group = 0;  // its dominant: the sum of exp(x - max)
  int host = 0;   // the max's group, whose pass it shares
};

struct Kernel {
  int id = 0;
  std::vector<const Instruction*> instructions;  // post order
  std::vector<const Instruction*> outputs;       // values written to memory
  std::vector<const Instruction*> inputs;        // values read from memory
  std::vector<Group> groups;                     // in execution (stage) order
  std::vector<Edge> edges;                       // producer -> consumer, both inside
  int64_t grid_barriers = 0;  // grid-wide barriers between stages
  int64_t onchip_bytes = 0;   // regional values of one block
  // Only reshapes and bitcasts of row-major arrays: the output aliases the
  // input, nothing runs.
  bool alias_only = false;
  std::vector<OnePassStatistic> one_pass;
  std::vector<OnlineSoftmax> online_softmax;
  Cost cost;

  std::string Name() const;
  const Instruction* Dominant() const;
};

// The elementwise consumers of a library call's result attached to the
// call (its epilogue: bias, activation, residual add, scale, convert): they
// run on each piece of the result as the library produces it, while it is
// in cache, instead of in a kernel that reads the whole result back.
struct Epilogue {
  std::vector<const Instruction*> ops;     // post order: the chain, and broadcasts it reads
  const Instruction* result = nullptr;     // what the call writes instead: the chain's last op
  std::vector<const Instruction*> inputs;  // what else it reads from memory (a bias, a residual)
  double bytes_saved = 0;                  // the call's own result, written and read back

  bool empty() const { return ops.empty(); }
};

// An op run outside the stitched kernels: a library call (dot,
// convolution), a memory-intensive op Seam does not stitch (gather, sort...)
// or an opaque one (custom-call).
struct StandaloneOp {
  const Instruction* op = nullptr;
  Cost cost;
  Epilogue epilogue;  // library calls only
};

// A fusion a strategy considered and refused, and why.
struct Refusal {
  const Instruction* producer = nullptr;
  const Instruction* consumer = nullptr;
  std::string reason;
};

struct ComputationPlan {
  const Computation* computation = nullptr;
  std::vector<Kernel> kernels;
  std::vector<StandaloneOp> library_calls;
  std::vector<StandaloneOp> standalone;  // memory-intensive, one kernel each
  std::vector<StandaloneOp> opaque;      // control flow, custom-calls
  std::vector<Refusal> refusals;
};

struct PlanTotals {
  int64_t kernels = 0;             // stitched kernels that launch (aliases excluded)
  int64_t standalone_kernels = 0;  // memory-intensive ops Seam runs one by one
  int64_t library_calls = 0;
  int64_t epilogues = 0;            // library calls with an epilogue
  double epilogue_bytes_saved = 0;  // their results no longer written and read back
  int64_t aliases = 0;
  Cost cost;  // kernels and standalone ops (library calls apart)
  Cost library_cost;

  // What the papers count: kernels of memory-intensive ops.
  int64_t MemoryIntensiveKernels() const { return kernels + standalone_kernels; }
};

struct FusionPlan {
  Strategy strategy = Strategy::kStitch;
  std::string explorer;  // stitch only: "astitch" or "beam"
  target::DeviceSpec device;
  bool excess_precision = true;               // PlanOptions::excess_precision
  std::vector<ComputationPlan> computations;  // entry first

  PlanTotals Totals() const;
};

}  // namespace seam::fusion
