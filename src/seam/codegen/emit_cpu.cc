// The CPU rendering of the kernel IR: one C++ function per kernel, called
// with its buffers and Seam's thread pool. A phase is one parallel loop over
// tasks (a tile of rows, or a chunk of folded elements) whose chunks the
// pool's threads claim; the loop's end is the grid barrier between phases,
// and consecutive phases that need none share one loop. A block is a tile
// of rows run by one thread; regional values live in that thread's tile
// buffer (sized rows_per_block rows, so it stays in L1/L2, carved from a
// per-thread arena); global ones in scratch buffers. Innermost loops run
// along rows with `omp simd`.
#include "seam/codegen/emit_cpu.h"

#include <algorithm>
#include <cctype>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "seam/codegen/c_types.h"
#include "seam/codegen/elemental.h"
#include "seam/codegen/prelude.h"
#include "seam/codegen/render_common.h"
#include "seam/codegen/simd_twins.h"
#include "seam/util/status_macros.h"

namespace seam::codegen {
namespace {

std::string Ind(int n) { return std::string(n, ' '); }

std::optional<Opcode> CombinerOf(const Instruction& reduce) {
  return AsBinaryReducer(**reduce.attrs().to_apply);
}

bool IsMax(const Instruction& reduce) { return CombinerOf(reduce) == Opcode::kMaximum; }

// How a row reduction's accumulator runs inside an `omp simd` loop.
enum class SimdAccumulation {
  kNone,       // a general reducer: a plain loop
  kDirect,     // a sum, or an integer max or min: an OpenMP reduction clause
  kOrderKeys,  // a float max or min: over order keys (seam_order_key), NaN apart
};

// A reducer qualifies when it is a plain sum, max or min of its two
// parameters.
SimdAccumulation AccumulationOf(const Instruction& reduce) {
  std::optional<Opcode> op = CombinerOf(reduce);
  if (!op || reduce.shape().dtype() == DType::kPred) return SimdAccumulation::kNone;
  switch (*op) {
    case Opcode::kAdd: return SimdAccumulation::kDirect;
    case Opcode::kMaximum:
    case Opcode::kMinimum:
      return IsFloatType(reduce.shape().dtype()) ? SimdAccumulation::kOrderKeys
                                                 : SimdAccumulation::kDirect;
    default: return SimdAccumulation::kNone;
  }
}

// The OpenMP reduction identifier of a kDirect reducer.
std::string DirectReduction(const Instruction& reduce) {
  switch (*CombinerOf(reduce)) {
    case Opcode::kMaximum: return "seam_max";
    case Opcode::kMinimum: return "seam_min";
    default: return "+";
  }
}

// Whether every reduction of `s` is a plain sum (an OpenMP `+` clause).
bool SumsOnly(const Stage& s) {
  return std::all_of(s.reductions.begin(), s.reductions.end(), [](const Instruction* r) {
    return AccumulationOf(*r) == SimdAccumulation::kDirect && DirectReduction(*r) == "+";
  });
}

// Elements a vectorized sum adds up before it adds the block to its
// running total (as the column reductions' partials of 4096 rows do).
constexpr int64_t kSummedBlock = 4096;

class CpuKernelEmitter {
 public:
  explicit CpuKernelEmitter(const KernelIr& ir) : ir_(ir), barrier_(BarrierBeforePhase(ir)) {}

  absl::StatusOr<std::string> Emit() {
    Line(0, absl::StrCat("extern \"C\" __attribute__((visibility(\"default\"))) void ", ir_.name,
                         "(void* const* seam_buffers, const seam_pool* seam_threads) {"));
    // Declared in each parallel loop's body, not captured: a pointer
    // reached through the closure loses __restrict, and with it the
    // loops' vectorization.
    for (size_t k = 0; k < ir_.buffers.size(); ++k) {
      const KernelBuffer& b = ir_.buffers[k];
      std::string type = StorageType(b.dtype);
      bool in = b.storage == Storage::kInput;
      buffer_declarations_.push_back(absl::StrCat(in ? "const " : "", type, "* __restrict b", k,
                                                  " = static_cast<", in ? "const " : "", type,
                                                  "*>(seam_buffers[", k, "]);"));
    }
    for (const Stage& s : ir_.stages) {
      for (const Instruction* r : s.reductions) {
        SEAM_ASSIGN_OR_RETURN(std::string lambda, ReducerLambda(*r, ReducerName(ir_, r)));
        text_ += lambda;
        // A reducer inlined beside a twin must not bring a twinned
        // function's inline body (and its selects) along.
        if (CanUseSimdTwins(absl::StrSplit(lambda, '\n'), {}, /*twinned=*/false)) {
          branch_free_reducers_.insert(ReducerName(ir_, r));
        }
      }
    }
    DeclareTileBuffers();
    DeclareStagingRows();
    for (size_t k = 0; k < ir_.stages.size();) {
      size_t end = k + 1;
      while (end < ir_.stages.size() && ir_.stages[end].phase == ir_.stages[k].phase) ++end;
      if (ir_.stages[k].kind == LoopKind::kPartialReduce) {
        SEAM_RETURN_IF_ERROR(EmitPartialReduce(ir_.stages[k]));
      } else {
        SEAM_RETURN_IF_ERROR(EmitTilePhase(k, end));
      }
      k = end;
    }
    EmitParallelLoops();
    Line(0, "}");
    return text_;
  }

