// The GPU schedule of a kernel laid out on its threads (MapGpuThreads). A
// block of `threads` threads runs tasks: in a tile phase a task is
// `rows_per_block` rows (or a row's share when rows are split); the
// block's threads are `group` rows at a time, `lanes` threads per row,
// walking a row with stride `lanes` (coalesced). Row reductions combine
// lanes within warps and, past one warp, warp results through shared
// memory in warp order: deterministic, no atomics. Partial reductions fold
// one (chunk, kept element) pair per thread or per block; after a grid
// barrier each thread combines one kept element's chunks in order.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "seam/codegen/c_types.h"
#include "seam/codegen/kernel_ir.h"
#include "seam/codegen/render_common.h"

namespace seam::codegen {
namespace {

constexpr int64_t kWarp = 32;

// Bytes of one element of a tile buffer (TileType).
int64_t TileElementBytes(DType t) {
  if (t == DType::kPred) return 1;
  return IsHalfType(t) ? 4 : DTypeByteSize(t);
}

class GpuScheduler {
 public:
  explicit GpuScheduler(KernelIr& ir) : ir_(ir) {}

  absl::Status Schedule(const target::DeviceSpec& device) {
    ir_.nest.clear();
    ir_.allocations.clear();
    ir_.shared_bytes = 0;
    ir_.max_blocks = 1;
    const std::vector<bool> barrier = BarrierBeforePhase(ir_);
    ir_.grid_barriers = std::find(barrier.begin(), barrier.end(), true) != barrier.end();
    AllocateTiles();
    for (size_t k = 0; k < ir_.stages.size();) {
      size_t end = k + 1;
      while (end < ir_.stages.size() && ir_.stages[end].phase == ir_.stages[k].phase) ++end;
      if (barrier[ir_.stages[k].phase]) ir_.nest.push_back({Barrier{BarrierKind::kGrid}});
      if (ir_.stages[k].kind == LoopKind::kPartialReduce) {
        PartialReduce(k);
      } else {
        ir_.nest.push_back({TilePhase(k, end)});
      }
      k = end;
    }
    if (device.onchip_bytes_per_block > 0 && ir_.shared_bytes > device.onchip_bytes_per_block) {
      return absl::UnimplementedError(absl::StrCat(
          "shared arrays need ", ir_.shared_bytes, " bytes of shared memory, a block of ",
          device.name, " has ", device.onchip_bytes_per_block));
    }
    return absl::OkStatus();
  }

 private:
  // A block's shared arrays, carved from its dynamic shared memory at
  // 16-byte boundaries.
  void AllocateShared(AllocationKind kind, const std::string& type, const std::string& name,
                      int64_t count, int64_t element_bytes) {
    ir_.allocations.push_back({kind, type, name, count, ir_.shared_bytes});
    ir_.shared_bytes += CeilDiv(count * element_bytes, 16) * 16;
  }

  // Tile buffers: the stages' regional values.
  void AllocateTiles() {
    for (const Stage& s : ir_.stages) {
      for (const Instruction* v : s.roots) {
        if (!ir_.tile_stage.contains(v)) continue;
        DType t = v->shape().dtype();
        int64_t elements =
            std::max<int64_t>(1, s.mapping.rows_per_block * TileElementsPerRow(ir_, v));
        AllocateShared(AllocationKind::kTile, TileType(t), TileName(ir_, v), elements,
                       TileElementBytes(t));
      }
    }
  }

  void NoteBlocks(int64_t blocks) { ir_.max_blocks = std::max(ir_.max_blocks, blocks); }

  Node TilePhase(size_t begin, size_t end) {
    const Stage& first = ir_.stages[begin];
    const auto [rows, rpb, bpr, tasks] = TileTasksOf(ir_, first);
    const ThreadLayout& layout = first.layout;
    NoteBlocks(tasks);
    Loop task = Loop::Tasks("task", tasks);
    task.body.push_back({Let{"int64_t", {{"r0", absl::StrCat("(task / ", bpr, ") * ", rpb)}}}});
    task.body.push_back(
        {Let{"int64_t", {{"r1", Expr::Min(absl::StrCat(rows), absl::StrCat("r0 + ", rpb))}}}});
    task.body.push_back({Let{"int64_t", {{"part", absl::StrCat("task % ", bpr)}}}});
    task.body.push_back({Statement{"(void)part;"}});
    for (size_t k = begin; k < end; ++k) {
      const Stage& s = ir_.stages[k];
      if (s.kind == LoopKind::kRowReduce) {
        task.body.push_back({RowReduce(k, rpb, layout)});
      } else {
        for (const RootLoop& loop : s.layout.loops) {
          task.body.push_back({Elementwise(k, loop, rpb, bpr, layout)});
        }
      }
      // Regional values are read by other threads of the block, and the
      // next task overwrites them.
      task.body.push_back({Barrier{BarrierKind::kBlock}});
    }
    Scope scope;
    scope.body.push_back({Let{"int64_t",
                              {{"lr", absl::StrCat("threadIdx.x / ", layout.lanes)},
                               {"lane", absl::StrCat("threadIdx.x % ", layout.lanes)}}}});
    scope.body.push_back({std::move(task)});
    return {std::move(scope)};
  }

