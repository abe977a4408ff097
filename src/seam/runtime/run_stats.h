// What an executable ran and how: counted once from its programs when it
// is built, and from its runs as they go, the same way on every backend.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "seam/runtime/program.h"

namespace seam::runtime {

// Where a run's time went, summed over runs (with profile_steps): generated
// kernels, generated single-instruction kernels, library calls (BLAS), the
// interpreter, and the rest (constants, tuples, copies).
struct StepTimes {
  double kernels = 0, op_kernels = 0, library = 0, interpreter = 0, other = 0;
};

struct ExecutableStats {
  int64_t compiled_kernels = 0;  // kernel steps running compiled code
  int64_t op_kernels = 0;        // single instructions running generated code (gather, scatter...)
  int64_t distinct_kernels = 0;  // functions in the shared object (identical kernels share one)
  int64_t aliases = 0;           // reshapes that move no data
  int64_t blas_calls = 0;        // dots and convolutions served by BLAS (static count)
  int64_t epilogues = 0;         // of those, calls running their consumers as an epilogue
  // Dynamic-update-slices and scatters that wrote into their dead operand
  // instead of a copy, over all runs so far.
  int64_t in_place_updates = 0;
  // Everything the interpreter runs instead, as "name (opcode): why".
  std::vector<std::string> fallbacks;
  // Bytes a run holds at once: estimated from the schedule before any run
  // (Compile refuses a module the machine's available memory cannot
  // hold), and measured over the runs so far (arguments, constants and
  // the executable's own buffers; memory the interpreter allocates is not
  // counted).
  double estimated_peak_bytes = 0;
  double peak_bytes = 0;
  StepTimes time;  // with ExecutableOptions::profile_steps
  double codegen_seconds = 0;
  double compile_seconds = 0;  // C++ compiler, NVRTC, or cache lookup on a hit
  bool cache_hit = false;
  std::string shared_object;  // or the cubin

  // The static counts of `programs` (what runs how), fallbacks moved out.
  void CountPrograms(Programs& programs);
  // A step's time by what ran it; a control-flow step's time is its
  // steps', counted as they run.
  void CountTime(const Step& step, double seconds);
};

}  // namespace seam::runtime
