// cuBLAS, opened at run time (dlopen) like the CUDA driver, for
// the matrix products Seam leaves to the vendor library. Row-major, as
// Seam's buffers are.
//
// Where it lives: libcublas.so.13, .so.12 or .so by soname, else under
// $SEAM_CUDA_HOME, $CUDA_HOME, $CUDA_PATH or /usr/local/cuda.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "seam/ir/dtype.h"
#include "seam/runtime/cuda_driver.h"

namespace seam::runtime::cuda {

using BlasHandle = struct BlasOpaque*;  // cublasHandle_t

// "major.minor.patch" of the cuBLAS found; Unavailable when there is none.
// Needs no device.
absl::StatusOr<std::string> CublasVersion();

// C[b] = op(A[b]) · op(B[b]) for b < batch, every matrix row-major:
// op(A) is m×k (A stored m×k, or k×m when transpose_a), op(B) is k×n (B
// stored k×n, or n×k when transpose_b), and C is m×n.
struct GemmShape {
  DType dtype = DType::kF32;  // of A, B and C: kF32, kF16, kBF16 or kF64
  // C's type when not dtype: kF32 for kF16 or kBF16 operands (XLA's
  // preferred_element_type=f32).
  std::optional<DType> output_dtype;
  int64_t batch = 1;
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  bool transpose_a = false;
  bool transpose_b = false;
  // Elements from one batch's matrix to the next (m*k and k*n when dense;
  // 0 reuses one matrix for every batch).
  int64_t stride_a = 0;
  int64_t stride_b = 0;
  // Elements between C's matrices: 0 means dense (m*n); otherwise at
  // least m*n, as C's matrices must not overlap.
  int64_t stride_c = 0;
};

// A cuBLAS handle working in the context it was created for, which must
// outlive it. Work goes to the default stream, ordered with the context's.
class Blas {
 public:
  static absl::StatusOr<std::unique_ptr<Blas>> Create(Context& context);

  Blas(const Blas&) = delete;
  Blas& operator=(const Blas&) = delete;
  ~Blas();

  // Enqueues C = op(A)·op(B) (see GemmShape) on device buffers `a`, `b`
  // and `c`; f16 and bf16 accumulate in f32.
  absl::Status Gemm(const GemmShape& shape, DevicePointer a, DevicePointer b, DevicePointer c);

 private:
  Blas(Context& context, BlasHandle handle) : context_(context), handle_(handle) {}

  Context& context_;
  BlasHandle handle_;
};

}  // namespace seam::runtime::cuda
