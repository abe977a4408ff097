// The CPU's traits for the renderer: one C++ function per kernel, called
// with its buffers and Seam's thread pool. A task loop is a parallel loop
// on the pool (seam_parallel; its end is a grid barrier), declaring in its
// body the buffers (a pointer reached through the closure loses
// __restrict, and with it the loops' vectorization) and the thread's own
// tile buffers and staging rows, carved from its arena. Vector lanes are
// `omp simd` loops, whose bodies call the prelude's vector twins of exp
// and tanh where nothing beside them keeps GCC from vectorizing.
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "seam/codegen/c_types.h"
#include "seam/codegen/emit_cpu.h"
#include "seam/codegen/prelude.h"
#include "seam/codegen/render_c.h"

namespace seam::codegen {
namespace {

class CpuTraits : public TargetTraits {
 public:
  std::string Min(const std::string& a, const std::string& b) const override {
    return absl::StrCat("std::min<int64_t>(", a, ", ", b, ")");
  }

  void OpenKernel(const KernelIr& ir, CodeWriter& out) const override {
    out.Line(absl::StrCat("extern \"C\" __attribute__((visibility(\"default\"))) void ", ir.name,
                          "(void* const* seam_buffers, const seam_pool* seam_threads) {"));
    out.Indent(2);
  }

  void DeclareKernelState(const KernelIr&, CodeWriter&) const override {}

  absl::Status OpenLoop(const KernelIr& ir, const Loop& loop, CodeWriter& out) const override {
    switch (loop.role) {
      case LoopRole::kTasks:
        OpenParallelLoop(ir, loop, out);
        return absl::OkStatus();
      case LoopRole::kSimd: {
        std::string clauses;
        for (const SimdReduction& r : loop.reductions) {
          absl::StrAppend(&clauses, " reduction(", r.op, ":", r.var, ")");
        }
        out.Line(absl::StrCat("#pragma omp simd", clauses));
        [[fallthrough]];
      }
      case LoopRole::kSerial:
        out.Line(SerialFor(loop));
        out.Indent(2);
        return absl::OkStatus();
      case LoopRole::kGridThreads:
      case LoopRole::kThreads:
        break;
    }
    return NotOnTarget("CPU", "GPU threads");
  }

  void CloseLoop(const Loop& loop, CodeWriter& out) const override {
    if (loop.role != LoopRole::kTasks || !loop.var.empty()) {
      out.Indent(-2);
      out.Line("}");
    }
    if (loop.role == LoopRole::kTasks) {
      out.Indent(-2);
      out.Line("});");
    }
  }

  // A CPU block is one thread: nothing to wait for; a grid barrier is the
  // end of a parallel loop.
  absl::Status WriteBarrier(BarrierKind, CodeWriter&) const override { return absl::OkStatus(); }

  absl::Status WriteCombineLanes(const KernelIr&, const CombineLanes&, CodeWriter&) const override {
    return NotOnTarget("CPU", "threads sharing a row");
  }

  absl::Status WriteStreamOut(const StreamOut& s, CodeWriter& out) const override {
    out.Line(absl::StrCat("seam_stream_store(b", s.buffer, " + ", s.offset, ", ", s.staging, ", ",
                          s.count, " * sizeof(", s.staging, "[0]));"));
    return absl::OkStatus();
  }

  absl::Status WriteStreamFence(CodeWriter& out) const override {
    out.Line("seam_stream_fence();");
    return absl::OkStatus();
  }

  absl::Status WritePrefetch(const Prefetch& p, CodeWriter& out) const override {
    const std::string column = p.column.empty() ? "" : absl::StrCat(" + ", p.column);
    out.Line(absl::StrCat("seam_prefetch(b", p.buffer, " + ", Spell(p.row), " * ", p.row_length,
                          column, ", ", p.count > 0 ? p.count : p.row_length, " * sizeof(b",
                          p.buffer, "[0]));"));
    return absl::OkStatus();
  }

  bool VectorTwins() const override { return true; }

 private:
  // A pool loop over the tasks (on the calling thread alone unless split),
  // each thread declaring the buffers and its own memory; without a
  // variable, the body loops over [seam_begin, seam_end) itself.
  void OpenParallelLoop(const KernelIr& ir, const Loop& loop, CodeWriter& out) const {
    out.Line(absl::StrCat(loop.split ? "seam_parallel(seam_threads, " : "seam_serial(",
                          Spell(loop.end), ", [&](int64_t seam_begin, int64_t seam_end, int) {"));
    out.Indent(2);
    for (size_t k = 0; k < ir.buffers.size(); ++k) {
      const KernelBuffer& b = ir.buffers[k];
      const std::string type = StorageType(b.dtype);
      const char* constness = b.storage == Storage::kInput ? "const " : "";
      out.Line(absl::StrCat(constness, type, "* __restrict b", k, " = static_cast<", constness,
                            type, "*>(seam_buffers[", k, "]);"));
    }
    if (!ir.allocations.empty()) {
      std::vector<std::string> sizes;
      for (const Allocation& a : ir.allocations) {
        sizes.push_back(absl::StrCat("seam_carved_bytes<", a.type, ">(", a.count, ")"));
      }
      out.Line(
          absl::StrCat("char* seam_at = seam_thread_arena(", absl::StrJoin(sizes, " + "), ");"));
      for (const Allocation& a : ir.allocations) {
        out.Line(absl::StrCat(a.type, "* __restrict ", a.name, " = seam_carve<", a.type,
                              ">(seam_at, ", a.count, ");"));
      }
    }
    if (loop.var.empty()) return;
    out.Line(absl::StrCat("for (int64_t ", loop.var, " = seam_begin; ", loop.var, " < seam_end; ++",
                          loop.var, ") {"));
    out.Indent(2);
  }
};

}  // namespace

absl::StatusOr<std::string> EmitCpuKernel(const KernelIr& ir) {
  return RenderKernel(ir, CpuTraits());
}

std::string CpuSourceFile(const std::vector<std::string>& kernels) {
  return absl::StrCat(CpuPrelude(), "\n", absl::StrJoin(kernels, "\n"));
}

}  // namespace seam::codegen
