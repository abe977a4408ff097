// CUDA's execution model on the CPU, for the CUDA emulator. Every
// thread of a block is a fiber (Boost.Context) that runs until it reaches
// a barrier or a warp shuffle, where it waits for the threads it
// synchronizes with; the blocks of a cooperative launch are all live at
// once, so that a grid barrier waits for every one of them. Scheduling is
// deterministic (threads in order, each until it waits), so a run repeats
// exactly; what the order could hide, a race, the emulated memory's shadow
// catches.
//
// A launch fails, naming the kernel, the block, the thread and the line of
// the .cu, on: an access out of bounds; a race on global or shared
// memory; a read of memory nothing wrote; a __syncthreads() not every
// thread of the block reaches, or reached at different places (divergent
// control flow); a shuffle a lane of its mask does not reach, or that
// reads a lane outside the mask; a grid barrier in a launch that is not
// cooperative, or that a block does not reach; and a launch asking for
// more threads, shared memory, registers or resident blocks than the
// target has.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "seam/codegen/cuda_sim_abi.h"
#include "seam/runtime/cuda_driver.h"
#include "seam/runtime/cuda_sim_memory.h"

namespace seam::runtime::sim {

// A kernel of a loaded module and what its target allows a launch of it.
struct SimKernel {
  std::string name;
  seam_sim_run_fn run = nullptr;
  int64_t parameters = 0;
  int64_t launch_bounds = 0;  // the most threads per block it was compiled for
  int64_t registers = 0;      // per thread, as ptxas allocated them
  int64_t static_shared_bytes = 0;
  // The target's limits.
  int64_t max_threads_per_block = 1024;
  int64_t shared_bytes_per_block = 0;
  int64_t registers_per_block = 65536;
  // The most blocks of it resident on the whole device at once (a
  // cooperative launch may not ask for more).
  int64_t max_resident_blocks = 0;
};

// Runs one launch of `kernel` to its end (or its first failure). `args`
// holds one pointer per parameter, each to a DevicePointer. `phase` is the
// device's clock (Clock::phase), advanced by the launch.
absl::Status RunLaunch(const SimKernel& kernel, const cuda::LaunchShape& shape, void** args,
                       SimMemory& memory, uint64_t& phase);

// The table compiled modules are bound to (seam_sim_bind).
const seam_sim_runtime& SimRuntime();

}  // namespace seam::runtime::sim