  // The loop over a thread's elements of [begin, end) of a row.
  static Loop AlongRow(const ThreadLayout& layout, std::string begin, std::string end,
                       int64_t vector) {
    return Loop::Threads("c", std::move(begin), std::move(end), "lane", layout.lanes, vector);
  }

  // Rows `group` at a time, each thread's elements of its row: one loop
  // over some of the stage's roots.
  Node Elementwise(size_t stage, const RootLoop& roots, int64_t rpb, int64_t bpr,
                   const ThreadLayout& layout) {
    const Stage& s = ir_.stages[stage];
    const int64_t length = s.RowLength();
    const int64_t chunk = CeilDiv(CeilDiv(length, bpr), roots.vector) * roots.vector;
    Loop rows = Loop::Threads("rb", "", absl::StrCat(rpb), "lr", layout.group);
    rows.body.push_back({Let{"int64_t", {{"r", "r0 + rb"}}}});
    rows.body.push_back({BreakIf{"r >= r1"}});
    rows.body.push_back(
        {Let{"int64_t",
             {{"c1", Expr::Min(absl::StrCat(length), absl::StrCat("(part + 1) * ", chunk))}}}});
    Loop along = AlongRow(layout, absl::StrCat("part * ", chunk), "c1", roots.vector);
    along.body.push_back({Compute::At(stage, RowParts(s), absl::StrCat("r * ", length, " + c"),
                                      {StoreRoots{roots.roots, {}}})});
    rows.body.push_back({std::move(along)});
    return {std::move(rows)};
  }

  // Each reduction's per-thread accumulator and whether it holds a value
  // yet (see seam_merge).
  void DeclareAccumulators(const Stage& s, Body& body) {
    for (size_t j = 0; j < s.reductions.size(); ++j) {
      body.push_back({Statement{
          absl::StrCat(ComputeType(s.reductions[j]->shape().dtype()), " acc", j, "{};")}});
      body.push_back({Statement{absl::StrCat("bool has", j, " = false;")}});
    }
  }

  std::vector<ComputeStep> AccumulateAll(const Stage& s) {
    std::vector<ComputeStep> steps;
    for (size_t j = 0; j < s.reductions.size(); ++j) {
      steps.push_back(
          Accumulate{static_cast<int>(j), Accumulation::kGuarded, absl::StrCat("acc", j), ""});
    }
    return steps;
  }

  // Folds the accumulators across a row's `lanes` threads; rows wider
  // than a warp combine their warps through shared arrays.
  Node Combine(size_t stage, int64_t lanes) {
    const Stage& s = ir_.stages[stage];
    CombineLanes combine{static_cast<int>(stage), lanes, {}};
    if (lanes > kWarp) {
      for (size_t j = 0; j < s.reductions.size(); ++j) {
        std::string warps = absl::StrCat("warps_", stage, "_", j);
        DType t = s.reductions[j]->shape().dtype();
        AllocateShared(AllocationKind::kShared, ComputeType(t), warps, ir_.block_threads / kWarp,
                       TileElementBytes(t));
        AllocateShared(AllocationKind::kShared, "bool", warps + "_has", ir_.block_threads / kWarp,
                       1);
        combine.warps.push_back(warps);
      }
    }
    return {std::move(combine)};
  }

  // Every thread of the block runs the same number of row rounds, so the
  // barriers of a cross-warp combine are reached by all.
  Node RowReduce(size_t stage, int64_t rpb, const ThreadLayout& layout) {
    const Stage& s = ir_.stages[stage];
    const int64_t length = s.RowLength();
    Loop rounds = Loop::Serial("rb0", "0", absl::StrCat(rpb), absl::StrCat(layout.group));
    rounds.body.push_back({Let{"int64_t", {{"r", "r0 + rb0 + lr"}}}});
    rounds.body.push_back(
        {Let{"bool", {{"live", absl::StrCat("rb0 + lr < ", rpb, " && r < r1")}}}});
    DeclareAccumulators(s, rounds.body);
    Loop along = AlongRow(layout, "0", absl::StrCat(length), s.layout.vector);
    std::vector<ComputeStep> steps = AccumulateAll(s);
    steps.push_back(StoreRoots{s.roots, {}});
    along.body.push_back(
        {Compute::At(stage, RowParts(s), absl::StrCat("r * ", length, " + c"), std::move(steps))});
    If live{"live", {}};
    live.body.push_back({std::move(along)});
    rounds.body.push_back({std::move(live)});
    rounds.body.push_back(Combine(stage, layout.lanes));
    // The reduce's init, once, then the row.
    std::vector<ComputeStep> finish;
    for (size_t j = 0; j < s.reductions.size(); ++j) {
      finish.emplace_back(FinishRow{static_cast<int>(j), /*with_init=*/true});
    }
    If first_lane{"live && lane == 0", {}};
    first_lane.body.push_back({Compute::Scalar(stage, std::move(finish))});
    rounds.body.push_back({std::move(first_lane)});
    return {std::move(rounds)};
  }

