// Rendering on a GPU. A block of `threads` threads runs tasks: in a tile
// phase a task is `rows_per_block` rows (or a row's share when rows are
// split); the block's threads are `group` rows at a time, `lanes` threads
// per row, walking a row with stride `lanes` (coalesced). Row reductions
// combine lanes with warp shuffles (butterflies, so every lane ends with
// the row's value) and, past one warp, warp results through shared memory
// in warp order: deterministic, no atomics. Partial reductions fold one
// (chunk, kept element) pair per thread; after a grid barrier each thread
// combines one kept element's chunks in order.
#include "seam/codegen/emit_cuda.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "seam/codegen/c_types.h"
#include "seam/codegen/elemental.h"
#include "seam/codegen/prelude.h"
#include "seam/codegen/render_common.h"
#include "seam/util/status_macros.h"

namespace seam::codegen {
namespace {

std::string Ind(int n) { return std::string(n, ' '); }

// Bytes of one element of a tile buffer (TileType).
int64_t TileElementBytes(DType t) {
  if (t == DType::kPred) return 1;
  return IsHalfType(t) ? 4 : DTypeByteSize(t);
}

constexpr int64_t kWarp = 32;

class CudaKernelEmitter {
 public:
  CudaKernelEmitter(const KernelIr& ir, const target::DeviceSpec& device)
      : ir_(ir), device_(device) {}

  absl::StatusOr<CudaKernel> Emit() {
    kernel_.name = ir_.name;
    kernel_.threads = ir_.block_threads;
    kernel_.parameters = static_cast<int64_t>(ir_.buffers.size());
    std::vector<bool> barrier = BarrierBeforePhase(ir_);
    kernel_.grid_barriers = std::find(barrier.begin(), barrier.end(), true) != barrier.end();
    std::vector<std::string> params, aligned;
    for (size_t k = 0; k < ir_.buffers.size(); ++k) {
      const KernelBuffer& b = ir_.buffers[k];
      bool in = b.storage == Storage::kInput;
      std::string element = absl::StrCat(in ? "const " : "", StorageType(b.dtype));
      params.push_back(absl::StrCat(element, "* __restrict__ b", k, "_"));
      aligned.push_back(absl::StrCat("const seam_global<", element, "> b", k,
                                     " = seam_assume_aligned(b", k, "_);"));
    }
    Line(0, absl::StrCat("extern \"C\" __global__ void __launch_bounds__(", kernel_.threads, ") ",
                         ir_.name, "(", absl::StrJoin(params, ", "), ") {"));
    // Buffers start 16-byte aligned (CudaKernel): with rows a whole number
    // of vectors, a thread's consecutive elements load as one 128-bit access.
    for (const std::string& line : aligned) Line(2, line);
    for (const Stage& s : ir_.stages) {
      for (const Instruction* r : s.reductions) {
        SEAM_ASSIGN_OR_RETURN(std::string lambda, ReducerLambda(*r, ReducerName(ir_, r)));
        text_ += lambda;
      }
    }
    CarveTiles();
    const size_t shared_at = text_.size();
    if (kernel_.grid_barriers) Line(2, "cooperative_groups::grid_group seam_grid = cooperative_groups::this_grid();");
    for (size_t k = 0; k < ir_.stages.size();) {
      size_t end = k + 1;
      while (end < ir_.stages.size() && ir_.stages[end].phase == ir_.stages[k].phase) ++end;
      if (barrier[ir_.stages[k].phase]) Line(2, "seam_grid.sync();");
      if (ir_.stages[k].kind == LoopKind::kPartialReduce) {
        SEAM_RETURN_IF_ERROR(EmitPartialReduce(ir_.stages[k], k));
      } else {
        SEAM_RETURN_IF_ERROR(EmitTilePhase(k, end));
      }
      k = end;
    }
    Line(0, "}");
    SEAM_RETURN_IF_ERROR(CheckSharedFits());
    text_.insert(shared_at, shared_);
    kernel_.source = std::move(text_);
    return kernel_;
  }

 private:
  void Line(int indent, const std::string& s) { absl::StrAppend(&text_, Ind(indent), s, "\n"); }
  void Lines(const std::vector<std::string>& lines) {
    for (const std::string& line : lines) Line(0, line);
  }

  // Tile buffers: the stages' regional values.
  void CarveTiles() {
    for (const Stage& s : ir_.stages) {
      for (const Instruction* v : s.roots) {
        if (!ir_.tile_stage.contains(v)) continue;
        DType t = v->shape().dtype();
        int64_t elements = std::max<int64_t>(1, s.mapping.rows_per_block * TileElementsPerRow(ir_, v));
        CarveShared(TileType(t), TileName(ir_, v), elements, TileElementBytes(t));
      }
    }
  }

