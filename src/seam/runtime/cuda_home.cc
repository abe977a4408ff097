#include "seam/runtime/cuda_home.h"

#include <dlfcn.h>

#include <cstdlib>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace seam::runtime {

std::string CudaHome() {
  for (const char* name : {"SEAM_CUDA_HOME", "CUDA_HOME", "CUDA_PATH"}) {
    if (const char* v = std::getenv(name); v != nullptr && *v != '\0') return v;
  }
  return "/usr/local/cuda";
}

absl::StatusOr<void*> OpenCudaLibrary(const std::string& what,
                                      std::initializer_list<const char*> sonames,
                                      const std::string& file) {
  std::vector<std::string> candidates(sonames.begin(), sonames.end());
  for (const char* dir : {"/lib64/", "/targets/x86_64-linux/lib/", "/targets/sbsa-linux/lib/"}) {
    candidates.push_back(absl::StrCat(CudaHome(), dir, file));
  }
  for (const std::string& candidate : candidates) {
    if (void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL)) return handle;
  }
  return absl::UnavailableError(absl::StrCat(what, " not found (tried ", absl::StrJoin(candidates, ", "),
                                             "); install the CUDA toolkit or set SEAM_CUDA_HOME"));
}

}  // namespace seam::runtime
