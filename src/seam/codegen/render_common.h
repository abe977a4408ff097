// What every schedule and the renderer of the kernel IR name and size the
// same way: reducer lambdas, tile buffers, and the memory
// names handed to the elemental emitter. Names are by position, so the same
// kernel always renders to the same text (the caches key on the source).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "seam/codegen/elemental.h"
#include "seam/codegen/kernel_ir.h"

namespace seam::codegen {

inline int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

inline int64_t NextPowerOfTwo(int64_t n) {
  int64_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

// The reducer lambda of reduction `r`: "reducer<n>", n its position among
// all the kernel's reductions.
std::string ReducerName(const KernelIr& ir, const Instruction* r);

// Reduction `r`'s result `acc` (accumulated in float) as the kernel holds
// it: rounded to r's type when that is bf16/f16, unless the kernel keeps
// excess precision.
std::string HalfResult(const KernelIr& ir, const Instruction* r, const std::string& acc);

// The tile buffer of regional value `v`: "tile_<stage>_<root>".
std::string TileName(const KernelIr& ir, const Instruction* v);

// Elements of `v` per row of the stage writing it: a tile holds
// rows_per_block such rows.
int64_t TileElementsPerRow(const KernelIr& ir, const Instruction* v);

// Buffer k is "b<k>"; a tile starts at row r0 of its block's rows.
MemoryNames RenderedNames(const KernelIr& ir);

// The instructions a stage computes (anything else it reads is loaded).
absl::flat_hash_set<const Instruction*> Computed(const Stage& s);

// How many blocks share a row in a tile phase: its first stage's mapping
// decides for the whole phase.
int64_t PhaseBlocksPerRow(const KernelIr& ir, int phase);

// The task loop of a tile phase, from its first stage: tasks are tiles of
// `rows_per_block` rows, each split into `blocks_per_row` parts.
struct TileTasks {
  int64_t rows = 1;
  int64_t rows_per_block = 1;
  int64_t blocks_per_row = 1;
  int64_t tasks = 1;
};
TileTasks TileTasksOf(const KernelIr& ir, const Stage& first);

// The dimensions of a partial reduction's iteration space it folds, and
// those it keeps (one partial per kept element).
struct FoldSplit {
  std::vector<int64_t> folded_dims, kept_dims;
  int64_t folded = 1, kept = 1;
};
FoldSplit SplitFolded(const Stage& s);

// A stage's rows and columns as index parts: `r` over its row dimensions,
// `c` over the rest.
std::vector<IndexPart> RowParts(const Stage& s);

// A partial reduction's kept dimensions indexed by `p`, its folded ones by
// `q` (in that order of definition).
std::vector<IndexPart> FoldParts(const Stage& s, const std::string& q, const std::string& p);

// Stores root `v`, computed as `value`, at linear index `linear` of v.
using StoreRoot = std::function<void(ElementalEmitter& e, const Instruction* v,
                                     const std::string& linear, const std::string& value)>;

// Computes `roots` (elementwise roots of stage `s`; reduces are skipped)
// at the iterated position `index` (linear `linear`): roots of another
// shape at the same linear position, in their own shape.
absl::Status EmitElementwiseRoots(ElementalEmitter& e, const Stage& s,
                                  const std::vector<const Instruction*>& roots, const Index& index,
                                  const std::string& linear, const StoreRoot& store);

// Whether phase q needs a grid barrier before it: it reads a value (or,
// combining a partial reduction, partials) written since the last barrier.
// Phases that only follow unrelated work run on without one: AStitch's
// independent scheme, blocks or threads moving on to the next group's
// tasks as soon as they finish their own.
std::vector<bool> BarrierBeforePhase(const KernelIr& ir);

// The combining phase of a partial reduction, for kept element `p`: each
// reduce's init, then the partials of every non-empty chunk (`units` of
// folded work, `per_chunk` to a chunk, `kept` partials per chunk) in
// order, stored through `store`; or the `part` of that (CombinePartials).
// Deterministic on every target.
absl::Status EmitPartialCombine(const KernelIr& ir, const Stage& s, int64_t units,
                                int64_t per_chunk, int64_t kept, CombinePartials::Part part,
                                ElementalEmitter& e, const StoreRoot& store);

// The combining phase of a sum of squared deviations folded as running
// statistics (Stage::one_pass), for kept element `p`: the reduce's init,
// plus over each non-empty chunk (`per_chunk` of `units` runs of `run`
// elements) its centred sum of squares and n (mean - centre)^2, in double.
absl::Status EmitDeviationsCombine(const KernelIr& ir, const Stage& s, int64_t units,
                                   int64_t per_chunk, int64_t kept, int64_t run,
                                   ElementalEmitter& e, const StoreRoot& store);

// Kernels that render to the same text but for their name (the same ops
// on the same shapes, common in unfused plans and repeated layers: 4,397
// planned kernels of Gemma 3 unfused are 135 distinct ones) compile once;
// every copy calls the first one's symbol.
class KernelDeduplicator {
 public:
  // The symbol to call for `source`, rendered under `name`: an earlier
  // identical kernel's, or `name` itself, in which case `*fresh` is set.
  std::string Add(const std::string& name, const std::string& source, bool* fresh);

 private:
  absl::flat_hash_map<std::string, std::string> symbol_of_text_;
};

}  // namespace seam::codegen