 private:
  // One phase's loop over its tasks: the task index is `var`; `body` the
  // loop's body as written inside `for (var...) {`.
  struct TaskLoop {
    int phase = 0;
    std::string var;
    int64_t count = 0;
    int64_t elements = 0;  // what its tasks touch, together
    std::string body;
  };

  // A buffer of each thread's own, carved from its arena.
  struct ThreadBuffer {
    std::string type, name;
    int64_t count = 0;
  };

  void Line(int indent, const std::string& s) { absl::StrAppend(out_, Ind(indent), s, "\n"); }

  // Lines from here to EndTasks() are the body of a loop over `count`
  // tasks indexed by `var`, part of phase `phase`, touching `elements`.
  void BeginTasks(int phase, const std::string& var, int64_t count, int64_t elements) {
    loops_.push_back({phase, var, count, elements, ""});
    out_ = &loops_.back().body;
  }
  void EndTasks() { out_ = &text_; }

  // The phases' loops as pool loops: a loop after which the next phase
  // needs no barrier (BarrierBeforePhase) shares a pool loop with the next.
  void EmitParallelLoops() {
    for (size_t k = 0; k < loops_.size();) {
      size_t end = k + 1;
      auto barrier_after = [&](const TaskLoop& l) {
        return l.phase + 1 < ir_.phases && barrier_[l.phase + 1];
      };
      while (end < loops_.size() && !barrier_after(loops_[end - 1])) ++end;
      EmitParallelLoop(k, end);
      k = end;
    }
  }

  // Loops [begin, end) as one pool loop over their tasks, one after another
  // (on the calling thread alone when they are small: see
  // kMinElementsToSplit).
  void EmitParallelLoop(size_t begin, size_t end) {
    int64_t total = 0, elements = 0;
    for (size_t k = begin; k < end; ++k) total += loops_[k].count, elements += loops_[k].elements;
    Line(2, absl::StrCat(elements >= kMinElementsToSplit ? "seam_parallel(seam_threads, "
                                                         : "seam_serial(",
                         total, ", [&](int64_t seam_begin, int64_t seam_end, int) {"));
    for (const std::string& declaration : buffer_declarations_) Line(4, declaration);
    EmitThreadBuffers();
    Line(4, "for (int64_t seam_t = seam_begin; seam_t < seam_end; ++seam_t) {");
    int64_t offset = 0;
    for (size_t k = begin; k < end; ++k) {
      const TaskLoop& l = loops_[k];
      std::string body = l.body;
      if (end - begin > 1) {  // one branch per loop, its body indented once more
        Line(6, absl::StrCat(k == begin ? "" : "} else ", k + 1 < end ? absl::StrCat("if (seam_t < ", offset + l.count, ") ") : "", "{"));
        body = absl::StrReplaceAll(absl::StrCat("  ", body), {{"\n", "\n  "}});
        body.resize(body.size() - 2);
      }
      int indent = end - begin > 1 ? 8 : 6;
      Line(indent, absl::StrCat("const int64_t ", l.var, " = seam_t", offset ? absl::StrCat(" - ", offset) : "", ";"));
      absl::StrAppend(out_, body);
      offset += l.count;
    }
    if (end - begin > 1) Line(6, "}");
    Line(4, "}");
    Line(2, "});");
  }

