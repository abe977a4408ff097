// The CPU schedule of a kernel: a phase is one parallel loop over tasks (a
// tile of rows, or a chunk of folded elements) whose chunks the pool's
// threads claim; the loop's end is the grid barrier between phases, and
// consecutive phases that need none share one loop. A block is a tile of
// rows run by one thread; regional values live in that thread's tile
// buffer (rows_per_block rows, so it stays in L1/L2, carved from a
// per-thread arena); global ones in scratch buffers. Innermost loops run
// along rows in a thread's vector lanes.
#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "seam/codegen/c_types.h"
#include "seam/codegen/channel_strips.h"
#include "seam/codegen/column_strips.h"
#include "seam/codegen/emit_cpu.h"
#include "seam/codegen/kernel_ir.h"
#include "seam/codegen/render_common.h"
#include "seam/util/status_macros.h"

namespace seam::codegen {
namespace {

// Moves the nodes of `from` to the end of `to`.
void Append(Body& to, Body&& from) {
  to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
}

std::optional<Opcode> CombinerOf(const Instruction& reduce) {
  return AsBinaryReducer(**reduce.attrs().to_apply);
}

bool IsMax(const Instruction& reduce) { return CombinerOf(reduce) == Opcode::kMaximum; }

// How a row reduction's accumulator runs in a vectorized loop: a plain sum,
// or an integer max or min, as a lane-wise reduction (kFromInit); a float
// max or min over order keys (kOrderKeys); anything else keeps the loop
// scalar (none).
std::optional<Accumulation> VectorAccumulation(const Instruction& reduce) {
  std::optional<Opcode> op = CombinerOf(reduce);
  if (!op || reduce.shape().dtype() == DType::kPred) return std::nullopt;
  switch (*op) {
    case Opcode::kAdd:
      return Accumulation::kFromInit;
    case Opcode::kMaximum:
    case Opcode::kMinimum:
      return IsFloatType(reduce.shape().dtype()) ? Accumulation::kOrderKeys
                                                 : Accumulation::kFromInit;
    default:
      return std::nullopt;
  }
}

// The OpenMP reduction identifier of a lane-wise kFromInit reducer.
std::string LaneReduction(const Instruction& reduce) {
  switch (*CombinerOf(reduce)) {
    case Opcode::kMaximum:
      return "seam_max";
    case Opcode::kMinimum:
      return "seam_min";
    default:
      return "+";
  }
}

// Whether every reduction of `s` is a plain sum.
bool SumsOnly(const Stage& s) {
  return std::all_of(s.reductions.begin(), s.reductions.end(), [](const Instruction* r) {
    return CombinerOf(*r) == Opcode::kAdd && r->shape().dtype() != DType::kPred;
  });
}

// Elements a vectorized sum adds up before it adds the block to its
// running total (as the column reductions' partials of 4096 rows do).
constexpr int64_t kSummedBlock = 4096;

// Float sums over rows up to this long add into an array of kSumLanes
// partial sums, combined as a tree (seam_lane_sum): OpenMP's simd
// reduction combines its lanes one by one, 15 dependent scalar additions,
// as much work as the rest of a 32-element row's sum. Measured on one
// thread: rows of 32 summed 15% faster, a softmax over them 7%; no gain at
// 128, and 1-4% slower at 1024.
constexpr int64_t kLaneSumRow = 128;
constexpr int64_t kSumLanes = 16;

// Lane-summed rows up to this long compute exp and tanh inline, not
// through the vector twins: a twin is a call, around which the loop's
// partial sums and constants go to memory and back, a vector or two of
// work apart (DIEN's 32-element rows, 2 cores: 9.6 -> 8.3 ms; rows of 64
// and longer are faster with the twins). Not where the row holds half
// precision: GCC then vectorizes the inline exp's 16-element loop at half
// width (DIEN bf16: 9.6 -> 13.0 ms).
constexpr int64_t kTwinlessRow = 32;

// Folded positions (rows of a column reduction) a partial reduction folds
// a step, each partial in a register across them: a load and a store of
// the partial per row held a 128-row column reduction's folding to 20 GB/s.
constexpr int64_t kFoldedRowsAtOnce = 4;

// Kept elements a task of a combining phase takes, at the most.
constexpr int64_t kCombinedAtOnce = 256;

// Row chunks up to this many elements a stage with a transcendental per
// element streams out all the same: a chunk's streamed stores, a few
// lines, drain while the next rows compute, where a longer staged piece's
// burst waits on memory (DIEN-style rows, 16M f32 elements, 2 cores: 32
// elements 8.9 -> 8.2 ms, 64 8.8 -> 7.9, 128 8.2 -> 7.8, 256 level, 1024
// and tanh-GELU's 4096 slower). Tile phases only: a channel strip's runs
// were not measured so.
constexpr int64_t kStreamedTranscendentalRow = 128;

// Bytes of row inputs a tile phase's sub-tile holds (see SubTileRows):
// half an L1 of 48 KB, three quarters of one of 32 KB. Layer norm
// backward [8192,768] f32, 5 alternated rounds: 3.44 -> 3.10 ms in
// sub-tiles of 4 rows (24 KB), 3.08 in 5, 3.39 in 7; bf16 2.83 -> 2.77.
constexpr int64_t kSubTileBytes = 24 << 10;

// Bytes of a row a prefetching pass asks for at once, at the most.
constexpr int64_t kPrefetchedRow = 16 << 10;

// Bytes of each prefetched row an output pass asks for before each strip
// of its row (see StripPrefetches).
constexpr int64_t kPrefetchStrip = 1 << 10;

// Elements of a row an online softmax's pass takes at a time: its block's
// max, then its exps against the running max, read again from L1 (8 KB
// of f32), the next block prefetched meanwhile (a 1 MB row's pass: 6.8 ->
// 5.4 ms).
constexpr int64_t kOnlineBlock = 2048;

// Whether every reduction of `s` is a sum of f32 or f64 (a half-precision
// sum may round at every step).
bool FloatSumsOnly(const Stage& s) {
  return SumsOnly(s) && std::all_of(s.reductions.begin(), s.reductions.end(), [](auto* r) {
           return r->shape().dtype() == DType::kF32 || r->shape().dtype() == DType::kF64;
         });
}

// Whether `s` computes or reads bf16 or f16 values.
bool TouchesHalfPrecision(const Stage& s) {
  return std::any_of(s.members.begin(), s.members.end(), [](const Instruction* m) {
    if (IsHalfType(m->shape().dtype())) return true;
    return std::any_of(m->operands().begin(), m->operands().end(),
                       [](const Instruction* o) { return IsHalfType(o->shape().dtype()); });
  });
}

// The first loop of `role` directly in `body`, if any.
Loop* FirstLoop(Body& body, LoopRole role) {
  for (Node& n : body) {
    Loop* l = std::get_if<Loop>(&n.node);
    if (l != nullptr && l->role == role) return l;
  }
  return nullptr;
}

Node Int(const std::string& name, Expr value) {
  return {Let{"int64_t", {{name, std::move(value)}}}};
}

// Whether a stage runs a transcendental (exp, tanh, log...; not a
// division) on each element of its rows: a pass that computes for long
// per byte it touches.
bool TranscendentalAlongRows(const Stage& s) {
  if (s.RowLength() <= 1) return false;
  return std::any_of(s.members.begin(), s.members.end(), [&](const Instruction* m) {
    return IsExpensive(m->opcode()) && !IsDivision(m->opcode()) && m->shape().IsArray() &&
           m->shape().dims() == s.dims;
  });
}

class CpuScheduler {
 public:
  CpuScheduler(KernelIr& ir, const target::DeviceSpec& device)
      : ir_(ir), device_(device), barrier_(BarrierBeforePhase(ir)) {}

  absl::Status Schedule() {
    ir_.nest.clear();
    ir_.allocations.clear();
    const std::optional<ColumnStrips> column_strips = ColumnStripsOf(ir_, device_);
    if (!column_strips) channel_strips_ = ChannelStripsOf(ir_, device_);
    AllocateTiles();
    AllocateStagingRows();
    if (column_strips || channel_strips_) {
      if (column_strips) ColumnStripPhase(*column_strips);
      if (channel_strips_) ChannelStripPhase(*channel_strips_);
      ParallelLoops();
      return absl::OkStatus();
    }
    for (size_t k = 0; k < ir_.stages.size();) {
      size_t end = k + 1;
      while (end < ir_.stages.size() && ir_.stages[end].phase == ir_.stages[k].phase) ++end;
      // A column reduction in row tiles alone in its phase folds as any
      // partial reduction does.
      if (ir_.stages[k].kind == LoopKind::kPartialReduce &&
          (!ir_.stages[k].mapping.row_tiled || end - k == 1)) {
        SEAM_RETURN_IF_ERROR(PartialReduce(k));
      } else {
        TilePhase(k, end);
      }
      k = end;
    }
    ParallelLoops();
    return absl::OkStatus();
  }