  // The block's shared arrays are carved out of its dynamic shared memory
  // at 16-byte boundaries, declared at the top of the kernel (`shared_`).
  void CarveShared(const std::string& type, const std::string& name, int64_t elements,
                   int64_t element_bytes) {
    absl::StrAppend(&shared_, Ind(2), "const seam_shared<", type, "> ", name,
                    " = seam_shared_array<", type, ">(", kernel_.shared_bytes, ", ", elements,
                    ");\n");
    kernel_.shared_bytes += CeilDiv(elements * element_bytes, 16) * 16;
  }

  absl::Status CheckSharedFits() const {
    if (device_.onchip_bytes_per_block > 0 && kernel_.shared_bytes > device_.onchip_bytes_per_block) {
      return absl::UnimplementedError(absl::StrCat(
          "shared arrays need ", kernel_.shared_bytes, " bytes of shared memory, a block of ",
          device_.name, " has ", device_.onchip_bytes_per_block));
    }
    return absl::OkStatus();
  }

  static std::string WarpsName(size_t stage, size_t reduction) {
    return absl::StrCat("warps_", stage, "_", reduction);
  }

  // Stores root `v` (computed as `value`) at linear index `linear`.
  void Store(ElementalEmitter& e, const Instruction* v, const std::string& linear,
             const std::string& value) {
    auto storage = ir_.storage.find(v);
    if (storage == ir_.storage.end() || storage->second == Storage::kInput) return;
    if (storage->second == Storage::kTile) {
      e.Emit(absl::StrCat(TileName(ir_, v), "[", linear, " - ", RenderedNames(ir_).tile_base(v),
                          "] = ", value, ";"));
    } else {
      e.Emit(absl::StrCat("b", ir_.BufferIndex(v), "[", linear, "] = ",
                          StoreExpr(v->shape().dtype(), e.Storable(value)), ";"));
    }
  }

  StoreRoot Storer() {
    return [this](ElementalEmitter& e, const Instruction* v, const std::string& at,
                  const std::string& value) { Store(e, v, at, value); };
  }

  void NoteBlocks(int64_t blocks) { kernel_.max_blocks = std::max(kernel_.max_blocks, blocks); }

  absl::Status EmitTilePhase(size_t begin, size_t end) {
    const Stage& first = ir_.stages[begin];
    const auto [rows, rpb, bpr, tasks] = TileTasksOf(ir_, first);
    group_ = first.layout.group;
    lanes_ = first.layout.lanes;
    NoteBlocks(tasks);
    Line(2, "{");
    Line(4, absl::StrCat("const int64_t lr = threadIdx.x / ", lanes_, ", lane = threadIdx.x % ",
                         lanes_, ";"));
    Line(4, absl::StrCat("for (int64_t task = blockIdx.x; task < ", tasks, "; task += gridDim.x) {"));
    Line(6, absl::StrCat("const int64_t r0 = (task / ", bpr, ") * ", rpb, ";"));
    Line(6, absl::StrCat("const int64_t r1 = seam_imin(", rows, ", r0 + ", rpb, ");"));
    Line(6, absl::StrCat("const int64_t part = task % ", bpr, ";"));
    Line(6, "(void)part;");
    for (size_t k = begin; k < end; ++k) {
      const Stage& s = ir_.stages[k];
      if (s.kind == LoopKind::kRowReduce) {
        SEAM_RETURN_IF_ERROR(EmitRowReduce(s, k, rpb));
      } else {
        SEAM_RETURN_IF_ERROR(EmitElementwise(s, rpb, bpr));
      }
      // Regional values are read by other threads of the block, and the
      // next task overwrites them.
      Line(6, "__syncthreads();");
    }
    Line(4, "}");
    Line(2, "}");
    return absl::OkStatus();
  }

  // Opens the loop over a thread's elements of [`begin`, `end`) of a row
  // (c, `vector` consecutive ones per step, unrolled); returns the body's
  // indent. CloseRowLoop closes it.
  int OpenRowLoop(int indent, const std::string& begin, const std::string& end, int64_t vector) {
    if (vector == 1) {
      Line(indent, absl::StrCat("for (int64_t c = ", begin, " + lane; c < ", end, "; c += ",
                                lanes_, ") {"));
      return indent + 2;
    }
    Line(indent, absl::StrCat("for (int64_t cv = ", begin, " + lane * ", vector, "; cv < ", end,
                              "; cv += ", lanes_ * vector, ") {"));
    Line(indent + 2, "#pragma unroll");
    Line(indent + 2, absl::StrCat("for (int64_t j = 0; j < ", vector, "; ++j) {"));
    Line(indent + 4, "const int64_t c = cv + j;");
    return indent + 4;
  }
  void CloseRowLoop(int indent, int64_t vector) {
    if (vector > 1) Line(indent + 2, "}");
    Line(indent, "}");
  }

