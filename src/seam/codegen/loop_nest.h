// The loop nest of a kernel: how its stages meet the machine, decided by
// lowering (a schedule per kind of target, as Halide's loop types and
// tinygrad's ranges) and spelled by the one C-style renderer. Loops say
// what their iterations run on (a parallel machine's tasks, a block's
// threads, one thread's vector lanes, nothing: serial); barriers say what
// they wait for (a block's threads, the whole grid); computations say
// which stage's values are computed at which index and what becomes of
// them. Nothing here is spelled for a target except through the target's
// traits, and nothing in a renderer decides a mapping.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "seam/ir/instruction.h"

namespace seam::codegen {

// An integer expression of the loop nest: C text, or the smaller of two
// (each target has its own spelling of min).
struct Expr {
  Expr() = default;
  Expr(std::string text) : text(std::move(text)) {}  // NOLINT: implicit on purpose
  Expr(const char* text) : text(text) {}             // NOLINT
  static Expr Min(std::string a, std::string b);
  std::string text;
  std::vector<std::string> min;  // two operands: the expression is their minimum
};

// What a loop's iterations run on.
enum class LoopRole : uint8_t {
  // One after another: `for (var = begin; var < end; var += step)`
  // (`++var` without a step).
  kSerial,
  // One thread's vector lanes (an `omp simd` loop on a CPU), with
  // `reductions` folded lane-wise.
  kSimd,
  // A phase's tasks, [0, end), spread over the machine: a CPU's pool
  // threads claim chunks of them (on the calling thread alone unless
  // `split`); a GPU's blocks take every grid-th one.
  kTasks,
  // [0, end) spread over every thread of a GPU's grid.
  kGridThreads,
  // [begin, end) spread over `threads` of a GPU block's threads, this one
  // being `thread` (coalesced: neighbouring threads on neighbouring
  // iterations), `vector` consecutive iterations a step, unrolled.
  kThreads,
};

// A reduction a kSimd loop folds lane-wise: `op` an OpenMP reduction
// identifier (+, max, |, seam_max...), `var` the accumulator.
struct SimdReduction {
  std::string op, var;
};

struct Node;
using Body = std::vector<Node>;

struct Loop {
  static Loop Serial(std::string var, Expr begin, Expr end, std::string step = "");
  static Loop Simd(std::string var, Expr begin, Expr end,
                   std::vector<SimdReduction> reductions = {});
  static Loop Tasks(std::string var, int64_t count, bool split = true);
  static Loop GridThreads(std::string var, int64_t count);
  static Loop Threads(std::string var, std::string begin, Expr end, std::string thread,
                      int64_t threads, int64_t vector = 1);

