// CUDA C++ to PTX through NVRTC, opened at run time (dlopen), so Seam
// builds and runs where CUDA is absent and says so only when asked to
// compile for a GPU. NVRTC needs no GPU. PTX and cubins are cached on disk next to
// the CPU kernels (the CPU JIT cache), keyed by a hash of the source, the NVRTC
// version and the options; entries are published atomically and carry
// their key on their first line, so a corrupted or foreign one is rebuilt.
//
// Where CUDA lives: $SEAM_CUDA_HOME, $CUDA_HOME, $CUDA_PATH, else
// /usr/local/cuda (its include/ and include/cccl/ hold the headers kernels
// include; libnvrtc is tried by its soname first).
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace seam::runtime {

struct NvrtcResult {
  // CompileToPtx: the PTX. CompileToCubin: ptxas' report of what each
  // kernel uses (registers, shared memory, spills), and the cubin.
  std::string text;
  std::string cubin;
  bool cache_hit = false;
  double seconds = 0;  // compiling, or reading the cache
  std::string path;    // the cache entry
};

// Ok when NVRTC could be opened; otherwise why not (Unavailable).
absl::Status NvrtcAvailable();

// "major.minor" of the NVRTC found, e.g. "13.0".
absl::StatusOr<std::string> NvrtcVersion();

// Compiles `source` to PTX for `arch` ("sm_80", "sm_90", ...). An error
// carries NVRTC's log.
absl::StatusOr<NvrtcResult> CompileToPtx(const std::string& source, const std::string& arch);

// Compiles `source` to a cubin for `arch` (a device of that architecture
// loads it without a JIT step), with ptxas reporting what each kernel
// uses. Both are cached like PTX.
absl::StatusOr<NvrtcResult> CompileToCubin(const std::string& source, const std::string& arch);

}  // namespace seam::runtime
