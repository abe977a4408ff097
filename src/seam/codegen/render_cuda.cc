// The CUDA traits for the renderer (AStitch's schemes on a GPU): one
// __global__ function per kernel. Tasks are taken by the grid's blocks in
// turn, so any grid from one block up computes the whole kernel (vertical
// packing); a block's threads spread over a row's elements, a few
// consecutive ones each, unrolled (128-bit accesses when rows are a whole
// number of vectors). Tile buffers and warp results live in the block's
// dynamic shared memory; grid barriers are a cooperative launch's grid
// sync, block barriers __syncthreads(). The emulator (cuda-sim) compiles
// the same text on the host over its own builtins.
#include "seam/codegen/emit_cuda.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "seam/codegen/c_types.h"
#include "seam/codegen/prelude.h"
#include "seam/codegen/render_c.h"
#include "seam/codegen/render_common.h"
#include "seam/util/status_macros.h"

namespace seam::codegen {
namespace {

constexpr int64_t kWarp = 32;

class CudaTraits : public TargetTraits {
 public:
  std::string Min(const std::string& a, const std::string& b) const override {
    return absl::StrCat("seam_imin(", a, ", ", b, ")");
  }

  // Buffers start 16-byte aligned (CudaKernel): with rows a whole number
  // of vectors, a thread's consecutive elements load as one 128-bit access.
  void OpenKernel(const KernelIr& ir, CodeWriter& out) const override {
    std::vector<std::string> params, aligned;
    for (size_t k = 0; k < ir.buffers.size(); ++k) {
      const KernelBuffer& b = ir.buffers[k];
      std::string element =
          absl::StrCat(b.storage == Storage::kInput ? "const " : "", StorageType(b.dtype));
      params.push_back(absl::StrCat(element, "* __restrict__ b", k, "_"));
      aligned.push_back(absl::StrCat("const seam_global<", element, "> b", k,
                                     " = seam_assume_aligned(b", k, "_);"));
    }
    out.Line(absl::StrCat("extern \"C\" __global__ void __launch_bounds__(", ir.block_threads, ") ",
                          ir.name, "(", absl::StrJoin(params, ", "), ") {"));
    out.Indent(2);
    for (const std::string& line : aligned) out.Line(line);
  }

  void DeclareKernelState(const KernelIr& ir, CodeWriter& out) const override {
    for (const Allocation& a : ir.allocations) {
      out.Line(absl::StrCat("const seam_shared<", a.type, "> ", a.name, " = seam_shared_array<",
                            a.type, ">(", a.offset, ", ", a.count, ");"));
    }
    if (ir.grid_barriers) {
      out.Line("cooperative_groups::grid_group seam_grid = cooperative_groups::this_grid();");
    }
  }

  absl::Status OpenLoop(const KernelIr& ir, const Loop& l, CodeWriter& out) const override {
    const std::string& v = l.var;
    const std::string end = Spell(l.end);
    switch (l.role) {
      case LoopRole::kSerial:
        out.Line(SerialFor(l));
        break;
      case LoopRole::kTasks:
        out.Line(absl::StrCat("for (int64_t ", v, " = blockIdx.x; ", v, " < ", end, "; ", v,
                              " += gridDim.x) {"));
        break;
      case LoopRole::kGridThreads:
        out.Line(absl::StrCat("for (int64_t ", v, " = static_cast<int64_t>(blockIdx.x) * ",
                              ir.block_threads, " + threadIdx.x; ", v, " < ", end, "; ", v,
                              " += static_cast<int64_t>(gridDim.x) * ", ir.block_threads, ") {"));
        break;
      case LoopRole::kThreads:
        OpenThreadsLoop(l, out);
        return absl::OkStatus();
      case LoopRole::kSimd:
        return NotOnTarget("CUDA", "SIMD loops");
    }
    out.Indent(2);
    return absl::OkStatus();
  }

  void CloseLoop(const Loop& l, CodeWriter& out) const override {
    if (l.role == LoopRole::kThreads && l.vector > 1) {
      out.Indent(-2);
      out.Line("}");
    }
    out.Indent(-2);
    out.Line("}");
  }

  absl::Status WriteBarrier(BarrierKind kind, CodeWriter& out) const override {
    out.Line(kind == BarrierKind::kGrid ? "seam_grid.sync();" : "__syncthreads();");
    return absl::OkStatus();
  }