  LoopRole role = LoopRole::kSerial;
  std::string var;
  Expr begin = "0", end;
  std::string step;                 // kSerial, kSimd
  std::string thread;               // kThreads: the thread's coordinate; begin "" starts there
  int64_t threads = 1, vector = 1;  // kThreads
  std::vector<SimdReduction> reductions;  // kSimd
  bool twinless = false;                  // kSimd: exp and tanh inline, never the vector twins
  bool split = true;                      // kTasks on a CPU
  Body body;
};

// `const <type> name = value, ...;`
struct Let {
  std::string type = "int64_t";
  std::vector<std::pair<std::string, Expr>> names;
};

// A C statement every target spells alike (declarations, a partial
// result's store).
struct Statement {
  std::string text;
};

struct If {
  std::string condition;
  Body body;
};

// `if (condition) break;`
struct BreakIf {
  std::string condition;
};

// One of several bodies, by condition: the first arm whose condition holds
// (the last arm's is empty: otherwise).
struct Branches {
  std::vector<std::pair<std::string, Body>> arms;
};

// `{ body }`: a scope for the names it declares.
struct Scope {
  Body body;
};

enum class BarrierKind : uint8_t {
  kBlock,  // a block's threads (a CPU block is one thread: nothing to wait for)
  kGrid,   // every block: the end of a CPU parallel loop, a grid sync on a GPU
};
struct Barrier {
  BarrierKind kind = BarrierKind::kBlock;
};

// How a reduction's accumulator takes an element.
enum class Accumulation : uint8_t {
  // Starts empty (`has<j>` false) and takes the first element as it is: a
  // GPU thread may see no element of a row or chunk.
  kGuarded,
  // Starts at the reduce's init (a CPU row).
  kFromInit,
  // A float max or min as integer order keys and a NaN flag (seam_order_key):
  // one integer max on the loop-carried chain, so the loop vectorizes.
  kOrderKeys,
  // `into += x`.
  kSum,
  // The first element of a chunk (`first` holds) as it is, then folded.
  kFirstOfChunk,
};

// The steps of a computation, in order.
struct InitAccumulator {  // `T acc<j> = <init>;` and, for order keys, the key and NaN flag
  int reduction = 0;
  Accumulation how = Accumulation::kFromInit;
};
struct Accumulate {  // folds the reduction's operand at the index into `into`
  int reduction = 0;
  Accumulation how = Accumulation::kFromInit;
  std::string into, first;
};
struct StoreRoots {  // the elementwise roots, at the index, stored where they live
  std::vector<const Instruction*> roots;
  // Outputs written to a per-thread staging row first (then streamed out).
  std::vector<const Instruction*> staged;
};
struct FinishRow {  // a row's result stored at row `r`, the init folded in first if `with_init`
  int reduction = 0;
  bool with_init = false;
};
struct CombinePartials {  // a partial reduction's result at kept element `p`
  int64_t units = 0, per_chunk = 0, kept = 0;
  // kWhole: every chunk at once. The others take a block of kept elements
  // from `p0` across vector lanes, the accumulators in arrays
  // `combined<j>[p - p0]`: the init, one chunk's partial (`chunk`), the store.
  enum class Part : uint8_t { kWhole, kInit, kChunk, kStore };
  Part part = Part::kWhole;
};
// One-pass statistics (see fusion/one_pass_statistics.h): sums of
// `value`'s deviations from `center` at the index, `sum += d` and, unless
// `squares` is empty, `squares += d * d` (no centre: the values themselves).
struct AccumulateDeviations {
  const Instruction* value = nullptr;
  std::string center, sum, squares;
};
// A sum of squared deviations from the centre, at kept element `p`, from
// each non-empty chunk's count, mean and centred sum of squares (chunks
// of `per_chunk` of `units` runs of `run` elements; `kept` per chunk).
struct CombineDeviations {
  int64_t units = 0, per_chunk = 0, kept = 0, run = 0;
};
using ComputeStep = std::variant<InitAccumulator, Accumulate, StoreRoots, FinishRow,
                                 CombinePartials, AccumulateDeviations, CombineDeviations>;

// Which loop variable indexes which dimensions of a stage's iteration
// space: `var` delinearized over `dims` (positions in the stage's dims),
// or taken as it is (`direct`, one dimension).
struct IndexPart {
  std::vector<int> dims;
  std::string var;
  bool direct = false;
};

// Values of stage `stage` at one index (parts in the order their index
// variables are defined; none for scalars): its members computed (unless
// `loads_only`), anything else loaded, then `steps`.
struct Compute {
  static Compute At(size_t stage, std::vector<IndexPart> index, std::string linear,
                    std::vector<ComputeStep> steps);
  // Scalars (no index).
  static Compute Scalar(size_t stage, std::vector<ComputeStep> steps, bool loads_only = false);

  int stage = 0;
  bool loads_only = false;
  std::vector<IndexPart> index;
  // The linear position the roots are stored at; empty: row-major of the index.
  std::string linear;
  std::vector<ComputeStep> steps;
};

// Threads of a GPU row combine their accumulators (all of stage `stage`'s
// reductions): within a warp, then (over `lanes` wider than a warp) across
// the row's warps through the `warps` arrays (one per reduction).
struct CombineLanes {
  int stage = 0;
  int64_t lanes = 1;
  std::vector<std::string> warps;
};

// A staged piece of a row written past the caches: `count` elements of
// `staging` to buffer `buffer` at `offset`.
struct StreamOut {
  int buffer = 0;
  std::string offset, staging, count;
};

// Streamed stores become visible to other threads.
struct StreamFence {};

// Row `row` (`row_length` elements) of buffer `buffer` asked into the
// caches ahead of the pass that reads it (a CPU's prefetches, which never
// fault); with a `count`, only that many elements from `column` on.
struct Prefetch {
  int buffer = 0;
  Expr row;
  int64_t row_length = 0;
  std::string column;
  int64_t count = 0;
};

struct Node {
  std::variant<Loop, Let, Statement, If, BreakIf, Branches, Scope, Barrier, Compute, CombineLanes,
               StreamOut, StreamFence, Prefetch>
      node;
};

// Memory a kernel declares for itself.
enum class AllocationKind : uint8_t {
  kTile,     // per block: a stage's regional values (a GPU's shared memory)
  kShared,   // per block, GPU: a row's warp results
  kStaging,  // per thread, CPU: a piece of a row on its way past the caches
};
struct Allocation {
  AllocationKind kind = AllocationKind::kTile;
  std::string type, name;
  int64_t count = 0;
  int64_t offset = 0;  // GPU: bytes into the block's shared memory
};

}  // namespace seam::codegen