  // Each thread's tile buffers and staging rows, carved from its arena.
  void EmitThreadBuffers() {
    if (thread_buffers_.empty()) return;
    std::vector<std::string> sizes;
    for (const ThreadBuffer& b : thread_buffers_) {
      sizes.push_back(absl::StrCat("seam_carved_bytes<", b.type, ">(", b.count, ")"));
    }
    Line(4, absl::StrCat("char* seam_at = seam_thread_arena(", absl::StrJoin(sizes, " + "), ");"));
    for (const ThreadBuffer& b : thread_buffers_) {
      Line(4, absl::StrCat(b.type, "* __restrict ", b.name, " = seam_carve<", b.type, ">(seam_at, ",
                           b.count, ");"));
    }
  }

  // `vectorized`: the loop is an `omp simd` loop.
  void EmitLoopBody(std::vector<std::string>& body, bool vectorized = true) {
    UseSimdTwins(body, vectorized, branch_free_reducers_);
    for (const std::string& line : body) Line(0, line);
  }

  // Outputs written past the caches: per thread, a piece of a row staged
  // in L1 and then streamed out (only where a stage writes them row by row).
  void DeclareStagingRows() {
    absl::flat_hash_set<int> declared;
    for (const Stage& s : ir_.stages) {
      for (const Instruction* v : s.roots) {
        int k = ir_.BufferIndex(v);
        if (!IsStaged(s, v) || !declared.insert(k).second) continue;
        thread_buffers_.push_back(
            {StorageType(v->shape().dtype()), absl::StrCat("stage_", k), StagePiece(s)});
      }
    }
  }

  // The elements of a row one task computes: a row, or its share when
  // the phase splits rows across blocks.
  int64_t StagedChunk(const Stage& s) const {
    return std::max<int64_t>(1, CeilDiv(s.RowLength(), PhaseBlocksPerRow(ir_, s.phase)));
  }

  // Rows are staged and streamed a piece at a time: 4096 elements (16 KB
  // of f32) stay in L1 between the write and the stream.
  int64_t StagePiece(const Stage& s) const { return std::min<int64_t>(4096, StagedChunk(s)); }

  // Staged when streamed (see KernelBuffer::streamed) and written
  // contiguously row by row.
  bool IsStaged(const Stage& s, const Instruction* v) const {
    auto storage = ir_.storage.find(v);
    return s.kind == LoopKind::kElementwise && storage != ir_.storage.end() &&
           storage->second == Storage::kOutput && ir_.buffers[ir_.BufferIndex(v)].streamed &&
           v->shape().dims() == s.dims;
  }

  // Per-thread tile buffers: rows_per_block rows of each regional value.
  void DeclareTileBuffers() {
    for (const Stage& s : ir_.stages) {
      for (const Instruction* v : s.roots) {
        if (!ir_.tile_stage.contains(v)) continue;
        int64_t per_row = TileElementsPerRow(ir_, v);
        thread_buffers_.push_back({TileType(v->shape().dtype()), TileName(ir_, v),
                                   std::max<int64_t>(1, s.mapping.rows_per_block * per_row)});
      }
    }
  }

  // Stores root `v` (computed as `value`) at linear index `linear`.
  void Store(ElementalEmitter& e, const Instruction* v, const std::string& linear,
             const std::string& value) {
    auto storage = ir_.storage.find(v);
    if (storage == ir_.storage.end() || storage->second == Storage::kInput) return;
    if (std::find(staged_.begin(), staged_.end(), v) != staged_.end()) {
      e.Emit(absl::StrCat("stage_", ir_.BufferIndex(v), "[c - s0] = ",
                          StoreExpr(v->shape().dtype(), e.Storable(value)), ";"));
    } else if (storage->second == Storage::kTile) {
      e.Emit(absl::StrCat(TileName(ir_, v), "[", linear, " - ", RenderedNames(ir_).tile_base(v), "] = ", value, ";"));
    } else {
      e.Emit(absl::StrCat("b", ir_.BufferIndex(v), "[", linear, "] = ",
                          StoreExpr(v->shape().dtype(), e.Storable(value)), ";"));
    }
  }

  // Elementwise roots other than the one iterated are computed at the same
  // linear position, in their own shape.
  absl::Status EmitElementwiseRoots(ElementalEmitter& e, const Stage& s, const Index& index,
                                    const std::string& linear) {
    return codegen::EmitElementwiseRoots(e, s, index, linear, Storer());
  }

  StoreRoot Storer() {
    return [this](ElementalEmitter& e, const Instruction* v, const std::string& at,
                  const std::string& value) { Store(e, v, at, value); };
  }

