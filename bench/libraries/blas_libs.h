// The BLAS candidates, each opened with dlopen (RTLD_LOCAL: all of them
// export cblas_sgemm) so that one process can interleave them.
#pragma once

#include <cstdint>
#include <string>

#include "problems.h"

namespace libbench {

// CBLAS enum values (the same in every implementation).
inline constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;

struct BlasLibrary {
  std::string name;  // openblas, openblas-prescott, mkl, blis
  std::string info;  // version and kernel set, as the library reports them
  using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int,
                         float, float*, int);
  using GemmBf16 = void (*)(int, int, int, int, int, int, float, const bf16*, int, const bf16*, int,
                            float, float*, int);
  Sgemm sgemm = nullptr;
  GemmBf16 gemm_bf16 = nullptr;  // bf16 x bf16 -> f32 where the library has one
  // Threads the next calls from this thread may use.
  void (*set_threads)(int) = nullptr;

  // C = op(A) * op(B), row-major, one batch element.
  void Gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
            const float* b, int64_t ldb, float* c, int64_t ldc) const {
    sgemm(kRowMajor, ta ? kTrans : kNoTrans, tb ? kTrans : kNoTrans, static_cast<int>(m),
          static_cast<int>(n), static_cast<int>(k), 1.0f, a, static_cast<int>(lda), b,
          static_cast<int>(ldb), 0.0f, c, static_cast<int>(ldc));
  }
  void Gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const bf16* a, int64_t lda,
            const bf16* b, int64_t ldb, float* c, int64_t ldc) const {
    gemm_bf16(kRowMajor, ta ? kTrans : kNoTrans, tb ? kTrans : kNoTrans, static_cast<int>(m),
              static_cast<int>(n), static_cast<int>(k), 1.0f, a, static_cast<int>(lda), b,
              static_cast<int>(ldb), 0.0f, c, static_cast<int>(ldc));
  }
};

// OpenBLAS as Seam opens it (src/seam/runtime/openblas.cc): OPENBLAS_NUM_THREADS=1
// and OPENBLAS_CORETYPE=<core for this CPU's instructions> in the environment
// while it loads, restored after. force_core=false: its own detection
// (PRESCOTT on this VM). Any name but "openblas" loads a private copy of the
// file (in scratch_dir) so that each instance initializes by itself.
// thread_timeout > 0: OPENBLAS_THREAD_TIMEOUT while it loads (4: idle
// workers sleep at once instead of yielding for 2^28 cycles, ~0.1 s).
BlasLibrary OpenOpenBlas(const std::string& name, bool force_core, int thread_timeout,
                         const std::string& scratch_dir);

// Intel MKL through libmkl_rt.so (path given), GNU OpenMP threading layer
// (the libgomp oneDNN uses too), LP64 interface.
BlasLibrary OpenMkl(const std::string& libmkl_rt);

// BLIS (pthreads build) from the given libblis.so.4.
BlasLibrary OpenBlis(const std::string& libblis);

// The core type Seam forces for this CPU (nullptr: none).
const char* SeamCoreType();

}  // namespace libbench