 private:
  // One phase's loop over its tasks, indexed by `var`.
  struct TaskLoop {
    int phase = 0;
    std::string var;
    int64_t count = 0;
    int64_t elements = 0;  // what its tasks touch, together
    Body body;
  };

  // Whether a phase from after loop `a`'s up to loop `b`'s needs a barrier
  // (a phase may have no loop: a folding in another stage's pass).
  bool BarrierBetween(const TaskLoop& a, const TaskLoop& b) const {
    for (int q = a.phase + 1; q <= b.phase && q < ir_.phases; ++q) {
      if (barrier_[q]) return true;
    }
    return false;
  }

  // The phases' task loops as parallel loops: a loop after which the next
  // phase needs no barrier (BarrierBeforePhase) shares a parallel loop with
  // the next, its tasks after the first loop's. Loops touching fewer than
  // kMinElementsToSplit elements run on the calling thread.
  void ParallelLoops() {
    for (size_t k = 0; k < loops_.size();) {
      size_t end = k + 1;
      while (end < loops_.size() && !BarrierBetween(loops_[end - 1], loops_[end])) ++end;
      int64_t total = 0, elements = 0;
      for (size_t j = k; j < end; ++j) total += loops_[j].count, elements += loops_[j].elements;
      const bool split = elements >= kMinElementsToSplit;
      if (end - k == 1) {
        Loop tasks = Loop::Tasks("seam_t", total, split);
        tasks.body.push_back(Int(loops_[k].var, "seam_t"));
        Append(tasks.body, std::move(loops_[k].body));
        ir_.nest.push_back({std::move(tasks)});
        k = end;
        continue;
      }
      // Shared: each phase's tasks in a loop of their own over its part of
      // the claimed range. (One loop branching on the task is what GCC's
      // loop splitting copies, and in the copy it leaves the `omp simd`
      // loops scalar: LAMB's third tensor ran at a third of the speed.)
      Loop tasks = Loop::Tasks("", total, split);
      int64_t offset = 0;
      for (size_t j = k; j < end; ++j) {
        TaskLoop& l = loops_[j];
        Loop part = Loop::Serial("seam_t", absl::StrCat("std::max<int64_t>(seam_begin, ", offset, ")"),
                                 Expr::Min("seam_end", absl::StrCat(offset + l.count)));
        part.body.push_back(Int(l.var, offset ? absl::StrCat("seam_t - ", offset) : "seam_t"));
        Append(part.body, std::move(l.body));
        tasks.body.push_back({std::move(part)});
        offset += l.count;
      }
      ir_.nest.push_back({std::move(tasks)});
      k = end;
    }
  }

  // Whether stage `k` computes a transcendental per element of rows it
  // reads and writes in half precision: twice an f32 pass's arithmetic per
  // byte (a pass writing f32 is bound by its stores, as at f32).
  bool TranscendentalOverHalfRows(size_t k) const {
    const Stage& s = ir_.stages[k];
    const std::vector<int> inputs = RowInputs(k);
    auto half = [](const Instruction* v) { return IsHalfType(v->shape().dtype()); };
    return TranscendentalAlongRows(s) && !inputs.empty() &&
           std::all_of(inputs.begin(), inputs.end(),
                       [&](int b) { return IsHalfType(ir_.buffers[b].dtype); }) &&
           std::all_of(s.roots.begin(), s.roots.end(), half);
  }

  // The inputs stage `k` reads a row of at a time, each row contiguous at
  // r * row length.
  std::vector<int> RowInputs(size_t k) const {
    const Stage& s = ir_.stages[k];
    std::vector<int> inputs;
    for (const Instruction* member : s.members) {
      for (const Instruction* operand : member->operands()) {
        auto storage = ir_.storage.find(operand);
        if (storage == ir_.storage.end() || storage->second != Storage::kInput ||
            !operand->shape().IsArray() || operand->shape().dims() != s.dims) {
          continue;
        }
        const int buffer = ir_.BufferIndex(operand);
        if (std::find(inputs.begin(), inputs.end(), buffer) == inputs.end())
          inputs.push_back(buffer);
      }
    }
    return inputs;
  }

  // A pass after the first of a tile phase that computes a transcendental
  // per element works from cache for long while the memory idles (the
  // hardware prefetcher follows misses, and there are none). Its first
  // such pass asks, row by row, for what the phase reads next from
  // memory: the next task's rows of the inputs the passes so far read,
  // and this task's rows of inputs only later passes read (DIEN's gate).
  // Measured on a 2-core Xeon (seam bench, 3 interleaved rounds): attention
  // softmax 12.4-13.4 -> 10.4-11.0 ms, DIEN 10.8-11.3 -> 8.4-8.5 ms.
  // Without such a pass the last loop over rows asks (the output pass,
  // from cache while its stores go out), a strip at a time (StripPrefetches):
  // RMSNorm 5.69 -> 5.26 ms, dropout + layer
  // norm 3.16 -> 2.93 ms (5 rounds); a middle pass without a
  // transcendental asking made layer norm 4% slower (the loads of its
  // own rows keep the memory busy). Nor are rows the threads' L2s hold
  // together asked for (a softmax over 512 KB took 1.1x the time with them).
  //
  // A phase of one pass asks only where the pass computes for longer than
  // its memory takes: the hardware prefetcher then falls behind too (a
  // transcendental per element of half-precision rows: tanh-GELU bf16
  // [8192,3072], 5 rounds, 13.3 -> 7.6 ms; at f32, where the stores bind,
  // 7.6 -> 8.4).
  void PrefetchAhead(size_t begin, size_t end, Body& body) {
    const auto [rows, rpb, bpr, tasks] = TileTasksOf(ir_, ir_.stages[begin]);
    if (bpr != 1 || rows <= rpb || (end - begin < 2 && !TranscendentalOverHalfRows(begin))) return;
    size_t pass = begin + 1;
    while (pass < end && (!TranscendentalAlongRows(ir_.stages[pass]) || OnlineRider(pass, begin))) {
      ++pass;
    }
    // Each stage ends the phase's body with its node, a loop over the rows
    // but for a column fold's (a scope).
    auto node_of = [&](size_t k) { return std::get_if<Loop>(&body[body.size() - (end - k)].node); };
    const bool output_pass = pass == end;
    if (output_pass) {
      pass = end - 1;
      while (pass > begin + 1 && node_of(pass) == nullptr) --pass;
    }
    // Long rows stream through the hardware prefetcher within a pass; a
    // row asked for at once past 16 KB fills the line-fill buffers. An
    // output pass asks a strip at a time, so it asks for long rows too
    // where the next task's rows fit in L2 beside the ones it reads again
    // (the vocabulary's log-softmax, 1 MB rows: the next row's reads go
    // out beside this one's streamed stores; seam bench, 5 alternated
    // rounds, three runs: 6.40 -> 5.98, 6.80 -> 6.05, 6.35 -> 5.86 ms).
    absl::flat_hash_set<int> read;
    int64_t bytes = 0, row_bytes = 0;
    bool long_rows = false;
    for (size_t k = begin; k < end; ++k) {
      for (int buffer : RowInputs(k)) {
        const KernelBuffer& b = ir_.buffers[buffer];
        const int64_t row = ir_.stages[k].RowLength() * DTypeByteSize(b.dtype);
        long_rows |= row > kPrefetchedRow;
        if (!read.insert(buffer).second) continue;
        bytes += b.elements * DTypeByteSize(b.dtype);
        row_bytes += rpb * row;
      }
    }
    if (long_rows && (!output_pass || 2 * row_bytes > device_.onchip_bytes_per_unit)) return;
    if (bytes <= device_.onchip_bytes_per_unit * device_.units) return;
    std::vector<Node> ahead;
    std::vector<int> seen;
    const int64_t next_rows = rpb, last_row = rows - 1;  // lambdas take no structured bindings
    auto ask = [&](size_t k, bool next_task) {
      for (int buffer : RowInputs(k)) {
        if (std::find(seen.begin(), seen.end(), buffer) != seen.end()) continue;
        seen.push_back(buffer);
        // The last task asks for the last row again: a condition here
        // made GCC version the row loop, and its copy for the last task
        // left the pass's exps scalar (softmax over 256 rows: 2x slower).
        Expr row =
            next_task ? Expr::Min(absl::StrCat("r + ", next_rows), absl::StrCat(last_row)) : "r";
        ahead.push_back({Prefetch{buffer, std::move(row), ir_.stages[k].RowLength(), "", 0}});
      }
    };
    for (size_t k = begin; k <= pass; ++k) ask(k, /*next_task=*/true);
    for (size_t k = pass + 1; k < end; ++k) ask(k, /*next_task=*/false);
    if (ahead.empty()) return;
    Loop* row_loop = node_of(pass);
    if (row_loop == nullptr || (output_pass && StripPrefetches(*row_loop, ahead)) || long_rows) {
      return;
    }
    row_loop->body.insert(row_loop->body.begin(), std::make_move_iterator(ahead.begin()),
                          std::make_move_iterator(ahead.end()));
  }