  absl::Status EmitTilePhase(size_t begin, size_t end) {
    const Stage& first = ir_.stages[begin];
    const auto [rows, rpb, bpr, tasks] = TileTasksOf(ir_, first);
    int64_t elements = 0;
    for (size_t k = begin; k < end; ++k) elements += ir_.stages[k].Rows() * ir_.stages[k].RowLength();
    BeginTasks(first.phase, "task", tasks, elements);
    Line(6, absl::StrCat("const int64_t r0 = (task / ", bpr, ") * ", rpb, ";"));
    Line(6, absl::StrCat("const int64_t r1 = std::min<int64_t>(", rows, ", r0 + ", rpb, ");"));
    Line(6, absl::StrCat("const int64_t part = task % ", bpr, ";"));
    Line(6, "(void)part;");
    bool streams = false;
    for (size_t k = begin; k < end; ++k) {
      const Stage& s = ir_.stages[k];
      if (s.kind == LoopKind::kRowReduce) {
        SEAM_RETURN_IF_ERROR(EmitRowReduce(s));
      } else {
        SEAM_RETURN_IF_ERROR(EmitElementwise(s, bpr));
        streams |= std::any_of(s.roots.begin(), s.roots.end(),
                               [&](const Instruction* v) { return IsStaged(s, v); });
      }
    }
    // Streamed stores are visible to other threads past the phase's barrier.
    if (streams) Line(6, "seam_stream_fence();");
    EndTasks();
    return absl::OkStatus();
  }

  absl::Status EmitElementwise(const Stage& s, int64_t bpr) {
    int64_t length = s.RowLength();
    int64_t chunk = CeilDiv(length, bpr);
    for (const Instruction* v : s.roots) {
      if (IsStaged(s, v)) staged_.push_back(v);
    }
    // With staged outputs the task's share of a row goes piece by piece.
    const bool blocked = !staged_.empty();
    int indent = blocked ? 10 : 8;
    Line(6, "for (int64_t r = r0; r < r1; ++r) {");
    Line(8, absl::StrCat("const int64_t c0 = part * ", chunk, ";"));
    Line(8, absl::StrCat("const int64_t c1 = std::min<int64_t>(", length, ", c0 + ", chunk, ");"));
    if (!blocked) {
      Line(8, "#pragma omp simd");
      Line(8, "for (int64_t c = c0; c < c1; ++c) {");
    } else {
      int64_t piece = StagePiece(s);
      Line(8, absl::StrCat("for (int64_t s0 = c0; s0 < c1; s0 += ", piece, ") {"));
      Line(10, absl::StrCat("const int64_t s1 = std::min<int64_t>(c1, s0 + ", piece, ");"));
      Line(10, "#pragma omp simd");
      Line(10, "for (int64_t c = s0; c < s1; ++c) {");
    }
    std::vector<std::string> body;
    ElementalEmitter e(ir_, RenderedNames(ir_), Computed(s), &body, indent + 2);
    Index index = RowIndex(e, s, "r", "c");
    SEAM_RETURN_IF_ERROR(EmitElementwiseRoots(e, s, index, absl::StrCat("r * ", length, " + c")));
    EmitLoopBody(body);
    Line(indent, "}");
    for (const Instruction* v : staged_) {
      int k = ir_.BufferIndex(v);
      Line(10, absl::StrCat("seam_stream_store(b", k, " + r * ", length, " + s0, stage_", k,
                            ", (s1 - s0) * sizeof(stage_", k, "[0]));"));
    }
    if (blocked) Line(8, "}");
    staged_.clear();
    Line(6, "}");
    return absl::OkStatus();
  }

