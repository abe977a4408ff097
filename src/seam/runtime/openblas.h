// OpenBLAS, opened at run time and kept to one thread: Seam's pool splits
// the work and calls it from several threads at once. The threaded build
// (Debian's default) is the one that allows that: its calls are locked
// where they share state, and it is opened with OPENBLAS_NUM_THREADS=1 so
// that it starts no threads of its own to spin beside the pool's, and with
// the kernels for the instructions this CPU has (OPENBLAS_CORETYPE,
// whatever the user's environment says). A single-threaded build without
// locking, if that is what the system has, takes one call at a time.
#pragma once

#include <cblas.h>

#include <mutex>

#include "absl/status/statusor.h"

namespace seam::runtime {

struct OpenBlas {
  decltype(&cblas_sgemm) sgemm = nullptr;
  decltype(&cblas_dgemm) dgemm = nullptr;
  // Concurrent calls are safe (else each call holds serial_calls).
  bool reentrant = false;
};

// Held around every call to an OpenBlas that is not reentrant.
std::mutex& SerialBlasCalls();

// The library, opened on first use; Unavailable, saying what was tried,
// when it does not open.
absl::StatusOr<const OpenBlas*> LoadOpenBlas();

}  // namespace seam::runtime