  // An output pass's prefetches spread over its row: kPrefetchStrip bytes
  // of each asked row before each strip of the row's vector loop (the
  // innermost, inside the staging strips). A whole row asked at once waits
  // on the line-fill buffers and holds up the loads and stores behind it:
  // seam bench, 5 rounds, RMSNorm bf16 [8192,4096] 6.38 -> 4.89 ms. A pass
  // computing exps keeps its row's prefetches at once (attention softmax
  // 7.94 -> 8.90 ms in strips: its loop is long enough to hide them). False
  // where the row takes one strip or less.
  bool StripPrefetches(Loop& row_loop, const std::vector<Node>& ahead) {
    Body* body = &row_loop.body;
    while (Loop* serial = FirstLoop(*body, LoopRole::kSerial)) body = &serial->body;
    Loop* vector = FirstLoop(*body, LoopRole::kSimd);
    if (vector == nullptr || !vector->end.min.empty()) return false;
    int64_t widest = 1, row_length = 0;
    for (const Node& n : ahead) {
      const Prefetch& p = std::get<Prefetch>(n.node);
      widest = std::max<int64_t>(widest, DTypeByteSize(ir_.buffers[p.buffer].dtype));
      row_length = std::max(row_length, p.row_length);
    }
    const int64_t strip = kPrefetchStrip / widest;
    if (row_length <= strip) return false;
    Loop strips = Loop::Serial("pb", vector->begin, vector->end, absl::StrCat(strip));
    for (const Node& n : ahead) {
      Prefetch piece = std::get<Prefetch>(n.node);
      piece.column = "pb";
      piece.count = strip;
      strips.body.push_back({std::move(piece)});
    }
    strips.body.push_back(Int("pe", Expr::Min(vector->end.text, absl::StrCat("pb + ", strip))));
    Loop inner = std::move(*vector);
    inner.begin = "pb";
    inner.end = "pe";
    strips.body.push_back({std::move(inner)});
    *vector = std::move(strips);
    return true;
  }

  // Per-thread tile buffers: rows_per_block rows of each regional value.
  void AllocateTiles() {
    for (const Stage& s : ir_.stages) {
      for (const Instruction* v : s.roots) {
        if (!ir_.tile_stage.contains(v)) continue;
        int64_t per_row = TileElementsPerRow(ir_, v);
        ir_.allocations.push_back({AllocationKind::kTile, TileType(v->shape().dtype()),
                                   TileName(ir_, v),
                                   std::max<int64_t>(1, s.mapping.rows_per_block * per_row)});
      }
    }
  }

  // Outputs written past the caches: per thread, a piece of a row staged
  // in L1 and then streamed out (only where a stage writes them row by row).
  void AllocateStagingRows() {
    absl::flat_hash_set<int> declared;
    for (const Stage& s : ir_.stages) {
      for (const Instruction* v : s.roots) {
        int k = ir_.BufferIndex(v);
        if (!IsStaged(s, v) || !declared.insert(k).second) continue;
        ir_.allocations.push_back({AllocationKind::kStaging, StorageType(v->shape().dtype()),
                                   absl::StrCat("stage_", k), StagePiece(s)});
      }
    }
  }

  // The elements of a row one task computes: a row, or its share when
  // the phase splits rows across blocks.
  int64_t StagedChunk(const Stage& s) const {
    if (channel_strips_) return channel_strips_->run;  // a channel's run
    return std::max<int64_t>(1, CeilDiv(s.RowLength(), PhaseBlocksPerRow(ir_, s.phase)));
  }

  // Rows are staged and streamed a piece at a time: 4096 elements of
  // pieces (16 KB of f32), the stage's staged roots together, stay in L1
  // between the write and the stream (an Adam step's six outputs, 4096
  // each, spilled to L2).
  int64_t StagePiece(const Stage& s) const {
    int64_t staged = 0;
    for (const Instruction* v : s.roots) staged += IsStaged(s, v);
    const int64_t piece = std::max<int64_t>(256, 4096 / std::max<int64_t>(1, staged) / 64 * 64);
    return std::min<int64_t>(piece, StagedChunk(s));
  }

  // Staged when streamed (see KernelBuffer::streamed) and written
  // contiguously row by row, by a stage without a transcendental per
  // element or with short row chunks (kStreamedTranscendentalRow): a
  // transcendental stage's plain stores drain while it computes, where a
  // long staged piece's burst of streamed stores waits on the memory with
  // nothing to overlap (tanh-GELU over 100 MB, 2 cores: 19.5 -> 27.6 ms
  // streamed). A root of another shape with as many elements (a sibling
  // merged into the stage) lies at the stage's linear positions, so it is
  // contiguous too.
  // So are a long row reduction's elementwise roots (a LAMB tensor's
  // moments and update beside its norm), and scratch values the kernel's
  // own traffic evicts before their readers come.
  bool IsStaged(const Stage& s, const Instruction* v) const {
    const bool along_rows =
        s.kind == LoopKind::kElementwise ||
        (s.kind == LoopKind::kRowReduce && (s.RowLength() > kLaneSumRow || !FloatSumsOnly(s)));
    const int k = ir_.BufferIndex(v);
    return along_rows && k >= 0 && ir_.buffers[k].streamed &&
           v->shape().ElementCount() == s.Rows() * s.RowLength() &&
           (!TranscendentalAlongRows(s) ||
            (!channel_strips_ && StagedChunk(s) <= kStreamedTranscendentalRow));
  }

  // Rows a sub-tile of the phase [begin, end) takes, its passes running
  // over one sub-tile's rows before the next's; 0 where they run over the
  // task's rows. Beside a column fold a task's rows are many (a partial a
  // task; see the planner's row tiles) and its passes would read them
  // from L2 again and again; in sub-tiles of kSubTileBytes of row inputs
  // they read them from L1, and the partials stay as they were.
  int64_t SubTileRows(size_t begin, size_t end) const {
    const auto [rows, rpb, bpr, tasks] = TileTasksOf(ir_, ir_.stages[begin]);
    if (bpr != 1 || end - begin < 2) return 0;
    bool folds = false, passes = false;
    absl::flat_hash_set<int> inputs;
    int64_t row_bytes = 0;
    for (size_t k = begin; k < end; ++k) {
      const bool fold = ir_.stages[k].kind == LoopKind::kPartialReduce;
      folds |= fold;
      passes |= !fold;
      for (int buffer : RowInputs(k)) {
        if (inputs.insert(buffer).second)
          row_bytes += ir_.stages[k].RowLength() * DTypeByteSize(ir_.buffers[buffer].dtype);
      }
    }
    if (!folds || !passes || row_bytes == 0) return 0;
    // A sub-tile of one row would not fit L1 either: such rows keep the
    // task's loops.
    const int64_t sub = kSubTileBytes / row_bytes;
    return sub >= 2 && sub < rpb ? sub : 0;
  }