  absl::Status EmitRowReduce(const Stage& s) {
    int64_t length = s.RowLength();
    Line(6, "for (int64_t r = r0; r < r1; ++r) {");
    std::vector<std::string> row_scope;
    ElementalEmitter outer(ir_, RenderedNames(ir_), Computed(s), &row_scope, 8);
    std::vector<std::string> accumulators, clauses;
    // One general reducer makes the whole loop scalar.
    bool vectorizable = std::all_of(s.reductions.begin(), s.reductions.end(), [](auto* r) {
      return AccumulationOf(*r) != SimdAccumulation::kNone;
    });
    auto keyed = [&](const Instruction* r) {
      return vectorizable && AccumulationOf(*r) == SimdAccumulation::kOrderKeys;
    };
    for (const Instruction* r : s.reductions) {
      SEAM_ASSIGN_OR_RETURN(std::string init, outer.Value(r->operand(1), {}));
      std::string j = absl::StrCat(accumulators.size());
      std::string acc = "acc" + j;
      outer.Emit(absl::StrCat(ComputeType(r->shape().dtype()), " ", acc, " = ", init, ";"));
      accumulators.push_back(acc);
      if (keyed(r)) {
        outer.Emit(absl::StrCat("auto key", j, " = seam_order_key(", acc, ");"));
        outer.Emit(absl::StrCat("int nan", j, " = ", acc, " != ", acc, ";"));
        clauses.push_back(absl::StrCat(" reduction(", IsMax(*r) ? "max" : "min", ":key", j,
                                       ") reduction(|:nan", j, ")"));
      } else if (vectorizable) {
        clauses.push_back(absl::StrCat(" reduction(", DirectReduction(*r), ":", acc, ")"));
      }
    }
    for (const std::string& line : row_scope) Line(0, line);
    if (vectorizable) Line(8, absl::StrCat("#pragma omp simd", absl::StrJoin(clauses, "")));
    Line(8, absl::StrCat("for (int64_t c = 0; c < ", length, "; ++c) {"));
    std::vector<std::string> body;
    ElementalEmitter e(ir_, RenderedNames(ir_), Computed(s), &body, 10);
    Index index = RowIndex(e, s, "r", "c");
    for (size_t j = 0; j < s.reductions.size(); ++j) {
      const Instruction* r = s.reductions[j];
      SEAM_ASSIGN_OR_RETURN(std::string x, e.Value(r->operand(0), index));
      if (keyed(r)) {
        std::string key = absl::StrCat("key", j), in = absl::StrCat("in", j);
        e.Emit(absl::StrCat("const ", ComputeType(r->shape().dtype()), " ", in, " = ", x, ";"));
        e.Emit(absl::StrCat("const auto new_", key, " = seam_order_key(", in, ");"));
        e.Emit(absl::StrCat(key, " = new_", key, IsMax(*r) ? " > " : " < ", key, " ? new_", key,
                            " : ", key, ";"));
        e.Emit(absl::StrCat("nan", j, " |= ", in, " != ", in, ";"));
      } else {
        e.Emit(absl::StrCat(accumulators[j], " = ", ReducerName(ir_, r), "(", accumulators[j], ", ", x,
                            ");"));
      }
    }
    SEAM_RETURN_IF_ERROR(EmitElementwiseRoots(e, s, index, absl::StrCat("r * ", length, " + c")));
    EmitLoopBody(body, vectorizable);
    Line(8, "}");
    for (size_t j = 0; j < s.reductions.size(); ++j) {
      const Instruction* r = s.reductions[j];
      if (keyed(r)) {
        Line(8, absl::StrCat(accumulators[j], " = nan", j, " ? std::numeric_limits<",
                             ComputeType(r->shape().dtype()), ">::quiet_NaN() : seam_from_order_key(key",
                             j, ");"));
      }
      std::vector<std::string> store;
      ElementalEmitter st(ir_, RenderedNames(ir_), {}, &store, 8);
      Store(st, r, "r", HalfResult(ir_, r, accumulators[j]));
      for (const std::string& line : store) Line(0, line);
    }
    Line(6, "}");
    return absl::OkStatus();
  }

  // Folding phase, then combining phase (see LoopKind::kPartialReduce).
  absl::Status EmitPartialReduce(const Stage& s) {
    const FoldSplit split = SplitFolded(s);
    const int64_t folded = split.folded, kept = split.kept;
    std::vector<std::string> parts;
    for (size_t j = 0; j < s.reductions.size(); ++j) parts.push_back(absl::StrCat("part", j));
    // What the combining phase walks: units of folded work and how many
    // fall in a chunk.
    int64_t units = folded, per_chunk = CeilDiv(folded, s.chunks);
    if (FoldsContiguousRuns(s)) {
      SEAM_RETURN_IF_ERROR(EmitRunFolding(s, parts, &units, &per_chunk));
    } else if (kept == 1) {
      SEAM_RETURN_IF_ERROR(EmitWholeFolding(s, split, parts));
    } else {
      SEAM_RETURN_IF_ERROR(EmitElementFolding(s, split, parts));
    }
    // Combine: the reduce's init, then each non-empty chunk, in order.
    BeginTasks(s.phase + 1, "p", kept, kept * std::min(units, s.chunks));
    std::vector<std::string> combine;
    ElementalEmitter c(ir_, RenderedNames(ir_), Computed(s), &combine, 6);
    SEAM_RETURN_IF_ERROR(EmitPartialCombine(ir_, s, units, per_chunk, kept, c, Storer()));
    for (const std::string& line : combine) Line(0, line);
    EndTasks();
    return absl::OkStatus();
  }