  // Folds element (q, p) into the accumulators, computing the stage's
  // elementwise roots there.
  Node FoldBody(size_t stage) {
    const Stage& s = ir_.stages[stage];
    std::vector<ComputeStep> steps = AccumulateAll(s);
    steps.push_back(StoreRoots{s.roots, {}});
    return {Compute::At(stage, FoldParts(s, "q", "p"), "", std::move(steps))};
  }

  // Each reduction's partial for (chunk, p), from threads that hold one.
  void StorePartials(const Stage& s, const FoldSplit& split, const std::string& who, Body& body) {
    for (size_t j = 0; j < s.reductions.size(); ++j) {
      body.push_back(
          {Statement{absl::StrCat("if (", who, "has", j, ") b", ir_.PartialsIndex(s.reductions[j]),
                                  "[chunk * ", split.kept, " + p] = acc", j, ";")}});
    }
  }

  // Folding phase, grid barrier, combining phase (LoopKind::kPartialReduce).
  void PartialReduce(size_t stage) {
    const Stage& s = ir_.stages[stage];
    const FoldSplit split = SplitFolded(s);
    const int64_t per_chunk = CeilDiv(split.folded, s.chunks);
    ir_.nest.push_back(s.folded.back() ? BlockFolding(stage, split, per_chunk)
                                       : ThreadFolding(stage, split, per_chunk));
    // Combine: the reduce's init, then each non-empty chunk, in order
    // (BarrierBeforePhase always puts a barrier before it).
    ir_.nest.push_back({Barrier{BarrierKind::kGrid}});
    Loop kept = Loop::GridThreads("p", split.kept);
    kept.body.push_back(
        {Compute::Scalar(stage, {CombinePartials{split.folded, per_chunk, split.kept}})});
    ir_.nest.push_back({std::move(kept)});
  }

  // Task `task` is the pair (chunk, kept element p): the chunk's folded
  // positions end at q1; the accumulators start empty.
  void BeginPair(const Stage& s, const FoldSplit& split, int64_t per_chunk, Body& body) {
    body.push_back({Let{"int64_t",
                        {{"chunk", absl::StrCat("task / ", split.kept)},
                         {"p", absl::StrCat("task % ", split.kept)}}}});
    body.push_back({Let{"int64_t",
                        {{"q1", Expr::Min(absl::StrCat(split.folded),
                                          absl::StrCat("(chunk + 1) * ", per_chunk))}}}});
    DeclareAccumulators(s, body);
  }

  // The innermost dimension is folded (a row split over blocks, a full
  // reduction, an NCHW channel statistic): a block per (chunk, kept
  // element), its threads striding along the chunk (coalesced), combined
  // as a row is.
  Node BlockFolding(size_t stage, const FoldSplit& split, int64_t per_chunk) {
    const Stage& s = ir_.stages[stage];
    const int64_t tasks = s.chunks * split.kept;
    NoteBlocks(tasks);
    Loop task = Loop::Tasks("task", tasks);
    BeginPair(s, split, per_chunk, task.body);
    Loop along =
        Loop::Threads("q", absl::StrCat("chunk * ", per_chunk), "q1", "lane", s.layout.lanes);
    along.body.push_back(FoldBody(stage));
    task.body.push_back({std::move(along)});
    task.body.push_back(Combine(stage, s.layout.lanes));
    StorePartials(s, split, "lane == 0 && ", task.body);
    Scope scope;
    scope.body.push_back({Let{"int64_t", {{"lr", "0"}, {"lane", "threadIdx.x"}}}});
    scope.body.push_back({std::move(task)});
    return {std::move(scope)};
  }

  // Kept elements innermost (column reductions): a thread per (chunk, kept
  // element), neighbouring threads on neighbouring columns (coalesced).
  Node ThreadFolding(size_t stage, const FoldSplit& split, int64_t per_chunk) {
    const Stage& s = ir_.stages[stage];
    const int64_t pairs = s.chunks * split.kept;
    NoteBlocks(CeilDiv(pairs, ir_.block_threads));
    Loop task = Loop::GridThreads("task", pairs);
    BeginPair(s, split, per_chunk, task.body);
    Loop chunk = Loop::Serial("q", absl::StrCat("chunk * ", per_chunk), "q1");
    chunk.body.push_back(FoldBody(stage));
    task.body.push_back({std::move(chunk)});
    StorePartials(s, split, "", task.body);
    return {std::move(task)};
  }

  KernelIr& ir_;
};

}  // namespace

absl::Status ScheduleForGpu(KernelIr& ir, const target::DeviceSpec& device) {
  return GpuScheduler(ir).Schedule(device);
}

}  // namespace seam::codegen