  absl::Status EmitElementwise(const Stage& s, int64_t rpb, int64_t bpr) {
    for (const RootLoop& loop : s.layout.loops) {
      Stage part = s;
      part.roots = loop.roots;
      SEAM_RETURN_IF_ERROR(EmitElementwiseLoop(part, rpb, bpr, loop.vector));
    }
    return absl::OkStatus();
  }

  absl::Status EmitElementwiseLoop(const Stage& s, int64_t rpb, int64_t bpr, int64_t vector) {
    int64_t length = s.RowLength();
    int64_t chunk = CeilDiv(CeilDiv(length, bpr), vector) * vector;
    Line(6, absl::StrCat("for (int64_t rb = lr; rb < ", rpb, "; rb += ", group_, ") {"));
    Line(8, "const int64_t r = r0 + rb;");
    Line(8, "if (r >= r1) break;");
    Line(8, absl::StrCat("const int64_t c1 = seam_imin(", length, ", (part + 1) * ", chunk, ");"));
    int indent = OpenRowLoop(8, absl::StrCat("part * ", chunk), "c1", vector);
    std::vector<std::string> body;
    ElementalEmitter e(ir_, RenderedNames(ir_), Computed(s), &body, indent);
    Index index = RowIndex(e, s, "r", "c");
    SEAM_RETURN_IF_ERROR(
        EmitElementwiseRoots(e, s, index, absl::StrCat("r * ", length, " + c"), Storer()));
    Lines(body);
    CloseRowLoop(8, vector);
    Line(6, "}");
    return absl::OkStatus();
  }

  // Declares each reduction's per-thread accumulator and whether it holds
  // a value yet (see seam_merge).
  void DeclareAccumulators(const Stage& s, int indent) {
    for (size_t j = 0; j < s.reductions.size(); ++j) {
      Line(indent, absl::StrCat(ComputeType(s.reductions[j]->shape().dtype()), " acc", j,
                                "{};"));
      Line(indent, absl::StrCat("bool has", j, " = false;"));
    }
  }

  // Folds element `index` into the accumulators.
  absl::Status Accumulate(ElementalEmitter& e, const Stage& s, const Index& index) {
    for (size_t j = 0; j < s.reductions.size(); ++j) {
      const Instruction* r = s.reductions[j];
      SEAM_ASSIGN_OR_RETURN(std::string x, e.Value(r->operand(0), index));
      e.Emit(absl::StrCat("acc", j, " = has", j, " ? ", ReducerName(ir_, r), "(acc", j, ", ", x,
                          ") : ", x, ";"));
      e.Emit(absl::StrCat("has", j, " = true;"));
    }
    return absl::OkStatus();
  }

  // Every thread of the block runs the same number of row rounds, so the
  // barriers of a cross-warp combine are reached by all.
  absl::Status EmitRowReduce(const Stage& s, size_t stage, int64_t rpb) {
    int64_t length = s.RowLength();
    Line(6, absl::StrCat("for (int64_t rb0 = 0; rb0 < ", rpb, "; rb0 += ", group_, ") {"));
    Line(8, "const int64_t r = r0 + rb0 + lr;");
    Line(8, absl::StrCat("const bool live = rb0 + lr < ", rpb, " && r < r1;"));
    DeclareAccumulators(s, 8);
    Line(8, "if (live) {");
    int64_t vector = s.layout.vector;
    int indent = OpenRowLoop(10, "0", absl::StrCat(length), vector);
    std::vector<std::string> body;
    ElementalEmitter e(ir_, RenderedNames(ir_), Computed(s), &body, indent);
    Index index = RowIndex(e, s, "r", "c");
    SEAM_RETURN_IF_ERROR(Accumulate(e, s, index));
    SEAM_RETURN_IF_ERROR(
        EmitElementwiseRoots(e, s, index, absl::StrCat("r * ", length, " + c"), Storer()));
    Lines(body);
    CloseRowLoop(10, vector);
    Line(8, "}");
    EmitLaneCombine(s, stage, 8);
    // The reduce's init, once, then the row.
    std::vector<std::string> finish;
    ElementalEmitter st(ir_, RenderedNames(ir_), Computed(s), &finish, 10);
    for (size_t j = 0; j < s.reductions.size(); ++j) {
      const Instruction* r = s.reductions[j];
      SEAM_ASSIGN_OR_RETURN(std::string init, st.Value(r->operand(1), {}));
      std::string acc = absl::StrCat("acc", j);
      st.Emit(absl::StrCat(acc, " = has", j, " ? ", ReducerName(ir_, r), "(", init, ", ", acc,
                           ") : ", init, ";"));
      Store(st, r, "r", HalfResult(ir_, r, acc));
    }
    Line(8, "if (live && lane == 0) {");
    Lines(finish);
    Line(8, "}");
    Line(6, "}");
    return absl::OkStatus();
  }