  // The partial pointers of chunk `chunk` (one per reduction).
  void EmitPartPointers(const Stage& s, const std::vector<std::string>& parts, int64_t kept,
                        int indent) {
    for (size_t j = 0; j < s.reductions.size(); ++j) {
      const Instruction* r = s.reductions[j];
      DType t = IsHalfType(r->shape().dtype()) ? DType::kF32 : r->shape().dtype();
      Line(indent, absl::StrCat(StorageType(t), "* ", parts[j], " = b", ir_.PartialsIndex(r),
                                " + chunk * ", kept, ";"));
    }
  }

  // Whether the folded dimensions include the innermost, behind every kept
  // one (an NCHW batch-norm statistic: kept C, folded N, H, W), and every
  // reducer is a sum: then each (outer, kept) position folds a contiguous
  // run with a vector sum, instead of striding across kept elements.
  bool FoldsContiguousRuns(const Stage& s) const {
    bool any_kept = std::find(s.folded.begin(), s.folded.end(), false) != s.folded.end();
    return any_kept && !s.folded.empty() && s.folded.back() && SumsOnly(s);
  }

  // Folded dims split at the last kept one: `outer` before it, the
  // contiguous `inner` run after it. Tasks are (chunk of outer, kept
  // position) pairs; each sums its runs one at a time into its partial.
  absl::Status EmitRunFolding(const Stage& s, const std::vector<std::string>& parts,
                              int64_t* units, int64_t* per_chunk) {
    size_t last_kept = 0;
    for (size_t d = 0; d < s.dims.size(); ++d) {
      if (!s.folded[d]) last_kept = d;
    }
    std::vector<int64_t> outer_dims, kept_dims, inner_dims;
    for (size_t d = 0; d < s.dims.size(); ++d) {
      if (d > last_kept) {
        inner_dims.push_back(s.dims[d]);
      } else {
        (s.folded[d] ? outer_dims : kept_dims).push_back(s.dims[d]);
      }
    }
    int64_t outer = 1, kept = 1;
    for (int64_t d : outer_dims) outer *= d;
    for (int64_t d : kept_dims) kept *= d;
    int64_t chunks = std::max<int64_t>(1, std::min(s.chunks, outer));
    *units = outer;
    *per_chunk = CeilDiv(outer, chunks);
    BeginTasks(s.phase, "task", chunks * kept, SplitFolded(s).folded * kept);
    Line(6, absl::StrCat("const int64_t chunk = task / ", kept, ", p = task % ", kept, ";"));
    Line(6, absl::StrCat("const int64_t o0 = chunk * ", *per_chunk, ";"));
    Line(6, absl::StrCat("const int64_t o1 = std::min<int64_t>(", outer, ", o0 + ", *per_chunk,
                         ");"));
    EmitPartPointers(s, parts, kept, 6);
    Line(6, "for (int64_t o = o0; o < o1; ++o) {");
    std::vector<std::string> clauses;
    for (size_t j = 0; j < s.reductions.size(); ++j) {
      Line(8, absl::StrCat(ComputeType(s.reductions[j]->shape().dtype()), " run", j, " = 0;"));
      clauses.push_back(absl::StrCat(" reduction(+:run", j, ")"));
    }
    // One loop per inner dimension (no division to split a linear index),
    // the innermost vectorized.
    Index inner_index;
    int indent = 8;
    for (size_t k = 0; k < inner_dims.size(); ++k) {
      std::string i = absl::StrCat("i", k);
      if (k + 1 == inner_dims.size()) {
        Line(indent, absl::StrCat("#pragma omp simd", absl::StrJoin(clauses, "")));
      }
      Line(indent, absl::StrCat("for (int64_t ", i, " = 0; ", i, " < ", inner_dims[k], "; ++", i,
                                ") {"));
      inner_index.push_back(i);
      indent += 2;
    }
    std::vector<std::string> body;
    ElementalEmitter e(ir_, RenderedNames(ir_), Computed(s), &body, indent);
    Index outer_index = e.Delinearize(outer_dims, "o");
    Index kept_index = e.Delinearize(kept_dims, "p");
    Index index;
    for (size_t d = 0, o = 0, k = 0, i = 0; d < s.dims.size(); ++d) {
      if (d > last_kept) {
        index.push_back(inner_index[i++]);
      } else {
        index.push_back(s.folded[d] ? outer_index[o++] : kept_index[k++]);
      }
    }
    for (size_t j = 0; j < s.reductions.size(); ++j) {
      SEAM_ASSIGN_OR_RETURN(std::string x, e.Value(s.reductions[j]->operand(0), index));
      e.Emit(absl::StrCat("run", j, " += ", x, ";"));
    }
    SEAM_RETURN_IF_ERROR(
        EmitElementwiseRoots(e, s, index, ElementalEmitter::Linear(s.dims, index)));
    EmitLoopBody(body);
    for (size_t k = 0; k < inner_dims.size(); ++k) {
      indent -= 2;
      Line(indent, "}");
    }
    for (size_t j = 0; j < s.reductions.size(); ++j) {
      Line(8, absl::StrCat(parts[j], "[p] = o == o0 ? run", j, " : ", ReducerName(ir_, s.reductions[j]),
                           "(", parts[j], "[p], run", j, ");"));
    }
    Line(6, "}");
    EndTasks();
    return absl::OkStatus();
  }

