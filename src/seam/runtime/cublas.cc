#include "seam/runtime/cublas.h"

#include <dlfcn.h>

#include <climits>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "seam/runtime/cuda_home.h"
#include "seam/util/status_macros.h"

namespace seam::runtime::cuda {
namespace {

// cublasStatus_t, cublasOperation_t, cudaDataType, cublasComputeType_t and
// cublasGemmAlgo_t are int-sized enums; their values, from cublas_api.h and
// library_types.h:
using CublasStatus = int;
constexpr CublasStatus kSuccess = 0;
constexpr int kOpN = 0;           // CUBLAS_OP_N
constexpr int kOpT = 1;           // CUBLAS_OP_T
constexpr int kDataF32 = 0;       // CUDA_R_32F
constexpr int kDataF64 = 1;       // CUDA_R_64F
constexpr int kDataF16 = 2;       // CUDA_R_16F
constexpr int kDataBF16 = 14;     // CUDA_R_16BF
constexpr int kCompute32F = 68;   // CUBLAS_COMPUTE_32F
constexpr int kCompute64F = 70;   // CUBLAS_COMPUTE_64F
constexpr int kGemmDefault = -1;  // CUBLAS_GEMM_DEFAULT
constexpr int kMajorVersion = 0;  // libraryPropertyType
constexpr int kMinorVersion = 1;
constexpr int kPatchLevel = 2;

std::string StatusName(CublasStatus status) {
  switch (status) {
    case 0:
      return "CUBLAS_STATUS_SUCCESS";
    case 1:
      return "CUBLAS_STATUS_NOT_INITIALIZED";
    case 3:
      return "CUBLAS_STATUS_ALLOC_FAILED";
    case 7:
      return "CUBLAS_STATUS_INVALID_VALUE";
    case 8:
      return "CUBLAS_STATUS_ARCH_MISMATCH";
    case 11:
      return "CUBLAS_STATUS_MAPPING_ERROR";
    case 13:
      return "CUBLAS_STATUS_EXECUTION_FAILED";
    case 14:
      return "CUBLAS_STATUS_INTERNAL_ERROR";
    case 15:
      return "CUBLAS_STATUS_NOT_SUPPORTED";
    case 16:
      return "CUBLAS_STATUS_LICENSE_ERROR";
    default:
      return absl::StrCat("cublasStatus_t ", status);
  }
}

// `call` (the function and what it was asked) failed with `status`.
absl::Status Error(CublasStatus status, absl::string_view call) {
  std::string message = absl::StrCat(call, ": ", StatusName(status));
  switch (status) {
    case 1:  // NOT_INITIALIZED: no usable driver or device
      return absl::UnavailableError(message);
    case 3:  // ALLOC_FAILED
      return absl::ResourceExhaustedError(message);
    case 7:  // INVALID_VALUE
      return absl::InvalidArgumentError(message);
    case 8:   // ARCH_MISMATCH
    case 15:  // NOT_SUPPORTED
      return absl::UnimplementedError(message);
    default:
      return absl::InternalError(message);
  }
}

// The slice of cuBLAS's C API Seam calls.
struct Cublas {
  void* handle = nullptr;
  absl::Status status;  // why it cannot be used
  CublasStatus (*get_property)(int, int*) = nullptr;
  CublasStatus (*create)(BlasHandle*) = nullptr;
  CublasStatus (*destroy)(BlasHandle) = nullptr;
  CublasStatus (*gemm_strided_batched_ex)(BlasHandle, int transa, int transb, int m, int n, int k,
                                          const void* alpha, const void* a, int a_type, int lda,
                                          long long stride_a, const void* b, int b_type, int ldb,
                                          long long stride_b, const void* beta, void* c, int c_type,
                                          int ldc, long long stride_c, int batch, int compute_type,
                                          int algo) = nullptr;
};

Cublas OpenCublas() {
  Cublas c;
  absl::StatusOr<void*> handle = OpenCudaLibrary(
      "cuBLAS", {"libcublas.so.13", "libcublas.so.12", "libcublas.so"}, "libcublas.so");
  if (!handle.ok()) {
    c.status = handle.status();
    return c;
  }
  c.handle = *handle;
  std::string missing;
  auto bind = [&](auto& f, const char* name) {
    f = reinterpret_cast<std::remove_reference_t<decltype(f)>>(dlsym(c.handle, name));
    if (f == nullptr && missing.empty()) missing = name;
  };
  bind(c.get_property, "cublasGetProperty");
  bind(c.create, "cublasCreate_v2");
  bind(c.destroy, "cublasDestroy_v2");
  bind(c.gemm_strided_batched_ex, "cublasGemmStridedBatchedEx");
  if (!missing.empty()) {
    c.status = absl::UnavailableError(
        absl::StrCat("the cuBLAS library found lacks ", missing, " (older than CUDA 11?)"));
  }
  return c;
}

// Opened on first use; never closed.
const Cublas& Library() {
  static const Cublas* library = new Cublas(OpenCublas());
  return *library;
}

void* Address(DevicePointer p) { return reinterpret_cast<void*>(static_cast<uintptr_t>(p)); }

}  // namespace

absl::StatusOr<std::string> CublasVersion() {
  const Cublas& c = Library();
  if (!c.status.ok()) return c.status;
  int parts[3] = {};
  for (int property : {kMajorVersion, kMinorVersion, kPatchLevel}) {
    if (CublasStatus rc = c.get_property(property, &parts[property]); rc != kSuccess) {
      return Error(rc, "cublasGetProperty");
    }
  }
  return absl::StrCat(parts[0], ".", parts[1], ".", parts[2]);
}

absl::StatusOr<std::unique_ptr<Blas>> Blas::Create(Context& context) {
  const Cublas& c = Library();
  if (!c.status.ok()) return c.status;
  SEAM_RETURN_IF_ERROR(context.MakeCurrent());  // the handle belongs to the current context
  BlasHandle handle = nullptr;
  if (CublasStatus rc = c.create(&handle); rc != kSuccess) return Error(rc, "cublasCreate");
  return std::unique_ptr<Blas>(new Blas(context, handle));
}

Blas::~Blas() {
  if (context_.MakeCurrent().ok()) Library().destroy(handle_);
}

absl::Status Blas::Gemm(const GemmShape& shape, DevicePointer a, DevicePointer b, DevicePointer c) {
  // Built only for an error: Gemm may run in a loop.
  auto call = [&shape] {
    return absl::StrCat("cublasGemmStridedBatchedEx(", DTypeName(shape.dtype), ", batch ",
                        shape.batch, ", m ", shape.m, ", n ", shape.n, ", k ", shape.k,
                        shape.transpose_a ? ", A transposed" : "",
                        shape.transpose_b ? ", B transposed" : "", ")");
  };
  // cudaDataType of A and B (`dtype`) and of C (`output_dtype`, or dtype).
  auto data_type_of = [](DType t) -> int {
    switch (t) {
      case DType::kF32: return kDataF32;
      case DType::kF16: return kDataF16;
      case DType::kBF16: return kDataBF16;
      case DType::kF64: return kDataF64;
      default: return -1;
    }
  };
  const DType output = shape.output_dtype.value_or(shape.dtype);
  const int data_type = data_type_of(shape.dtype), c_type = data_type_of(output);
  bool half_to_f32 = (shape.dtype == DType::kF16 || shape.dtype == DType::kBF16) && output == DType::kF32;
  if (data_type < 0 || c_type < 0 || (output != shape.dtype && !half_to_f32)) {
    return absl::InvalidArgumentError(absl::StrCat(
        call(), ": cuBLAS multiplies f32, f16, bf16 and f64 into the same type, or f16 and bf16 into f32"));
  }
  for (int64_t extent : {shape.batch, shape.m, shape.n, shape.k}) {
    if (extent < 1 || extent > INT_MAX) {
      return absl::InvalidArgumentError(
          absl::StrCat(call(), ": extents must be between 1 and ", INT_MAX));
    }
  }
  if (shape.stride_a < 0 || shape.stride_b < 0) {
    return absl::InvalidArgumentError(absl::StrCat(call(), ": negative batch stride"));
  }
  const int64_t dense_c = shape.m * shape.n;
  if (shape.stride_c != 0 && shape.stride_c < dense_c) {
    return absl::InvalidArgumentError(
        absl::StrCat(call(), ": C's batch stride ", shape.stride_c, " is below m*n = ", dense_c));
  }
  // cuBLAS is column-major, and a row-major r×c matrix with rows `ld`
  // elements apart is, to cuBLAS, the column-major c×r matrix — its
  // transpose — with leading dimension `ld`. So cuBLAS computes
  // Cᵀ = op(B)ᵀ·op(A)ᵀ: its first operand is our B, its second our A, its
  // (m, n, k) our (n, m, k), and each operand's op is our transpose flag.
  // Leading dimensions (the row length of the row-major storage):
  //   B stored k×n: ldb = n (op N);  stored n×k (transpose_b): ldb = k (op T)
  //   A stored m×k: lda = k (op N);  stored k×m (transpose_a): lda = m (op T)
  //   C stored m×n: ldc = n.
  auto m = static_cast<int>(shape.m), n = static_cast<int>(shape.n), k = static_cast<int>(shape.k);
  int lda = shape.transpose_a ? m : k;
  int ldb = shape.transpose_b ? k : n;
  int ldc = n;
  long long stride_c = shape.stride_c != 0 ? shape.stride_c : dense_c;
  // Scale factors in the compute type: f32 for f32/f16/bf16, f64 for f64.
  const float one_f32 = 1, zero_f32 = 0;
  const double one_f64 = 1, zero_f64 = 0;
  bool f64 = shape.dtype == DType::kF64;
  const void* alpha = f64 ? static_cast<const void*>(&one_f64) : &one_f32;
  const void* beta = f64 ? static_cast<const void*>(&zero_f64) : &zero_f32;
  SEAM_RETURN_IF_ERROR(context_.MakeCurrent());
  CublasStatus rc = Library().gemm_strided_batched_ex(
      handle_, shape.transpose_b ? kOpT : kOpN, shape.transpose_a ? kOpT : kOpN, n, m, k, alpha,
      Address(b), data_type, ldb, shape.stride_b, Address(a), data_type, lda, shape.stride_a, beta,
      Address(c), c_type, ldc, stride_c, static_cast<int>(shape.batch),
      f64 ? kCompute64F : kCompute32F, kGemmDefault);
  if (rc != kSuccess) return Error(rc, call());
  return absl::OkStatus();
}

}  // namespace seam::runtime::cuda