  // Folds each accumulator across the `lanes_` threads of its row: warp
  // butterflies, then (rows wider than a warp) the row's warps in order
  // through shared memory.
  void EmitLaneCombine(const Stage& s, size_t stage, int indent) {
    int64_t in_warp = std::min(lanes_, kWarp);
    for (size_t j = 0; j < s.reductions.size(); ++j) {
      Line(indent, absl::StrCat("seam_fold_lanes(acc", j, ", has", j, ", ", in_warp, ", ",
                                ReducerName(ir_, s.reductions[j]), ");"));
    }
    if (lanes_ <= kWarp) return;
    int64_t warps_per_row = lanes_ / kWarp;
    for (size_t j = 0; j < s.reductions.size(); ++j) {
      std::string warps = WarpsName(stage, j);
      DType t = s.reductions[j]->shape().dtype();
      CarveShared(ComputeType(t), warps, kernel_.threads / kWarp, TileElementBytes(t));
      CarveShared("bool", warps + "_has", kernel_.threads / kWarp, 1);
      Line(indent, absl::StrCat("if (threadIdx.x % ", kWarp, " == 0) { ", warps, "[threadIdx.x / ",
                                kWarp, "] = acc", j, "; ", warps, "_has[threadIdx.x / ", kWarp,
                                "] = has", j, "; }"));
    }
    Line(indent, "__syncthreads();");
    for (size_t j = 0; j < s.reductions.size(); ++j) {
      std::string warps = WarpsName(stage, j);
      std::string first = absl::StrCat("lr * ", warps_per_row);
      Line(indent, absl::StrCat("acc", j, " = ", warps, "[", first, "];"));
      Line(indent, absl::StrCat("has", j, " = ", warps, "_has[", first, "];"));
      Line(indent, absl::StrCat("for (int w = 1; w < ", warps_per_row, "; ++w) seam_merge(acc", j,
                                ", has", j, ", ", warps, "[", first, " + w], ", warps, "_has[",
                                first, " + w], ", ReducerName(ir_, s.reductions[j]), ");"));
    }
    Line(indent, "__syncthreads();");
  }

  // Folding phase, grid barrier, combining phase (LoopKind::kPartialReduce).
  absl::Status EmitPartialReduce(const Stage& s, size_t stage) {
    const FoldSplit split = SplitFolded(s);
    int64_t per_chunk = CeilDiv(split.folded, s.chunks);
    if (s.folded.back()) {
      SEAM_RETURN_IF_ERROR(EmitBlockFolding(s, stage, split, per_chunk));
    } else {
      SEAM_RETURN_IF_ERROR(EmitThreadFolding(s, split, per_chunk));
    }
    // Combine: the reduce's init, then each non-empty chunk, in order
    // (BarrierBeforePhase always puts a barrier before it).
    std::string stride = absl::StrCat("static_cast<int64_t>(gridDim.x) * ", kernel_.threads);
    Line(2, "seam_grid.sync();");
    Line(2, absl::StrCat("for (int64_t p = static_cast<int64_t>(blockIdx.x) * ", kernel_.threads,
                         " + threadIdx.x; p < ", split.kept, "; p += ", stride, ") {"));
    std::vector<std::string> combine;
    ElementalEmitter c(ir_, RenderedNames(ir_), Computed(s), &combine, 4);
    SEAM_RETURN_IF_ERROR(
        EmitPartialCombine(ir_, s, split.folded, per_chunk, split.kept, c, Storer()));
    Lines(combine);
    Line(2, "}");
    return absl::OkStatus();
  }

