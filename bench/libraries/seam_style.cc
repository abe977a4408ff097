#include "seam_style.h"

#include <algorithm>
#include <chrono>
#include <immintrin.h>

namespace libbench {
namespace {

// Spin this long for the next task before sleeping: short enough not to
// steal much from whatever runs next, long enough to catch back-to-back
// pool loops without a futex wake.
constexpr auto kSpin = std::chrono::microseconds(50);

template <typename Ready>
void SpinThenWait(std::atomic<uint64_t>& word, uint64_t old, Ready ready) {
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; !ready(); ++i) {
    _mm_pause();
    if ((i & 63) == 63 && std::chrono::steady_clock::now() - start > kSpin) {
      while (!ready()) word.wait(old, std::memory_order_acquire);
      return;
    }
  }
}

}  // namespace

Pool::Pool(int threads) {
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { Work(i); });
}

Pool::~Pool() {
  stop_.store(true);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  for (auto& t : workers_) t.join();
}

void Pool::Piece(int index) {
  const int64_t per = (n_ + size() - 1) / size();
  const int64_t begin = index * per, end = std::min(n_, begin + per);
  if (begin < end) (*task_)(begin, end);
}

void Pool::ParallelFor(int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  if (workers_.empty() || n == 1) {
    fn(0, n);
    return;
  }
  task_ = &fn;
  n_ = n;
  pending_.store(static_cast<uint64_t>(workers_.size()), std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  Piece(0);
  for (uint64_t left; (left = pending_.load(std::memory_order_acquire)) != 0;) {
    SpinThenWait(pending_, left, [&] { return pending_.load(std::memory_order_acquire) != left; });
  }
  task_ = nullptr;
}

void Pool::Work(int index) {
  uint64_t seen = 0;
  for (;;) {
    SpinThenWait(generation_, seen, [&] { return generation_.load(std::memory_order_acquire) != seen; });
    seen = generation_.load(std::memory_order_acquire);
    if (stop_.load()) return;
    Piece(index);
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
  }
}

template <typename T>
void SeamGemm(Pool& pool, const BlasLibrary& lib, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
              const T* a, int64_t lda, const T* b, int64_t ldb, float* c, int64_t ldc) {
  // Seam's kSerialGemmWork and its 16-multiple pieces.
  const bool by_rows = m >= n;
  const int64_t side = by_rows ? m : n;
  const int64_t pieces = std::min<int64_t>(pool.size(), side / 16);
  if (pieces < 2 || m * n * k < (int64_t{1} << 20)) {
    lib.Gemm(ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
    return;
  }
  const int64_t step = ((side + pieces - 1) / pieces + 15) / 16 * 16;
  pool.ParallelFor(pieces, [&](int64_t begin, int64_t end) {
    lib.set_threads(1);  // per thread for MKL; a no-op change for the others
    for (int64_t p = begin; p < end; ++p) {
      const int64_t lo = p * step, hi = std::min(side, lo + step);
      if (lo >= hi) continue;
      if (by_rows) {
        lib.Gemm(ta, tb, hi - lo, n, k, a + (ta ? lo : lo * lda), lda, b, ldb, c + lo * ldc, ldc);
      } else {
        lib.Gemm(ta, tb, m, hi - lo, k, a, lda, b + (tb ? lo * ldb : lo), ldb, c + lo, ldc);
      }
    }
  });
}

template void SeamGemm(Pool&, const BlasLibrary&, bool, bool, int64_t, int64_t, int64_t, const float*,
                       int64_t, const float*, int64_t, float*, int64_t);
template void SeamGemm(Pool&, const BlasLibrary&, bool, bool, int64_t, int64_t, int64_t, const bf16*,
                       int64_t, const bf16*, int64_t, float*, int64_t);

namespace {

template <typename T>
void BatchedGemm(Pool& pool, const BlasLibrary& lib, const GemmCase& g, const T* a, const T* b, float* c) {
  const int64_t mk = g.m * g.k, kn = g.k * g.n, mn = g.m * g.n;
  const int64_t lda = g.ta ? g.m : g.k, ldb = g.tb ? g.k : g.n;
  auto serial = [&](int64_t begin, int64_t end) {
    lib.set_threads(1);
    for (int64_t i = begin; i < end; ++i) {
      lib.Gemm(g.ta, g.tb, g.m, g.n, g.k, a + i * mk, lda, b + i * kn, ldb, c + i * mn, g.n);
    }
  };
  if (g.batch >= 4 * pool.size() || (g.batch > 1 && g.m * g.n * g.k < (int64_t{1} << 20))) {
    pool.ParallelFor(g.batch, serial);
  } else {
    for (int64_t i = 0; i < g.batch; ++i) {
      SeamGemm(pool, lib, g.ta, g.tb, g.m, g.n, g.k, a + i * mk, lda, b + i * kn, ldb, c + i * mn, g.n);
    }
  }
}

}  // namespace

void SeamBatchedGemm(Pool& pool, const BlasLibrary& lib, const GemmCase& g, const float* a,
                     const float* b, float* c) {
  BatchedGemm(pool, lib, g, a, b, c);
}

void SeamBatchedGemm(Pool& pool, const BlasLibrary& lib, const GemmCase& g, const bf16* a,
                     const bf16* b, float* c) {
  BatchedGemm(pool, lib, g, a, b, c);
}

void SeamBf16Gemm(Pool& pool, const BlasLibrary& lib, const GemmCase& g, const bf16* a,
                  const bf16* b, float* a32, float* b32, float* c) {
  const int64_t na = g.batch * g.m * g.k, nb = g.batch * g.k * g.n;
  pool.ParallelFor(na + nb, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      if (i < na) {
        a32[i] = FromBf16(a[i]);
      } else {
        b32[i - na] = FromBf16(b[i - na]);
      }
    }
  });
  SeamBatchedGemm(pool, lib, g, a32, b32, c);
}