  void TilePhase(size_t begin, size_t end) {
    const Stage& first = ir_.stages[begin];
    const auto [rows, rpb, bpr, tasks] = TileTasksOf(ir_, first);
    int64_t elements = 0;
    for (size_t k = begin; k < end; ++k)
      elements += ir_.stages[k].Rows() * ir_.stages[k].RowLength();
    TaskLoop& loop = loops_.emplace_back(TaskLoop{first.phase, "task", tasks, elements, {}});
    Body& body = loop.body;
    body.push_back(Int("r0", absl::StrCat("(task / ", bpr, ") * ", rpb)));
    body.push_back(Int("r1", Expr::Min(absl::StrCat(rows), absl::StrCat("r0 + ", rpb))));
    body.push_back(Int("part", absl::StrCat("task % ", bpr)));
    body.push_back({Statement{"(void)part;"}});
    staged_in_phase_ = false;
    const int64_t sub = SubTileRows(begin, end);
    if (sub > 0) {
      rows_begin_ = "rs";
      rows_end_ = "re";
    }
    Body passes;
    for (size_t k = begin; k < end; ++k) {
      const Stage& s = ir_.stages[k];
      if (OnlineRider(k, begin)) {
        passes.push_back({Scope{}});  // folded in its max's pass
      } else if (s.kind == LoopKind::kRowReduce) {
        const int rider = OnlineRiderOf(k, end);
        passes.push_back(rider >= 0 ? OnlineRowReduce(k, rider) : RowReduce(k));
      } else if (s.kind == LoopKind::kPartialReduce) {
        passes.push_back(RowTileFolding(k));
      } else {
        passes.push_back(Elementwise(k, bpr));
      }
    }
    PrefetchAhead(begin, end, passes);
    if (sub > 0) {
      Loop subtiles = Loop::Serial("rs", "r0", "r1", absl::StrCat(sub));
      subtiles.body.push_back(Int("re", Expr::Min("r1", absl::StrCat("rs + ", sub))));
      Append(subtiles.body, std::move(passes));
      body.push_back({std::move(subtiles)});
    } else {
      Append(body, std::move(passes));
    }
    rows_begin_ = "r0";
    rows_end_ = "r1";
    // Streamed stores are visible to other threads past the phase's barrier.
    if (staged_in_phase_) body.push_back({StreamFence{}});
    // The tiles' partials of its column reductions meet in the next phase
    // (`body` is not used past here: the new loops may move it).
    for (size_t k = begin; k < end; ++k) {
      const Stage& s = ir_.stages[k];
      if (s.kind != LoopKind::kPartialReduce) continue;
      const int64_t kept = SplitFolded(s).kept;
      CombineLoop(k, {s.Rows(), std::max<int64_t>(1, s.mapping.rows_per_block), kept},
                  kept * s.chunks);
    }
  }

  // The whole kernel as one loop over strips of columns (see ColumnStrips):
  // each task folds its columns over every row and combines them at once,
  // then runs the passes over the rows and over the kept elements on the
  // same columns.
  void ColumnStripPhase(const ColumnStrips& strips) {
    int64_t elements = 0;
    for (const Stage& s : ir_.stages) elements += s.Rows() * s.RowLength();
    TaskLoop& loop = loops_.emplace_back(TaskLoop{0, "task", strips.tasks, elements, {}});
    Body& body = loop.body;
    body.push_back(Int("col0", absl::StrCat("task * ", strips.width)));
    body.push_back(
        Int("col1", Expr::Min(absl::StrCat(strips.columns), absl::StrCat("col0 + ", strips.width))));
    staged_in_phase_ = false;
    for (size_t k = 0; k < ir_.stages.size(); ++k) {
      const Stage& s = ir_.stages[k];
      if (s.kind == LoopKind::kPartialReduce) {
        body.push_back({Scope{StripFolding(k, strips)}});
        continue;
      }
      body.push_back(RowsAlong(k, "0", absl::StrCat(s.Rows()), "col0", "col1"));
    }
    if (staged_in_phase_) body.push_back({StreamFence{}});
  }

  // A column strip's fold over every row into the first chunk's partials,
  // combined right after (the only chunk).
  Body StripFolding(size_t stage, const ColumnStrips& strips) {
    const Stage& s = ir_.stages[stage];
    const FoldSplit split = SplitFolded(s);
    Body body;
    body.push_back(Int("chunk", "0"));
    body.push_back(Int("q0", "0"));
    body.push_back(Int("q1", absl::StrCat(strips.rows)));
    PartPointers(s, split.kept, body);
    FoldRows(stage, split, "col0", "col1", body);
    Loop combine = Loop::Serial("p", "col0", "col1");
    combine.body.push_back(
        {Compute::Scalar(stage, {CombinePartials{strips.rows, strips.rows, split.kept}})});
    body.push_back({std::move(combine)});
    return body;
  }

  // The whole kernel as one loop over the folds' kept positions (see
  // ChannelStrips): each task folds its position's runs and combines them
  // at once, then runs the kept passes at the position and the passes over
  // its runs.
  void ChannelStripPhase(const ChannelStrips& strips) {
    int64_t elements = 0;
    for (const Stage& s : ir_.stages) elements += s.Rows() * s.RowLength();
    TaskLoop& loop = loops_.emplace_back(TaskLoop{0, "task", strips.kept, elements, {}});
    Body& body = loop.body;
    body.push_back(Int("p", "task"));
    staged_in_phase_ = false;
    for (size_t k = 0; k < ir_.stages.size(); ++k) {
      const Stage& s = ir_.stages[k];
      if (s.kind == LoopKind::kPartialReduce) {
        Append(body, ChannelFolding(k, strips));
      } else if (s.Rows() == 1 && s.RowLength() == strips.kept) {  // as ChannelStripsOf tells
        body.push_back(RowsAlong(k, "0", "1", "p", "p + 1"));
      } else {
        body.push_back(ChannelRuns(k, strips));
      }
    }
    if (staged_in_phase_) body.push_back({StreamFence{}});
  }

  // A channel's fold over every run into the first chunk's partials,
  // combined right after (the only chunk); a sum of squared deviations
  // folded in its host's pass (Stage::one_pass) combines alone.
  Body ChannelFolding(size_t stage, const ChannelStrips& strips) {
    RunSplit split;
    split.outer_part = strips.outer_part;
    split.kept_part = strips.kept_part;
    split.inner_dims = strips.inner_dims;
    split.outer = split.per_chunk = strips.outer;
    split.kept = strips.kept;
    split.run = strips.run;
    Body body;
    if (ir_.stages[stage].one_pass) {
      body.push_back({Scope{{{Compute::Scalar(
          stage, {CombineDeviations{split.outer, split.outer, split.kept, split.run}})}}}});
      return body;
    }
    Body fold{Int("chunk", "0")};
    RunFoldingBody(stage, split, fold);
    body.push_back({Scope{std::move(fold)}});
    body.push_back({Scope{
        {{Compute::Scalar(stage, {CombinePartials{split.outer, split.outer, split.kept}})}}}});
    return body;
  }

  // A pass over the space at a channel: each outer position's run, in
  // staging pieces where it streams outputs.
  Node ChannelRuns(size_t stage, const ChannelStrips& strips) {
    const Stage& s = ir_.stages[stage];
    const std::vector<const Instruction*> staged = StagedRoots(s);
    Loop runs = Loop::Serial("o", "0", absl::StrCat(strips.outer));
    Loop along = Loop::Simd("c", "0", absl::StrCat(strips.run));
    along.body.push_back(
        {Compute::At(stage, {strips.outer_part, strips.kept_part, {strips.inner_dims, "c"}}, "",
                     {StoreRoots{s.roots, staged}})});
    runs.body.push_back(InPieces(s, std::move(along), staged,
                                 absl::StrCat("(o * ", strips.kept, " + p) * ", strips.run)));
    return {std::move(runs)};
  }

  // Whether stage k is a softmax sum folded in its max's pass (online
  // softmax), that max among the phase's stages from `begin`.
  bool OnlineRider(size_t k, size_t begin) const {
    const int host = ir_.stages[k].online_host;
    return host >= static_cast<int>(begin) && host < static_cast<int>(k) &&
           ir_.stages[host].phase == ir_.stages[k].phase;
  }

  // The stage of the phase up to `end` whose sum folds in stage k's pass,
  // or -1.
  int OnlineRiderOf(size_t k, size_t end) const {
    for (size_t j = k + 1; j < end; ++j) {
      if (ir_.stages[j].online_host == static_cast<int>(k) && OnlineRider(j, k)) {
        return static_cast<int>(j);
      }
    }
    return -1;
  }