  // Folds element (q, p) of a partial reduction into the accumulators and
  // computes the stage's elementwise roots there.
  absl::Status EmitFoldBody(const Stage& s, const FoldSplit& split, int indent) {
    std::vector<std::string> body;
    ElementalEmitter e(ir_, RenderedNames(ir_), Computed(s), &body, indent);
    Index index = FoldIndex(e, s, split, "q", "p");
    SEAM_RETURN_IF_ERROR(Accumulate(e, s, index));
    SEAM_RETURN_IF_ERROR(EmitElementwiseRoots(e, s, index, ElementalEmitter::Linear(s.dims, index),
                                              Storer()));
    Lines(body);
    return absl::OkStatus();
  }

  // The innermost dimension is folded (a row split over blocks, a full
  // reduction, an NCHW channel statistic): a block per (chunk, kept
  // element), its threads striding along the chunk (coalesced), combined
  // as a row is.
  absl::Status EmitBlockFolding(const Stage& s, size_t stage, const FoldSplit& split,
                                int64_t per_chunk) {
    int64_t tasks = s.chunks * split.kept;
    NoteBlocks(tasks);
    group_ = s.layout.group;
    lanes_ = s.layout.lanes;
    Line(2, "{");
    Line(4, "const int64_t lr = 0, lane = threadIdx.x;");
    Line(4, absl::StrCat("for (int64_t task = blockIdx.x; task < ", tasks, "; task += gridDim.x) {"));
    Line(6, absl::StrCat("const int64_t chunk = task / ", split.kept, ", p = task % ", split.kept,
                         ";"));
    Line(6, absl::StrCat("const int64_t q1 = seam_imin(", split.folded, ", (chunk + 1) * ",
                         per_chunk, ");"));
    DeclareAccumulators(s, 6);
    Line(6, absl::StrCat("for (int64_t q = chunk * ", per_chunk, " + lane; q < q1; q += ",
                         lanes_, ") {"));
    SEAM_RETURN_IF_ERROR(EmitFoldBody(s, split, 8));
    Line(6, "}");
    EmitLaneCombine(s, stage, 6);
    for (size_t j = 0; j < s.reductions.size(); ++j) {
      Line(6, absl::StrCat("if (lane == 0 && has", j, ") b", ir_.PartialsIndex(s.reductions[j]),
                           "[chunk * ", split.kept, " + p] = acc", j, ";"));
    }
    Line(4, "}");
    Line(2, "}");
    return absl::OkStatus();
  }

  // Kept elements innermost (column reductions): a thread per (chunk, kept
  // element), neighbouring threads on neighbouring columns (coalesced).
  absl::Status EmitThreadFolding(const Stage& s, const FoldSplit& split, int64_t per_chunk) {
    int64_t pairs = s.chunks * split.kept;
    NoteBlocks(CeilDiv(pairs, kernel_.threads));
    Line(2, absl::StrCat("for (int64_t task = static_cast<int64_t>(blockIdx.x) * ", kernel_.threads,
                         " + threadIdx.x; task < ", pairs, "; task += static_cast<int64_t>(gridDim.x) * ",
                         kernel_.threads, ") {"));
    Line(4, absl::StrCat("const int64_t chunk = task / ", split.kept, ", p = task % ", split.kept,
                         ";"));
    Line(4, absl::StrCat("const int64_t q1 = seam_imin(", split.folded, ", (chunk + 1) * ",
                         per_chunk, ");"));
    DeclareAccumulators(s, 4);
    Line(4, absl::StrCat("for (int64_t q = chunk * ", per_chunk, "; q < q1; ++q) {"));
    SEAM_RETURN_IF_ERROR(EmitFoldBody(s, split, 6));
    Line(4, "}");
    for (size_t j = 0; j < s.reductions.size(); ++j) {
      Line(4, absl::StrCat("if (has", j, ") b", ir_.PartialsIndex(s.reductions[j]), "[chunk * ",
                           split.kept, " + p] = acc", j, ";"));
    }
    Line(2, "}");
    return absl::OkStatus();
  }

  const KernelIr& ir_;
  const target::DeviceSpec& device_;
  CudaKernel kernel_;
  std::string text_;
  std::string shared_;  // the shared arrays' declarations
  int64_t group_ = 1;  // rows a block works on at once in the current tile phase
  int64_t lanes_ = 1;  // threads per row in the current tile phase
};

}  // namespace

absl::StatusOr<CudaKernel> EmitCudaKernel(const KernelIr& ir, const target::DeviceSpec& device) {
  return CudaKernelEmitter(ir, device).Emit();
}

std::string CudaSourceFile(const std::vector<CudaKernel>& kernels) {
  std::vector<std::string> sources;
  for (const CudaKernel& k : kernels) sources.push_back(k.source);
  return absl::StrCat(CudaPrelude(), "\n", absl::StrJoin(sources, "\n"));
}

}  // namespace seam::codegen
