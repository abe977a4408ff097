// The cost model: per kernel, DRAM bytes read and written (counting inputs
// re-read by later stages unless their tile stays on chip), scratch traffic
// of global-scheme values, arithmetic with transcendentals weighted, launch
// and grid-barrier overheads, and the fraction of the device kept busy; time
// is the slower of memory and arithmetic, divided by that fraction, plus
// overheads. The constants live in DeviceSpec so measurements can calibrate
// them.
#pragma once

#include "seam/fusion/fusion_plan.h"
#include "seam/target/device_spec.h"

namespace seam::fusion {

// Bytes of an array value (0 for tokens; tuples sum their elements).
int64_t ValueBytes(const Shape& shape);

// How a compiled GPU kernel actually launches: its block size and the
// blocks an SM holds at once given its registers and shared memory
// (CUDA's occupancy rules).
struct CompiledLaunch {
  int64_t threads_per_block = 0;
  int64_t resident_blocks_per_unit = 0;
};

// The cost of `kernel`, whose groups, edges and mappings are known. With
// `launch` (resource feedback from the compiler), the threads in flight
// are what the compiled kernel can keep resident, not what its mappings
// assumed.
Cost EstimateKernelCost(const Kernel& kernel, const target::DeviceSpec& device,
                        const CompiledLaunch* launch = nullptr);

// An op run on its own: a library call (dot, convolution: arithmetic from
// its shapes) or a memory-intensive op Seam does not stitch.
Cost EstimateStandaloneCost(const Instruction& op, const target::DeviceSpec& device);

// What the interpreter takes for `op` where no generated code or library
// serves it: per element it reads and writes, and per application of a
// computation it calls (a reducer, select, scatter or comparator), at the
// interpreter's speed, not the device's.
double EstimateInterpretedTimeUs(const Instruction& op);

// Multiply-adds counted as two flops: a dot's output elements times its
// contracted size, a convolution's output elements times its window over
// the input features of one group. 0 for every other op.
double LibraryFlops(const Instruction& op);

// Seconds-free arithmetic: the time of a kernel moving `bytes` and doing
// `flops` with `parallelism`, launches and barriers included.
double EstimateTimeUs(const Cost& cost, const target::DeviceSpec& device);

}  // namespace seam::fusion