  // A folding phase's tasks: chunk `chunk` covers folded positions
  // [q0, q1) and has its partials (one per kept element) at part<j>.
  void BeginFoldingChunks(const Stage& s, const FoldSplit& split,
                          const std::vector<std::string>& parts) {
    const int64_t chunk = CeilDiv(split.folded, s.chunks);
    BeginTasks(s.phase, "chunk", s.chunks, split.folded * split.kept);
    Line(6, absl::StrCat("const int64_t q0 = chunk * ", chunk, ";"));
    Line(6, absl::StrCat("const int64_t q1 = std::min<int64_t>(", split.folded, ", q0 + ", chunk,
                         ");"));
    EmitPartPointers(s, parts, split.kept, 6);
  }

  // Chunks of the folded elements, kept elements innermost (a column
  // reduction's contiguous rows).
  absl::Status EmitElementFolding(const Stage& s, const FoldSplit& split,
                                  const std::vector<std::string>& parts) {
    const int64_t kept = split.kept;
    BeginFoldingChunks(s, split, parts);
    Line(6, "for (int64_t q = q0; q < q1; ++q) {");
    // Kept elements of several dims with a contiguous innermost one loop
    // over that one inside the others: values indexed by the outer ones
    // (a broadcast along rows) are then loaded once per inner run, not
    // gathered per element through a division of p.
    const int64_t inner = split.kept_dims.empty() ? 1 : split.kept_dims.back();
    const bool nested = kept > inner && !s.folded.back() && inner >= 8;
    int indent = 8;
    if (nested) {
      Line(8, absl::StrCat("for (int64_t po = 0; po < ", kept / inner, "; ++po) {"));
      indent = 10;
    }
    const std::string lane = nested ? "pi" : "p";  // the vectorized loop's variable
    Line(indent, "#pragma omp simd");
    Line(indent, absl::StrCat("for (int64_t ", lane, " = 0; ", lane, " < ", nested ? inner : kept,
                              "; ++", lane, ") {"));
    std::vector<std::string> body;
    ElementalEmitter e(ir_, RenderedNames(ir_), Computed(s), &body, indent + 2);
    Index index;
    if (nested) {
      e.Emit(absl::StrCat("const int64_t p = po * ", inner, " + pi;"));
      std::vector<int64_t> outer_kept(split.kept_dims.begin(), split.kept_dims.end() - 1);
      Index kept_index = e.Delinearize(outer_kept, "po");
      kept_index.push_back("pi");
      index = MergeFoldIndex(s, e.Delinearize(split.folded_dims, "q"), kept_index);
    } else {
      index = FoldIndex(e, s, split, "q", "p");
    }
    for (size_t j = 0; j < s.reductions.size(); ++j) {
      const Instruction* r = s.reductions[j];
      SEAM_ASSIGN_OR_RETURN(std::string x, e.Value(r->operand(0), index));
      e.Emit(absl::StrCat(parts[j], "[p] = q == q0 ? ", x, " : ", ReducerName(ir_, r), "(", parts[j],
                          "[p], ", x, ");"));
    }
    SEAM_RETURN_IF_ERROR(
        EmitElementwiseRoots(e, s, index, ElementalEmitter::Linear(s.dims, index)));
    EmitLoopBody(body);
    if (nested) Line(10, "}");
    Line(8, "}");
    Line(6, "}");
    EndTasks();
    return absl::OkStatus();
  }