  // Warp butterflies (every lane ends with its row's value), then (rows
  // wider than a warp) the row's warps in order through shared memory:
  // deterministic, no atomics.
  absl::Status WriteCombineLanes(const KernelIr& ir, const CombineLanes& c,
                                 CodeWriter& out) const override {
    const Stage& s = ir.stages[c.stage];
    const int64_t in_warp = std::min(c.lanes, kWarp);
    for (size_t j = 0; j < s.reductions.size(); ++j) {
      out.Line(absl::StrCat("seam_fold_lanes(acc", j, ", has", j, ", ", in_warp, ", ",
                            ReducerName(ir, s.reductions[j]), ");"));
    }
    if (c.lanes <= kWarp) return absl::OkStatus();
    const int64_t warps_per_row = c.lanes / kWarp;
    for (size_t j = 0; j < s.reductions.size(); ++j) {
      const std::string& warps = c.warps[j];
      out.Line(absl::StrCat("if (threadIdx.x % ", kWarp, " == 0) { ", warps, "[threadIdx.x / ",
                            kWarp, "] = acc", j, "; ", warps, "_has[threadIdx.x / ", kWarp,
                            "] = has", j, "; }"));
    }
    out.Line("__syncthreads();");
    for (size_t j = 0; j < s.reductions.size(); ++j) {
      const std::string& warps = c.warps[j];
      const std::string first = absl::StrCat("lr * ", warps_per_row);
      out.Line(absl::StrCat("acc", j, " = ", warps, "[", first, "];"));
      out.Line(absl::StrCat("has", j, " = ", warps, "_has[", first, "];"));
      out.Line(absl::StrCat("for (int w = 1; w < ", warps_per_row, "; ++w) seam_merge(acc", j,
                            ", has", j, ", ", warps, "[", first, " + w], ", warps, "_has[", first,
                            " + w], ", ReducerName(ir, s.reductions[j]), ");"));
    }
    out.Line("__syncthreads();");
    return absl::OkStatus();
  }

  absl::Status WriteStreamOut(const StreamOut&, CodeWriter&) const override {
    return NotOnTarget("CUDA", "staged rows");
  }
  absl::Status WriteStreamFence(CodeWriter&) const override {
    return NotOnTarget("CUDA", "streamed stores");
  }
  absl::Status WritePrefetch(const Prefetch&, CodeWriter&) const override {
    return NotOnTarget("CUDA", "rows prefetched by a pass");
  }

  bool VectorTwins() const override { return false; }

 private:
  // Thread `thread` of `threads` takes iterations begin + thread, + threads...;
  // with a vector, `vector` consecutive ones a step, unrolled.
  void OpenThreadsLoop(const Loop& l, CodeWriter& out) const {
    const std::string begin = Spell(l.begin);
    const std::string end = Spell(l.end);
    const std::string first = begin.empty() ? l.thread : absl::StrCat(begin, " + ", l.thread);
    if (l.vector == 1) {
      out.Line(absl::StrCat("for (int64_t ", l.var, " = ", first, "; ", l.var, " < ", end, "; ",
                            l.var, " += ", l.threads, ") {"));
      out.Indent(2);
      return;
    }
    const std::string runs = l.var + "v";
    out.Line(absl::StrCat("for (int64_t ", runs, " = ", first, " * ", l.vector, "; ", runs, " < ",
                          end, "; ", runs, " += ", l.threads * l.vector, ") {"));
    out.Indent(2);
    out.Line("#pragma unroll");
    out.Line(absl::StrCat("for (int64_t j = 0; j < ", l.vector, "; ++j) {"));
    out.Indent(2);
    out.Line(absl::StrCat("const int64_t ", l.var, " = ", runs, " + j;"));
  }
};

}  // namespace

absl::StatusOr<CudaKernel> EmitCudaKernel(const KernelIr& ir) {
  CudaKernel kernel;
  kernel.name = ir.name;
  SEAM_ASSIGN_OR_RETURN(kernel.source, RenderKernel(ir, CudaTraits()));
  kernel.threads = ir.block_threads;
  kernel.parameters = static_cast<int64_t>(ir.buffers.size());
  kernel.shared_bytes = ir.shared_bytes;
  kernel.max_blocks = ir.max_blocks;
  kernel.grid_barriers = ir.grid_barriers;
  return kernel;
}

std::string CudaSourceFile(const std::vector<CudaKernel>& kernels) {
  std::vector<std::string> sources;
  for (const CudaKernel& k : kernels) sources.push_back(k.source);
  return absl::StrCat(CudaPrelude(), "\n", absl::StrJoin(sources, "\n"));
}

}  // namespace seam::codegen
