#include "seam/runtime/onednn_dot.h"

#include <algorithm>
#include <mutex>

#include "seam/runtime/blas_dot.h"
#include "seam/runtime/onednn.h"
#include "seam/runtime/thread_pool.h"

namespace seam::runtime {
namespace {

// A [batch, rows, cols] matrix stack stored row-major, or as its transpose.
DnnlArray Stack(dnnl_data_type_t type, int64_t batch, int64_t rows, int64_t cols,
                bool transposed) {
  return {type,
          {batch, rows, cols},
          {rows * cols, transposed ? 1 : cols, transposed ? rows : 1}};
}

}  // namespace

bool OneDnnDotServes(const Instruction& dot) {
  if (!BlasHandles(dot)) return false;
  const DType out = dot.shape().dtype();
  return dot.operand(0)->shape().dtype() == DType::kBF16 &&
         dot.operand(1)->shape().dtype() == DType::kBF16 &&
         (out == DType::kBF16 || out == DType::kF32) && GemmOfDot(dot).InPlace();
}

absl::StatusOr<Literal> OneDnnDot(BufferPool& pool, const Instruction& dot, const Literal& lhs,
                                  const Literal& rhs) {
  if (absl::Status loaded = LoadOneDnn().status(); !loaded.ok()) return loaded;
  const DotAsGemm g = GemmOfDot(dot);
  const bool bf16_out = dot.shape().dtype() == DType::kBF16;
  const dnnl_data_type_t out_type = bf16_out ? dnnl_bf16 : dnnl_f32;
  const int64_t out_bytes = bf16_out ? 2 : 4;
  Literal out = pool.TakeLiteral(dot.shape());
  const auto* a = lhs.data<uint8_t>();
  const auto* b = rhs.data<uint8_t>();
  auto* c = out.mutable_data<uint8_t>();
  const int64_t m = g.m, n = g.n, k = g.k;

  // Whole products to threads when there are enough of them; otherwise a
  // share of the columns of each per thread (the weights read once).
  // (On the 2-core AVX512-BF16 host measured, two threads of bf16
  // arithmetic ran each at half speed: Gemma's dots took as long on one.)
  ThreadPool& threads = ThreadPool::Global();
  const bool by_batch = g.batch >= threads.size() || n < 128;
  const int64_t side = by_batch ? g.batch : n;
  const int64_t pieces =
      std::max<int64_t>(1, std::min<int64_t>(threads.size(), by_batch ? side : side / 64));
  const int64_t step = by_batch ? (side + pieces - 1) / pieces
                                : ((side + pieces - 1) / pieces + 63) / 64 * 64;
  std::mutex mu;
  absl::Status status;
  threads.ParallelFor(pieces, 1, [&](int64_t begin, int64_t end, int) {
    for (int64_t p = begin; p < end; ++p) {
      const int64_t lo = p * step, hi = std::min(side, lo + step);
      if (lo >= hi) continue;
      DnnlArray sa = Stack(dnnl_bf16, g.batch, m, k, g.lhs_transposed);
      DnnlArray sb = Stack(dnnl_bf16, g.batch, k, n, g.rhs_transposed);
      DnnlArray sc = Stack(out_type, g.batch, m, n, false);
      const uint8_t *pa = a, *pb = b;
      uint8_t* pc = c;
      if (by_batch) {
        sa.dims[0] = sb.dims[0] = sc.dims[0] = hi - lo;
        pa += 2 * lo * m * k;
        pb += 2 * lo * k * n;
        pc += out_bytes * lo * m * n;
      } else {
        sb.dims[2] = sc.dims[2] = hi - lo;
        pb += 2 * (g.rhs_transposed ? lo * k : lo);
        pc += out_bytes * lo;
      }
      absl::Status s = OneDnnMatmul(sa, pa, sb, pb, sc, pc);
      if (!s.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        status = s;
      }
    }
  });
  if (!status.ok()) return status;
  return out;
}

}  // namespace seam::runtime