  // A softmax's max (stage `host`) and sum of shifted exps (`rider`) in one
  // pass over blocks of each row (online softmax): each block folds into
  // the row's running max, which the tile then holds while the block's exps
  // are summed against it; the sum so far is rescaled by exp(old - new)
  // when the max grows. Blocks seen while the max is -inf add nothing:
  // their exps are 0 against a finite final max, and the sum is NaN when
  // the final max is -inf too, as the two-pass form gives.
  Node OnlineRowReduce(size_t host, size_t rider) {
    const Stage& h = ir_.stages[host];
    const Stage& s = ir_.stages[rider];
    const int64_t length = h.RowLength();
    const std::string type = ComputeType(s.reductions[0]->shape().dtype()),
                      limits = absl::StrCat("std::numeric_limits<", type, ">");
    const std::string linear = absl::StrCat("r * ", length, " + c");
    Loop rows = Loop::Serial("r", rows_begin_, rows_end_);
    rows.body.push_back({Compute::Scalar(host, {InitAccumulator{0, Accumulation::kOrderKeys}})});
    rows.body.push_back({Statement{absl::StrCat(type, " seam_max = -", limits,
                                                "::infinity(); double seam_sum = 0; ",
                                                "bool seam_unseen = false;")}});
    Loop blocks = Loop::Serial("cb", "0", absl::StrCat(length), absl::StrCat(kOnlineBlock));
    blocks.body.push_back(
        Int("ce", Expr::Min(absl::StrCat(length), absl::StrCat("cb + ", kOnlineBlock))));
    Loop maxes = Loop::Simd("c", "cb", "ce", {{"max", "key0"}, {"|", "nan0"}});
    maxes.body.push_back({Compute::At(host, RowParts(h), linear,
                                      {Accumulate{0, Accumulation::kOrderKeys, "acc0", ""}})});
    blocks.body.push_back({std::move(maxes)});
    blocks.body.push_back({Statement{
        absl::StrCat("acc0 = nan0 ? ", limits, "::quiet_NaN() : seam_from_order_key(key0);")}});
    blocks.body.push_back(
        {Compute::Scalar(host, {FinishRow{0, /*with_init=*/false}}, /*loads_only=*/true)});
    blocks.body.push_back({Statement{
        "if (acc0 != seam_max) seam_sum *= double(std::exp(seam_max - acc0)); seam_max = acc0;"}});
    // The next block asked for while this one's exps are computed from L1
    // (the last block asks for itself again: a test of the block would
    // have GCC copy the loop with its exps scalar, see ParallelLoops).
    if (length > kOnlineBlock) {
      for (int buffer : RowInputs(host)) {
        const std::string b = absl::StrCat("b", buffer);
        blocks.body.push_back({Statement{absl::StrCat(
            "seam_prefetch(", b, " + r * ", length, " + std::min<int64_t>(ce, ",
            length - kOnlineBlock, "), ", kOnlineBlock, " * sizeof(", b, "[0]));")}});
      }
    }
    Body sum_block;
    sum_block.push_back({Statement{absl::StrCat(type, " seam_block = 0;")}});
    Loop exps = Loop::Simd("c", "cb", "ce", {{"+", "seam_block"}});
    exps.body.push_back({Compute::At(rider, RowParts(s), linear,
                                     {Accumulate{0, Accumulation::kSum, "seam_block", ""}})});
    sum_block.push_back({std::move(exps)});
    sum_block.push_back({Statement{"seam_sum += seam_block;"}});
    Branches block_sum;
    block_sum.arms.emplace_back(absl::StrCat("acc0 == -", limits, "::infinity()"),
                                Body{{Statement{"seam_unseen = true;"}}});
    block_sum.arms.emplace_back("", std::move(sum_block));
    blocks.body.push_back({std::move(block_sum)});
    rows.body.push_back({std::move(blocks)});
    // The sum, in a scope of its own: its accumulator shadows the max's.
    Body finish;
    finish.push_back({Compute::Scalar(rider, {InitAccumulator{0, Accumulation::kFromInit}})});
    finish.push_back({Statement{absl::StrCat(
        "acc0 = ", ReducerName(ir_, s.reductions[0]), "(acc0, seam_unseen && seam_max == -", limits,
        "::infinity() ? ", limits, "::quiet_NaN() : ", type, "(seam_sum));")}});
    finish.push_back(
        {Compute::Scalar(rider, {FinishRow{0, /*with_init=*/false}}, /*loads_only=*/true)});
    rows.body.push_back({Scope{std::move(finish)}});
    return {std::move(rows)};
  }

  // A column reduction in row tiles: the phase's rows (the task's, or its
  // sub-tile's) folded into its tile's partials, kept elements innermost.
  // A partial starts at the tile's first row, r0, not at a sub-tile's.
  Node RowTileFolding(size_t stage) {
    const Stage& s = ir_.stages[stage];
    const int64_t kept = SplitFolded(s).kept;
    Body body;
    body.push_back(Int("chunk", "task"));  // whole rows: a task is a tile
    PartPointers(s, kept, body);
    // The steps in a vector of their final size (see ElementFolding).
    std::vector<ComputeStep> steps(s.reductions.size() + 1);
    for (size_t j = 0; j < s.reductions.size(); ++j) {
      steps[j] = Accumulate{static_cast<int>(j), Accumulation::kFirstOfChunk,
                            absl::StrCat("part", j, "[p]"), "r == r0"};
    }
    steps.back() = StoreRoots{s.roots, {}};
    Compute compute = Compute::At(stage, FoldParts(s, "r", "p"), "", std::move(steps));
    Loop lanes = Loop::Simd("p", "0", absl::StrCat(kept));
    lanes.body.push_back({std::move(compute)});
    Loop rows = Loop::Serial("r", rows_begin_, rows_end_);
    rows.body.push_back({std::move(lanes)});
    body.push_back({std::move(rows)});
    return {Scope{std::move(body)}};
  }

  // The phase's rows (the task's, or its sub-tile's) of an elementwise
  // stage, each its task's part.
  Node Elementwise(size_t stage, int64_t bpr) {
    const int64_t length = ir_.stages[stage].RowLength();
    const int64_t chunk = CeilDiv(length, bpr);
    return RowsAlong(stage, rows_begin_, rows_end_, absl::StrCat("part * ", chunk),
                     Expr::Min(absl::StrCat(length), absl::StrCat("c0 + ", chunk)));
  }

  // Rows [r0, r1) of an elementwise stage, elements [c0, c1) of each (`c0`
  // may use r; `c1` c0).
  Node RowsAlong(size_t stage, Expr r0, Expr r1, Expr c0, Expr c1) {
    const Stage& s = ir_.stages[stage];
    const int64_t length = s.RowLength();
    const std::vector<const Instruction*> staged = StagedRoots(s);
    Loop rows = Loop::Serial("r", std::move(r0), std::move(r1));
    rows.body.push_back(Int("c0", std::move(c0)));
    rows.body.push_back(Int("c1", std::move(c1)));
    Compute compute = Compute::At(stage, RowParts(s), absl::StrCat("r * ", length, " + c"),
                                  {StoreRoots{s.roots, staged}});
    Loop along = Loop::Simd("c", "c0", "c1");
    along.body.push_back({std::move(compute)});
    rows.body.push_back(InPieces(s, std::move(along), staged));
    return {std::move(rows)};
  }

  // The vector loop `along` over a row's elements [begin, end) of stage
  // `s`, piece by piece when it stages outputs: each piece's loop, then
  // the piece streamed out of each staging row. Reductions in `along`
  // carry from piece to piece. Its bounds are plain expressions (no minimum).
  Node InPieces(const Stage& s, Loop along, const std::vector<const Instruction*>& staged,
                std::string row_start = "") {
    if (staged.empty()) return {std::move(along)};
    staged_in_phase_ = true;
    const int64_t piece = StagePiece(s);
    Loop pieces = Loop::Serial("s0", along.begin, along.end, absl::StrCat(piece));
    pieces.body.push_back(Int("s1", Expr::Min(along.end.text, absl::StrCat("s0 + ", piece))));
    along.begin = "s0";
    along.end = "s1";
    pieces.body.push_back({std::move(along)});
    for (const Instruction* v : staged) {
      int k = ir_.BufferIndex(v);
      const std::string start = row_start.empty() ? absl::StrCat("r * ", s.RowLength()) : row_start;
      pieces.body.push_back(
          {StreamOut{k, absl::StrCat(start, " + s0"), absl::StrCat("stage_", k), "(s1 - s0)"}});
    }
    return {std::move(pieces)};
  }

  // The roots of stage `s` that a schedule stages and streams out.
  std::vector<const Instruction*> StagedRoots(const Stage& s) const {
    std::vector<const Instruction*> staged;
    for (const Instruction* v : s.roots) {
      if (IsStaged(s, v)) staged.push_back(v);
    }
    return staged;
  }

  Node RowReduce(size_t stage) {
    const Stage& s = ir_.stages[stage];
    const int64_t length = s.RowLength();
    if (length <= kLaneSumRow && FloatSumsOnly(s)) return LaneSumRows(stage);
    // One general reducer makes the whole loop scalar.
    const bool vectorizable = std::all_of(s.reductions.begin(), s.reductions.end(), [](auto* r) {
      return VectorAccumulation(*r).has_value();
    });
    Loop rows = Loop::Serial("r", rows_begin_, rows_end_);
    std::vector<ComputeStep> inits(s.reductions.size());
    Loop along = vectorizable ? Loop::Simd("c", "0", absl::StrCat(length))
                              : Loop::Serial("c", "0", absl::StrCat(length));
    // The fold's steps in a vector of their final size (see WholeFolding).
    std::vector<ComputeStep> steps(s.reductions.size() + 1);
    Body finish;
    for (size_t j = 0; j < s.reductions.size(); ++j) {
      const Instruction* r = s.reductions[j];
      const Accumulation how = vectorizable ? *VectorAccumulation(*r) : Accumulation::kFromInit;
      const int reduction = static_cast<int>(j);
      inits[j] = InitAccumulator{reduction, how};
      steps[j] = Accumulate{reduction, how, absl::StrCat("acc", j), ""};
      if (how == Accumulation::kOrderKeys) {
        along.reductions.push_back({IsMax(*r) ? "max" : "min", absl::StrCat("key", j)});
        along.reductions.push_back({"|", absl::StrCat("nan", j)});
        finish.push_back({Statement{absl::StrCat(
            "acc", j, " = nan", j, " ? std::numeric_limits<", ComputeType(r->shape().dtype()),
            ">::quiet_NaN() : seam_from_order_key(key", j, ");")}});
      } else if (vectorizable) {
        along.reductions.push_back({LaneReduction(*r), absl::StrCat("acc", j)});
      }
      finish.push_back({Compute::Scalar(stage, {FinishRow{reduction, /*with_init=*/false}},
                                        /*loads_only=*/true)});
    }
    const std::vector<const Instruction*> staged = StagedRoots(s);
    steps.back() = StoreRoots{s.roots, staged};
    along.body.push_back(
        {Compute::At(stage, RowParts(s), absl::StrCat("r * ", length, " + c"), std::move(steps))});
    rows.body.push_back({Compute::Scalar(stage, std::move(inits))});
    rows.body.push_back(InPieces(s, std::move(along), staged));
    Append(rows.body, std::move(finish));
    return {std::move(rows)};
  }

