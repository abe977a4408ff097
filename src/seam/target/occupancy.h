// How many blocks of a compiled GPU kernel an SM holds at once, from what
// the compiler reports it uses (registers per thread, shared memory per
// block) and the SM's limits (CUDA's occupancy rules: registers allocated
// per warp in 256-register units, at most 32 blocks and 64 warps per SM).
// This is the resource feedback of AStitch's assume-relax-apply: plans
// assume a mapping's blocks fit; the compiled kernel says how many do.
#pragma once

#include <cstdint>

#include "seam/target/device_spec.h"

namespace seam::target {

struct KernelResources {
  int64_t registers = 0;             // per thread
  int64_t static_shared_bytes = 0;   // __shared__ arrays the compiler placed
  int64_t dynamic_shared_bytes = 0;  // tile buffers sized at launch
  int64_t spill_bytes = 0;           // spill stores + loads: registers that did not fit
  int64_t stack_bytes = 0;
};

// Resident blocks per SM of a kernel run with `threads` threads per block;
// 0 when one block does not fit at all.
int64_t ResidentBlocksPerUnit(const DeviceSpec& device, int64_t threads,
                              const KernelResources& resources);

// The most registers a thread may use when blocks of `threads` threads
// must fit on an SM at least once (what __launch_bounds__(threads) lets
// the compiler assume): at this cap, more live values spill.
int64_t RegisterCap(const DeviceSpec& device, int64_t threads);

}  // namespace seam::target
