// What Seam does today around a BLAS (src/seam/runtime/blas_dot.cc,
// blas_conv.cc, blas_pack.h), rewritten here so that any BLAS can be
// plugged in: its own thread pool splits the work and calls the library
// single-threaded; convolutions are im2col + GEMM, depthwise ones a direct
// loop. The rules (split thresholds, chunk sizes) are Seam's.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#include "blas_libs.h"
#include "problems.h"

namespace libbench {

// A fixed pool: the calling thread and size()-1 workers that sleep between
// tasks (no spinning: other candidates run in between).
class Pool {
 public:
  explicit Pool(int threads);
  ~Pool();
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;
  int size() const { return static_cast<int>(workers_.size()) + 1; }
  // fn(begin, end) over [0, n) in size() contiguous pieces, at most one each.
  void ParallelFor(int64_t n, const std::function<void(int64_t, int64_t)>& fn);

 private:
  void Work(int index);
  void Piece(int index);
  std::vector<std::thread> workers_;
  const std::function<void(int64_t, int64_t)>* task_ = nullptr;
  int64_t n_ = 0;
  std::atomic<uint64_t> generation_{0}, pending_{0};
  std::atomic<bool> stop_{false};
};

// Seam's Gemm: the longer side of C cut into one piece per thread (whole
// multiples of 16) when the product is large enough, each piece one
// single-threaded library call.
template <typename T>
void SeamGemm(Pool& pool, const BlasLibrary& lib, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
              const T* a, int64_t lda, const T* b, int64_t ldb, float* c, int64_t ldc);

// Seam's batched dot: many or small products go to the threads whole,
// a few large ones are split each.
void SeamBatchedGemm(Pool& pool, const BlasLibrary& lib, const GemmCase& g, const float* a,
                     const float* b, float* c);
// The same with bf16 operands, for a library with a bf16 GEMM (MKL's
// cblas_gemm_bf16bf16f32).
void SeamBatchedGemm(Pool& pool, const BlasLibrary& lib, const GemmCase& g, const bf16* a,
                     const bf16* b, float* c);

// bf16 operands through an f32 library: converted (on the pool) into
// a32/b32, then SeamBatchedGemm, as Seam packs half types into f32.
void SeamBf16Gemm(Pool& pool, const BlasLibrary& lib, const GemmCase& g, const bf16* a,
                  const bf16* b, float* a32, float* b32, float* c);

// A convolution on canonical layouts, Seam's way. Holds the window offsets
// and im2col scratch between runs.
class SeamConv {
 public:
  explicit SeamConv(const ConvCase& c);
  // Whether it takes the direct depthwise loop (else im2col + GEMM).
  bool depthwise() const { return depthwise_; }
  void Run(Pool& pool, const BlasLibrary* lib, const float* in, const float* ker, float* out);
  // The same loop compiled for this CPU (-march=native), depthwise only.
  void RunNative(Pool& pool, const float* in, const float* ker, float* out);

 private:
  ConvCase c_;
  bool pointwise_ = false, depthwise_ = false;
  std::vector<int64_t> offsets_;  // [out position][kernel position] -> input position or -1
  std::vector<float> columns_;
  int64_t chunk_ = 0;
};

// The depthwise loop itself (seam_depthwise.cc, built twice: generic
// x86-64 as Seam's runtime is, and -march=native).
struct DepthwiseArgs {
  const ConvCase* c;
  const int64_t* offsets;
  const float* in;
  const float* ker;
  float* out;
};
void DepthwiseRows(const DepthwiseArgs& a, int64_t begin, int64_t end);
void DepthwiseRowsNative(const DepthwiseArgs& a, int64_t begin, int64_t end);

}  // namespace libbench