  // Short rows of float sums: each row adds its blocks of kSumLanes
  // elements into lanes<j>, a block's lanes in one vector, then the lanes
  // as a tree into acc<j>; a row's remainder goes into the first lanes.
  Node LaneSumRows(size_t stage) {
    const Stage& s = ir_.stages[stage];
    const int64_t length = s.RowLength(), blocks = length / kSumLanes * kSumLanes;
    const bool twinless = length <= kTwinlessRow && !TouchesHalfPrecision(s);
    Loop rows = Loop::Serial("r", rows_begin_, rows_end_);
    std::vector<ComputeStep> inits(s.reductions.size());
    Body finish;
    for (size_t j = 0; j < s.reductions.size(); ++j) {
      const Instruction* r = s.reductions[j];
      const int reduction = static_cast<int>(j);
      inits[j] = InitAccumulator{reduction, Accumulation::kFromInit};
      rows.body.push_back({Statement{
          absl::StrCat(ComputeType(r->shape().dtype()), " lanes", j, "[", kSumLanes, "] = {};")}});
      finish.push_back({Statement{absl::StrCat("acc", j, " = ", ReducerName(ir_, r), "(acc", j,
                                               ", seam_lane_sum(lanes", j, "));")}});
      finish.push_back({Compute::Scalar(stage, {FinishRow{reduction, /*with_init=*/false}},
                                        /*loads_only=*/true)});
    }
    // The lanes of element c: c - first, for blocks starting at `first`.
    auto fold = [&](const std::string& first) {
      Compute compute = Compute::At(stage, RowParts(s), absl::StrCat("r * ", length, " + c"), {});
      for (size_t j = 0; j < s.reductions.size(); ++j) {
        compute.steps.push_back(Accumulate{static_cast<int>(j), Accumulation::kSum,
                                           absl::StrCat("lanes", j, "[c - ", first, "]"), ""});
      }
      compute.steps.push_back(StoreRoots{s.roots, {}});
      return compute;
    };
    rows.body.insert(rows.body.begin(), {Compute::Scalar(stage, std::move(inits))});
    if (blocks > 0) {
      Loop block = Loop::Serial("cb", "0", absl::StrCat(blocks), absl::StrCat(kSumLanes));
      Loop along = Loop::Simd("c", "cb", absl::StrCat("cb + ", kSumLanes));
      along.twinless = twinless;
      along.body.push_back({fold("cb")});
      block.body.push_back({std::move(along)});
      rows.body.push_back({std::move(block)});
    }
    if (blocks < length) {
      Loop along = Loop::Simd("c", absl::StrCat(blocks), absl::StrCat(length));
      along.twinless = twinless;
      along.body.push_back({fold(absl::StrCat(blocks))});
      rows.body.push_back({std::move(along)});
    }
    Append(rows.body, std::move(finish));
    return {std::move(rows)};
  }

  // Folding phase, then combining phase (see LoopKind::kPartialReduce).
  absl::Status PartialReduce(size_t stage) {
    const Stage& s = ir_.stages[stage];
    if (s.one_pass) return CombineOnePass(stage);
    const FoldSplit split = SplitFolded(s);
    const int64_t folded = split.folded, kept = split.kept;
    // What the combining phase walks: units of folded work and how many
    // fall in a chunk.
    int64_t units = folded, per_chunk = CeilDiv(folded, s.chunks);
    if (FoldsContiguousRuns(s)) {
      const RunSplit runs = SplitRuns(s);
      units = runs.outer;
      per_chunk = runs.per_chunk;
      RunFolding(stage, runs);
    } else if (kept == 1) {
      WholeFolding(stage, split);
    } else {
      ElementFolding(stage, split);
    }
    CombineLoop(stage, {units, per_chunk, kept}, kept * std::min(units, s.chunks));
    return absl::OkStatus();
  }

  // The combining phase of partial reduction `stage`: for each kept
  // element, the reduce's init, then each non-empty chunk's partial, in
  // order; kCombinedAtOnce kept elements a task, each chunk's partials of
  // them across vector lanes into arrays of accumulators (a kept element
  // at a time, the chunks' partials a row apart made a chain of dependent
  // scalar additions, which GCC does not vectorize across kept elements: a
  // tenth of a layer norm backward's time, its 391 tiles' partials of 768
  // columns).
  void CombineLoop(size_t stage, CombinePartials combine, int64_t elements) {
    using Part = CombinePartials::Part;
    const Stage& s = ir_.stages[stage];
    const int64_t kept = combine.kept;
    // Blocks of at most kCombinedAtOnce, a few per core (768 columns in 3
    // blocks would leave one of two cores a third of the work).
    const int64_t per_core = CeilDiv(kept, 4 * std::max<int64_t>(1, device_.units));
    const int64_t block = std::clamp<int64_t>(CeilDiv(per_core, 16) * 16, 16, kCombinedAtOnce);
    TaskLoop& loop = loops_.emplace_back(
        TaskLoop{s.phase + 1, "block", CeilDiv(kept, block), elements, {}});
    Body& body = loop.body;
    body.push_back(Int("p0", absl::StrCat("block * ", block)));
    body.push_back(Int("p1", Expr::Min(absl::StrCat(kept), absl::StrCat("p0 + ", block))));
    for (size_t j = 0; j < s.reductions.size(); ++j) {
      body.push_back({Statement{absl::StrCat(ComputeType(s.reductions[j]->shape().dtype()),
                                             " combined", j, "[", kCombinedAtOnce, "];")}});
    }
    auto lanes = [&](Part part) {
      combine.part = part;
      Loop lanes = Loop::Simd("p", "p0", "p1");
      lanes.body.push_back({Compute::Scalar(stage, {combine})});
      return Node{std::move(lanes)};
    };
    body.push_back(lanes(Part::kInit));
    Loop chunks = Loop::Serial("chunk", "0", absl::StrCat(CeilDiv(combine.units, combine.per_chunk)));
    chunks.body.push_back(lanes(Part::kChunk));
    body.push_back({std::move(chunks)});
    body.push_back(lanes(Part::kStore));
  }

  // A sum of squared deviations folded in its host's pass (Stage::one_pass)
  // runs only its combining phase: the chunks' statistics met with the
  // centre.
  absl::Status CombineOnePass(size_t stage) {
    const Stage& s = ir_.stages[stage];
    const Stage& host = ir_.stages[s.one_pass->host];
    if (!FoldsContiguousRuns(host)) {
      return absl::InternalError(
          absl::StrCat(ir_.name, ": stage ", stage, " folds in a stage that does not fold runs"));
    }
    const RunSplit runs = SplitRuns(host);
    TaskLoop& loop =
        loops_.emplace_back(TaskLoop{s.phase + 1, "p", runs.kept, runs.kept * runs.chunks, {}});
    loop.body.push_back({Compute::Scalar(
        stage, {CombineDeviations{runs.outer, runs.per_chunk, runs.kept, runs.run}})});
    return absl::OkStatus();
  }

  // The partial pointers of chunk `chunk` (one per reduction): part<j>.
  void PartPointers(const Stage& s, int64_t kept, Body& body) {
    for (size_t j = 0; j < s.reductions.size(); ++j) {
      const Instruction* r = s.reductions[j];
      body.push_back({Statement{absl::StrCat(PartialType(*r), "* part", j, " = b",
                                             ir_.PartialsIndex(r), " + chunk * ", kept, ";")}});
    }
  }

