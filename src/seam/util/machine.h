// What the machine gives this process: CPUs and memory.
#pragma once

#include <cstdint>

namespace seam {

// How many threads Seam runs on: the CPUs the process may use (its
// affinity mask, as taskset, cgroup cpusets and numactl leave it), or
// $SEAM_NUM_THREADS when set. The thread pool and the CPU cost model both
// read it, so plans are made for the threads that will run them.
int UsableCpus();

// Memory the process could still take without swapping (the kernel's
// MemAvailable estimate), in bytes; 0 when unknown.
int64_t AvailableMemoryBytes();

}  // namespace seam