  // A reduction of everything split into chunks (one kept element, not a
  // contiguous run of sums; see EmitPartialReduce): each
  // chunk folds into locals and writes its partial once. (Folded into the
  // partial in memory, the two chunks' adjacent partials shared a cache
  // line between threads and every element waited on a store: BERT's
  // optimizer step ran 2.35 ms on one thread and 4.3 on two.) Sums run
  // vectorized.
  absl::Status EmitWholeFolding(const Stage& s, const FoldSplit& split,
                                const std::vector<std::string>& parts) {
    BeginFoldingChunks(s, split, parts);
    const bool sums = SumsOnly(s);
    for (size_t j = 0; j < s.reductions.size(); ++j) {
      Line(6, absl::StrCat(ComputeType(s.reductions[j]->shape().dtype()), " run", j, " = 0;"));
    }
    // Sums add up blocks of kSummedBlock elements, each summed apart (a
    // float sum keeps its precision over a block, not over a million).
    int indent = 6;
    std::string from = "q0", to = "q1";
    if (sums) {
      Line(6, absl::StrCat("for (int64_t qb = q0; qb < q1; qb += ", kSummedBlock, ") {"));
      Line(8, absl::StrCat("const int64_t qe = std::min<int64_t>(q1, qb + ", kSummedBlock, ");"));
      std::vector<std::string> clauses;
      for (size_t j = 0; j < s.reductions.size(); ++j) {
        Line(8, absl::StrCat(ComputeType(s.reductions[j]->shape().dtype()), " block", j, " = 0;"));
        clauses.push_back(absl::StrCat(" reduction(+:block", j, ")"));
      }
      Line(8, absl::StrCat("#pragma omp simd", absl::StrJoin(clauses, "")));
      indent = 8;
      from = "qb";
      to = "qe";
    }
    Line(indent, absl::StrCat("for (int64_t q = ", from, "; q < ", to, "; ++q) {"));
    std::vector<std::string> body;
    ElementalEmitter e(ir_, RenderedNames(ir_), Computed(s), &body, indent + 2);
    Index index = FoldIndex(e, s, split, "q", "0");
    for (size_t j = 0; j < s.reductions.size(); ++j) {
      const Instruction* r = s.reductions[j];
      SEAM_ASSIGN_OR_RETURN(std::string x, e.Value(r->operand(0), index));
      e.Emit(sums ? absl::StrCat("block", j, " += ", x, ";")
                  : absl::StrCat("run", j, " = q == q0 ? ", x, " : ", ReducerName(ir_, r), "(run",
                                 j, ", ", x, ");"));
    }
    SEAM_RETURN_IF_ERROR(
        EmitElementwiseRoots(e, s, index, ElementalEmitter::Linear(s.dims, index)));
    EmitLoopBody(body, sums);
    Line(indent, "}");
    if (sums) {
      for (size_t j = 0; j < s.reductions.size(); ++j) {
        Line(8, absl::StrCat("run", j, " += block", j, ";"));
      }
      Line(6, "}");
    }
    for (size_t j = 0; j < s.reductions.size(); ++j) {
      Line(6, absl::StrCat("if (q1 > q0) ", parts[j], "[0] = run", j, ";"));
    }
    EndTasks();
    return absl::OkStatus();
  }

  const KernelIr& ir_;
  std::vector<bool> barrier_;  // before each phase
  std::string text_;
  std::string* out_ = &text_;  // where Line() writes
  std::vector<TaskLoop> loops_;
  std::vector<ThreadBuffer> thread_buffers_;
  std::vector<std::string> buffer_declarations_;
  std::vector<const Instruction*> staged_;  // staged by the stage being emitted, in order
  absl::flat_hash_set<std::string> branch_free_reducers_;
};

}  // namespace

absl::StatusOr<std::string> EmitCpuKernel(const KernelIr& ir) { return CpuKernelEmitter(ir).Emit(); }

std::string CpuSourceFile(const std::vector<std::string>& kernels) {
  return absl::StrCat(CpuPrelude(), "\n", absl::StrJoin(kernels, "\n"));
}

}  // namespace seam::codegen