  // The type reduction `r`'s partials are kept in (float for half types).
  static std::string PartialType(const Instruction& r) {
    return StorageType(IsHalfType(r.shape().dtype()) ? DType::kF32 : r.shape().dtype());
  }

  // Whether the folded dimensions include the innermost, behind every kept
  // one (an NCHW batch-norm statistic: kept C, folded N, H, W), and every
  // reducer is a sum: then each (outer, kept) position folds a contiguous
  // run with a vector sum, instead of striding across kept elements.
  static bool FoldsContiguousRuns(const Stage& s) {
    bool any_kept = std::find(s.folded.begin(), s.folded.end(), false) != s.folded.end();
    return any_kept && !s.folded.empty() && s.folded.back() && SumsOnly(s);
  }

  // Declares `<prefix><j> = 0` for each reduction, and the lane-wise sums
  // of them.
  std::vector<SimdReduction> ZeroSums(const Stage& s, const std::string& prefix, Body& body) {
    std::vector<SimdReduction> sums;
    for (size_t j = 0; j < s.reductions.size(); ++j) {
      body.push_back({Statement{
          absl::StrCat(ComputeType(s.reductions[j]->shape().dtype()), " ", prefix, j, " = 0;")}});
      sums.push_back({"+", absl::StrCat(prefix, j)});
    }
    return sums;
  }

  // A partial reduction folding contiguous runs: its folded dims split at
  // the last kept one, `outer` before it, the contiguous run of `inner`
  // dims after it; tasks are (chunk of outer, kept position) pairs.
  struct RunSplit {
    IndexPart outer_part{{}, "o"}, kept_part{{}, "p"};
    std::vector<int> inner_dims;
    int64_t outer = 1, kept = 1, run = 1, chunks = 1, per_chunk = 1;
  };

  static RunSplit SplitRuns(const Stage& s) {
    RunSplit split;
    int last_kept = 0;
    for (int d = 0; d < static_cast<int>(s.dims.size()); ++d) {
      if (!s.folded[d]) last_kept = d;
    }
    for (int d = 0; d < static_cast<int>(s.dims.size()); ++d) {
      if (d > last_kept) {
        split.inner_dims.push_back(d);
        split.run *= s.dims[d];
      } else if (s.folded[d]) {
        split.outer_part.dims.push_back(d);
        split.outer *= s.dims[d];
      } else {
        split.kept_part.dims.push_back(d);
        split.kept *= s.dims[d];
      }
    }
    split.per_chunk = CeilDiv(split.outer, std::max<int64_t>(1, std::min(s.chunks, split.outer)));
    split.chunks = CeilDiv(split.outer, split.per_chunk);
    return split;
  }

  // The index parts of a position in a run: `o`, `p`, then `i` over the
  // inner dimensions, the position in the run.
  static std::vector<IndexPart> RunIndex(const RunSplit& split) {
    return {split.outer_part, split.kept_part, {split.inner_dims, "i"}};
  }

  // The vector loop over one run around `body`, with `sums`: one loop over
  // the whole run, however many dimensions it spans (a loop per dimension
  // reduced its lanes to one at the end of each row: an NCHW batch norm's
  // 112 x 112 runs spent more time there than in its loads).
  static Node RunLoop(const RunSplit& split, std::vector<SimdReduction> sums, Body body) {
    Loop loop = Loop::Simd("i", "0", absl::StrCat(split.run), std::move(sums));
    loop.body = std::move(body);
    return {std::move(loop)};
  }

  // Each task sums its runs one at a time into its partial. A sum of
  // squared deviations folding in this pass (Stage::one_pass) sums its
  // values beside it (or takes the sum of the same values this pass
  // makes), goes over the run again (in cache) for their deviations from
  // the run's mean, and merges the run into the chunk's running statistics
  // (seam_add_run).
  void RunFolding(size_t stage, const RunSplit& split) {
    const Stage& s = ir_.stages[stage];
    TaskLoop& loop = loops_.emplace_back(TaskLoop{
        s.phase, "task", split.chunks * split.kept, SplitFolded(s).folded * split.kept, {}});
    loop.body.push_back({Let{"int64_t",
                             {{"chunk", absl::StrCat("task / ", split.kept)},
                              {"p", absl::StrCat("task % ", split.kept)}}}});
    RunFoldingBody(stage, split, loop.body);
  }

  // The fold of chunk `chunk` at kept position `p` (both defined before),
  // its partials stored, and its riders' statistics.
  void RunFoldingBody(size_t stage, const RunSplit& split, Body& body) {
    const Stage& s = ir_.stages[stage];
    std::vector<size_t> riders;
    for (size_t k = 0; k < ir_.stages.size(); ++k) {
      const Stage& r = ir_.stages[k];
      if (r.one_pass && r.one_pass->host == static_cast<int>(stage)) riders.push_back(k);
    }
    body.push_back(Int("o0", absl::StrCat("chunk * ", split.per_chunk)));
    body.push_back(
        Int("o1", Expr::Min(absl::StrCat(split.outer), absl::StrCat("o0 + ", split.per_chunk))));
    PartPointers(s, split.kept, body);
    for (size_t k : riders)
      body.push_back({Statement{absl::StrCat("seam_moments moments", k, ";")}});
    Loop runs = Loop::Serial("o", "o0", "o1");
    std::vector<SimdReduction> sums = ZeroSums(s, "run", runs.body);
    const std::vector<IndexPart> index = RunIndex(split);
    std::vector<ComputeStep> steps;
    for (size_t j = 0; j < s.reductions.size(); ++j) {
      steps.emplace_back(
          Accumulate{static_cast<int>(j), Accumulation::kSum, absl::StrCat("run", j), ""});
    }
    steps.emplace_back(StoreRoots{s.roots, {}});
    Body innermost{{Compute::At(stage, index, "", std::move(steps))}};
    std::vector<std::string> values;  // each rider's sum of its run's values
    for (size_t k : riders) {
      auto same = std::find_if(s.reductions.begin(), s.reductions.end(), [&](auto* r) {
        return r->operand(0) == Value(k) && r->shape().dtype() == Value(k)->shape().dtype();
      });
      if (same != s.reductions.end()) {
        values.push_back(absl::StrCat("run", same - s.reductions.begin()));
        continue;
      }
      values.push_back(absl::StrCat("values", k));
      runs.body.push_back({Statement{absl::StrCat(ValueType(k), " ", values.back(), " = 0;")}});
      sums.push_back({"+", values.back()});
      innermost.push_back({Scope{
          {{Compute::At(k, index, "", {AccumulateDeviations{Value(k), "", values.back(), ""}})}}}});
    }
    runs.body.push_back(RunLoop(split, std::move(sums), std::move(innermost)));
    for (size_t j = 0; j < s.reductions.size(); ++j) {
      runs.body.push_back({Statement{absl::StrCat("part", j, "[p] = o == o0 ? run", j, " : ",
                                                  ReducerName(ir_, s.reductions[j]), "(part", j,
                                                  "[p], run", j, ");")}});
    }
    for (size_t j = 0; j < riders.size(); ++j)
      DeviationsPass(riders[j], values[j], split, runs.body);
    body.push_back({std::move(runs)});
    for (size_t k : riders) {
      const std::string partials = absl::StrCat("b", ir_.PartialsIndex(ir_.stages[k].roots[0]));
      body.push_back({Statement{absl::StrCat("if (o1 > o0) ", partials, "[chunk * ", split.kept,
                                             " + p] = moments", k, ".mean, ", partials, "[",
                                             split.chunks * split.kept, " + chunk * ", split.kept,
                                             " + p] = moments", k, ".m2;")}});
    }
  }

  // Rider `k`'s second pass over the run, in cache: the deviations from
  // the run's mean (`values`, its sum, over its length), summed and
  // squared, merged into the chunk's moments.
  void DeviationsPass(size_t k, const std::string& values, const RunSplit& split, Body& body) {
    const std::string type = ValueType(k), center = absl::StrCat("center", k),
                      sum = absl::StrCat("deviations", k), squares = absl::StrCat("squares", k);
    body.push_back({Statement{absl::StrCat("const ", type, " ", center, " = ", values, " / ", type,
                                           "(", split.run, ");")}});
    body.push_back({Statement{absl::StrCat(type, " ", sum, " = 0, ", squares, " = 0;")}});
    body.push_back(RunLoop(split, {{"+", sum}, {"+", squares}},
                           {{Compute::At(k, RunIndex(split), "",
                                         {AccumulateDeviations{Value(k), center, sum, squares}})}}));
    body.push_back({Statement{absl::StrCat("seam_add_run(moments", k, ", ", split.run, ", ", center,
                                           ", ", sum, ", ", squares, ");")}});
  }

  const Instruction* Value(size_t rider) const { return ir_.stages[rider].one_pass->value; }
  std::string ValueType(size_t rider) const { return ComputeType(Value(rider)->shape().dtype()); }