SeamConv::SeamConv(const ConvCase& c) : c_(c) {
  pointwise_ = c.kh == 1 && c.kw == 1 && c.sh == 1 && c.sw == 1 && c.plh == 0 && c.phh == 0 &&
               c.plw == 0 && c.phw == 0 && c.lh == 1 && c.lw == 1 && c.oh == c.h && c.ow == c.w;
  depthwise_ = c.kin == 1 && c.bgc == 1 && !pointwise_;
  if (pointwise_) return;
  // For every (output position, kernel element as stored): the input
  // position read, or -1 in padding / between dilated input elements.
  const int64_t kp_count = c.kh * c.kw;
  offsets_.assign(static_cast<size_t>(c.oh * c.ow * kp_count), -1);
  for (int64_t y = 0; y < c.oh; ++y) {
    for (int64_t x = 0; x < c.ow; ++x) {
      for (int64_t ky = 0; ky < c.kh; ++ky) {
        for (int64_t kx = 0; kx < c.kw; ++kx) {
          const int64_t py = y * c.sh + ky * c.dh - c.plh, px = x * c.sw + kx * c.dw - c.plw;
          const int64_t sy = c.rh ? c.kh - 1 - ky : ky, sx = c.rw ? c.kw - 1 - kx : kx;
          bool inside = py >= 0 && px >= 0 && py % c.lh == 0 && px % c.lw == 0 &&
                        py / c.lh < c.h && px / c.lw < c.w;
          offsets_[static_cast<size_t>((y * c.ow + x) * kp_count + sy * c.kw + sx)] =
              inside ? (py / c.lh) * c.w + px / c.lw : -1;
        }
      }
    }
  }
  if (!depthwise_) {
    // Seam's chunk: the column matrix near 8M elements.
    const int64_t rows = c.on * c.oh * c.ow, depth = kp_count * c.kin;
    chunk_ = std::clamp<int64_t>((int64_t{8} << 20) / std::max<int64_t>(1, depth), 1, rows);
    columns_.resize(static_cast<size_t>(chunk_ * depth));
  }
}

void SeamConv::Run(Pool& pool, const BlasLibrary* lib, const float* in, const float* ker, float* out) {
  const ConvCase& c = c_;
  const int64_t out_positions = c.oh * c.ow, in_positions = c.h * c.w;
  const int64_t rows = c.on * out_positions;
  if (depthwise_) {
    DepthwiseArgs args{&c, offsets_.data(), in, ker, out};
    pool.ParallelFor(rows, [&](int64_t begin, int64_t end) { DepthwiseRows(args, begin, end); });
    return;
  }
  const int64_t kp_count = c.kh * c.kw, depth = kp_count * c.kin;
  const int64_t per_fg = c.co / c.fgc, per_bg = c.co / c.bgc;
  // Output features [f0, f1) share one feature group and one batch group.
  for (int64_t f0 = 0; f0 < c.co;) {
    const int64_t fg = f0 / per_fg, bg = f0 / per_bg;
    const int64_t f1 = std::min((fg + 1) * per_fg, (bg + 1) * per_bg);
    const float* weights = ker + f0;  // [depth][co] from column f0
    const float* group_in = in + bg * c.on * in_positions * c.ci + fg * c.kin;
    if (pointwise_) {
      // The input already is the left matrix (lda = ci).
      SeamGemm(pool, *lib, false, false, rows, f1 - f0, depth, group_in, c.ci, weights, c.co, out + f0,
               c.co);
      f0 = f1;
      continue;
    }
    for (int64_t r0 = 0; r0 < rows; r0 += chunk_) {
      const int64_t r1 = std::min(rows, r0 + chunk_);
      pool.ParallelFor(r1 - r0, [&](int64_t begin, int64_t end) {
        for (int64_t r = r0 + begin; r < r0 + end; ++r) {
          const int64_t ob = r / out_positions, op = r % out_positions;
          const float* image = group_in + ob * in_positions * c.ci;
          float* column = columns_.data() + (r - r0) * depth;
          for (int64_t kp = 0; kp < kp_count; ++kp) {
            const int64_t at = offsets_[static_cast<size_t>(op * kp_count + kp)];
            float* to = column + kp * c.kin;
            if (at < 0) {
              std::fill(to, to + c.kin, 0.0f);
            } else {
              std::copy(image + at * c.ci, image + at * c.ci + c.kin, to);
            }
          }
        }
      });
      SeamGemm(pool, *lib, false, false, r1 - r0, f1 - f0, depth, columns_.data(), depth, weights, c.co,
               out + r0 * c.co + f0, c.co);
    }
    f0 = f1;
  }
}

void SeamConv::RunNative(Pool& pool, const float* in, const float* ker, float* out) {
  DepthwiseArgs args{&c_, offsets_.data(), in, ker, out};
  pool.ParallelFor(c_.on * c_.oh * c_.ow,
                   [&](int64_t begin, int64_t end) { DepthwiseRowsNative(args, begin, end); });
}

}  // namespace libbench
