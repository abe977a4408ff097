#include "seam/runtime/openblas.h"

#include <dlfcn.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "seam/runtime/scoped_environment.h"

namespace seam::runtime {
namespace {

// The kernels OpenBLAS should use on this CPU, by the instructions it has:
// its own detection reads the CPU model, which virtual machines hide (it
// took one for a Prescott and ran sgemm at a fifth of the SkylakeX
// kernels' speed), and a user's environment may force a core type.
const char* CoreTypeForThisCpu() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")) {
    return __builtin_cpu_supports("avx512bf16") ? "Cooperlake" : "SkylakeX";
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
#endif
  return nullptr;  // OpenBLAS's own choice
}

// Opens `path` single-threaded, with the kernels for this CPU.
void* OpenForSeam(const char* path) {
  ScopedEnvironment environment;
  environment.Set("OPENBLAS_NUM_THREADS", "1");
  if (const char* core = CoreTypeForThisCpu()) environment.Set("OPENBLAS_CORETYPE", core);
  return dlopen(path, RTLD_NOW | RTLD_LOCAL);
}

absl::StatusOr<OpenBlas> Open() {
  // The build's own OpenBLAS first, then whichever the loader finds.
  const char* candidates[] = {SEAM_OPENBLAS_LIBRARY, "libopenblas.so.0"};
  void* handle = nullptr;
  for (const char* path : candidates) {
    if ((handle = OpenForSeam(path)) != nullptr) break;
  }
  if (handle == nullptr) {
    return absl::UnavailableError(absl::StrCat("cannot open OpenBLAS (tried ", SEAM_OPENBLAS_LIBRARY,
                                               " and libopenblas.so.0): ", dlerror()));
  }
  OpenBlas blas;
  blas.sgemm = reinterpret_cast<decltype(blas.sgemm)>(dlsym(handle, "cblas_sgemm"));
  blas.dgemm = reinterpret_cast<decltype(blas.dgemm)>(dlsym(handle, "cblas_dgemm"));
  auto set_threads = reinterpret_cast<void (*)(int)>(dlsym(handle, "openblas_set_num_threads"));
  auto parallel = reinterpret_cast<int (*)()>(dlsym(handle, "openblas_get_parallel"));
  if (blas.sgemm == nullptr || blas.dgemm == nullptr) {
    return absl::UnavailableError("the OpenBLAS found has no cblas_sgemm / cblas_dgemm");
  }
  // Loaded before (under the same soname) with threads of its own: one.
  if (set_threads != nullptr) set_threads(1);
  // 0: built without threads, hence without the locks concurrent callers need.
  blas.reentrant = parallel != nullptr && parallel() != 0;
  return blas;
}

}  // namespace

std::mutex& SerialBlasCalls() {
  static std::mutex calls;
  return calls;
}

absl::StatusOr<const OpenBlas*> LoadOpenBlas() {
  static const absl::StatusOr<OpenBlas> blas = Open();
  if (!blas.ok()) return blas.status();
  return &*blas;
}

}  // namespace seam::runtime
