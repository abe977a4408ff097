// Where the CUDA toolkit lives, and opening its libraries at run time:
// $SEAM_CUDA_HOME, $CUDA_HOME, $CUDA_PATH, else /usr/local/cuda.
#pragma once

#include <initializer_list>
#include <string>

#include "absl/status/statusor.h"

namespace seam::runtime {

std::string CudaHome();

// dlopen of the first of `sonames` the loader finds, else of `file` in
// CudaHome()'s library folders. Unavailable, listing every place tried and
// how to point Seam at CUDA, when none opens. `what` names the library.
absl::StatusOr<void*> OpenCudaLibrary(const std::string& what,
                                      std::initializer_list<const char*> sonames,
                                      const std::string& file);

}  // namespace seam::runtime
