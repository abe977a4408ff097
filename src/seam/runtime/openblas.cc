#include "seam/runtime/openblas.h"

#include <dlfcn.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"

namespace seam::runtime {
namespace {

// Opens `path` with OPENBLAS_NUM_THREADS=1 (read once, when the library
// initializes), then puts the variable back as it was.
void* OpenSingleThreaded(const char* path) {
  const char* previous = std::getenv("OPENBLAS_NUM_THREADS");
  std::optional<std::string> saved;
  if (previous != nullptr) saved = previous;
  setenv("OPENBLAS_NUM_THREADS", "1", 1);
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (saved.has_value()) {
    setenv("OPENBLAS_NUM_THREADS", saved->c_str(), 1);
  } else {
    unsetenv("OPENBLAS_NUM_THREADS");
  }
  return handle;
}

absl::StatusOr<OpenBlas> Open() {
  // The build's own OpenBLAS first, then whichever the loader finds.
  const char* candidates[] = {SEAM_OPENBLAS_LIBRARY, "libopenblas.so.0"};
  void* handle = nullptr;
  for (const char* path : candidates) {
    if ((handle = OpenSingleThreaded(path)) != nullptr) break;
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