  // A folding phase's tasks: chunk `chunk` covers folded positions
  // [q0, q1) and has its partials (one per kept element) at part<j>.
  Body& FoldingChunks(const Stage& s, const FoldSplit& split) {
    const int64_t chunk = CeilDiv(split.folded, s.chunks);
    TaskLoop& loop =
        loops_.emplace_back(TaskLoop{s.phase, "chunk", s.chunks, split.folded * split.kept, {}});
    loop.body.push_back(Int("q0", absl::StrCat("chunk * ", chunk)));
    loop.body.push_back(
        Int("q1", Expr::Min(absl::StrCat(split.folded), absl::StrCat("q0 + ", chunk))));
    PartPointers(s, split.kept, loop.body);
    return loop.body;
  }

  // Chunks of the folded elements, kept elements innermost (a column
  // reduction's contiguous rows), kFoldedRowsAtOnce folded positions a
  // step and the rest one at a time.
  void ElementFolding(size_t stage, const FoldSplit& split) {
    FoldRows(stage, split, "0", absl::StrCat(split.kept), FoldingChunks(ir_.stages[stage], split));
  }

  // Folded positions [q0, q1) of kept elements [p0, p1) into the partials
  // at part<j>, kFoldedRowsAtOnce a step and the rest one at a time.
  void FoldRows(size_t stage, const FoldSplit& split, const std::string& p0, const std::string& p1,
                Body& body) {
    const std::string whole = absl::StrCat("q0 + (q1 - q0) / ", kFoldedRowsAtOnce, " * ",
                                           kFoldedRowsAtOnce);
    std::vector<std::string> rows;
    for (int64_t k = 0; k < kFoldedRowsAtOnce; ++k) {
      rows.push_back(k == 0 ? "q" : absl::StrCat("(q + ", k, ")"));
    }
    Loop steps = Loop::Serial("q", "q0", whole, absl::StrCat(kFoldedRowsAtOnce));
    steps.body.push_back(FoldingLanes(stage, split, rows, p0, p1));
    body.push_back({std::move(steps)});
    Loop rest = Loop::Serial("q", whole, "q1");
    rest.body.push_back(FoldingLanes(stage, split, {"q"}, p0, p1));
    body.push_back({std::move(rest)});
  }

  // The loop over kept elements [p0, p1) folding folded positions `rows`
  // (index expressions, in order, the first possibly the chunk's first)
  // into the partials, through locals: a partial is loaded and stored once
  // for all of them, in the order of one at a time.
  Node FoldingLanes(size_t stage, const FoldSplit& split, const std::vector<std::string>& rows,
                    const std::string& p0, const std::string& p1) {
    const Stage& s = ir_.stages[stage];
    const int64_t kept = split.kept;
    // All kept elements of several dims with a contiguous innermost one
    // loop over that one inside the others: values indexed by the outer
    // ones (a broadcast along rows) are then loaded once per inner run,
    // not gathered per element through a division of p.
    const int64_t inner = split.kept_dims.empty() ? 1 : split.kept_dims.back();
    const bool nested = kept > inner && !s.folded.back() && inner >= 8 && p0 == "0" &&
                        p1 == absl::StrCat(kept);
    Loop lanes = nested ? Loop::Simd("pi", "0", absl::StrCat(inner)) : Loop::Simd("p", p0, p1);
    if (nested) lanes.body.push_back(Int("p", absl::StrCat("po * ", inner, " + pi")));
    for (size_t j = 0; j < s.reductions.size(); ++j) {
      lanes.body.push_back({Statement{absl::StrCat(PartialType(*s.reductions[j]), " fold", j,
                                                   " = part", j, "[p];")}});
    }
    for (size_t k = 0; k < rows.size(); ++k) {
      // The steps in a vector of their final size (as in WholeFolding: gcc
      // 12 warns falsely of the vector's growth moving a StoreRoots).
      std::vector<ComputeStep> steps(s.reductions.size() + 1);
      for (size_t j = 0; j < s.reductions.size(); ++j) {
        steps[j] = Accumulate{static_cast<int>(j),
                              k == 0 ? Accumulation::kFirstOfChunk : Accumulation::kFromInit,
                              absl::StrCat("fold", j), "q == q0"};
      }
      steps.back() = StoreRoots{s.roots, {}};
      Compute compute = Compute::Scalar(stage, std::move(steps));
      if (nested) {
        IndexPart outer_kept{{}, "po"}, last_kept{{}, "pi", /*direct=*/true}, folded_part{{}, rows[k]};
        std::vector<int> kept_positions;
        for (int d = 0; d < static_cast<int>(s.dims.size()); ++d) {
          (s.folded[d] ? folded_part.dims : kept_positions).push_back(d);
        }
        last_kept.dims.push_back(kept_positions.back());
        kept_positions.pop_back();
        outer_kept.dims = kept_positions;
        compute.index = {outer_kept, last_kept, folded_part};
      } else {
        compute.index = FoldParts(s, rows[k], "p");
      }
      lanes.body.push_back({Scope{{{std::move(compute)}}}});
    }
    for (size_t j = 0; j < s.reductions.size(); ++j) {
      lanes.body.push_back({Statement{absl::StrCat("part", j, "[p] = fold", j, ";")}});
    }
    if (!nested) return {std::move(lanes)};
    Loop outer = Loop::Serial("po", "0", absl::StrCat(kept / inner));
    outer.body.push_back({std::move(lanes)});
    return {std::move(outer)};
  }

  // A reduction of everything split into chunks (one kept element, not a
  // contiguous run of sums; see PartialReduce): each chunk folds into
  // locals and writes its partial once. (Folded into the partial in
  // memory, the two chunks' adjacent partials shared a cache line between
  // threads and every element waited on a store: BERT's optimizer step ran
  // 2.35 ms on one thread and 4.3 on two.) Sums run vectorized.
  void WholeFolding(size_t stage, const FoldSplit& split) {
    const Stage& s = ir_.stages[stage];
    Body& body = FoldingChunks(s, split);
    const bool sums = SumsOnly(s);
    ZeroSums(s, "run", body);
    // The steps in a vector of their final size, assigned in place: gcc 12
    // warns falsely of the vector's growth moving a StoreRoots here.
    std::vector<ComputeStep> steps(s.reductions.size() + 1);
    for (size_t j = 0; j < s.reductions.size(); ++j) {
      steps[j] =
          sums ? Accumulate{static_cast<int>(j), Accumulation::kSum, absl::StrCat("block", j), ""}
               : Accumulate{static_cast<int>(j), Accumulation::kFirstOfChunk,
                            absl::StrCat("run", j), "q == q0"};
    }
    steps.back() = StoreRoots{s.roots, {}};
    Compute compute = Compute::At(stage, FoldParts(s, "q", "0"), "", std::move(steps));
    if (!sums) {
      Loop folded = Loop::Serial("q", "q0", "q1");
      folded.body.push_back({std::move(compute)});
      body.push_back({std::move(folded)});
    } else {
      // Sums add up blocks of kSummedBlock elements, each summed apart (a
      // float sum keeps its precision over a block, not over a million).
      Loop blocks = Loop::Serial("qb", "q0", "q1", absl::StrCat(kSummedBlock));
      blocks.body.push_back(Int("qe", Expr::Min("q1", absl::StrCat("qb + ", kSummedBlock))));
      Loop folded = Loop::Simd("q", "qb", "qe", ZeroSums(s, "block", blocks.body));
      folded.body.push_back({std::move(compute)});
      blocks.body.push_back({std::move(folded)});
      for (size_t j = 0; j < s.reductions.size(); ++j) {
        blocks.body.push_back({Statement{absl::StrCat("run", j, " += block", j, ";")}});
      }
      body.push_back({std::move(blocks)});
    }
    for (size_t j = 0; j < s.reductions.size(); ++j) {
      body.push_back({Statement{absl::StrCat("if (q1 > q0) part", j, "[0] = run", j, ";")}});
    }
  }

  KernelIr& ir_;
  const target::DeviceSpec& device_;
  std::vector<bool> barrier_;  // before each phase
  std::vector<TaskLoop> loops_;
  // Whether the phase being scheduled streams stores (it then fences them).
  bool staged_in_phase_ = false;
  // The rows a tile phase's passes run over: the task's, or its sub-tile's
  // (see SubTileRows).
  std::string rows_begin_ = "r0", rows_end_ = "r1";
  std::optional<ChannelStrips> channel_strips_;  // the schedule, if in channel strips
};

}  // namespace

absl::Status ScheduleForCpu(KernelIr& ir, const target::DeviceSpec& device) {
  return CpuScheduler(ir, device).Schedule();
}

}  // namespace seam::codegen
