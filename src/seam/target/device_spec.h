// The machine a plan is made for: the numbers the thread mapping and the
// cost model reason with. GPUs come from their data sheets; the host CPU is
// read from the system (cores, caches), with its DRAM bandwidth configured
// (SEAM_CPU_BANDWIDTH_GBPS) until a benchmark measures it.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace seam::target {

enum class DeviceKind : uint8_t { kCpu, kGpu };

struct DeviceSpec {
  std::string name;
  DeviceKind kind = DeviceKind::kCpu;
  // Parallel units: CPU cores or GPU streaming multiprocessors.
  int64_t units = 1;
  // GPU: resident blocks per SM when registers and shared memory allow,
  // threads per block and per SM, registers per SM. CPU: one "block" (a
  // tile of rows) per core at a time.
  int64_t max_blocks_per_unit = 1;
  int64_t max_threads_per_block = 1;
  int64_t max_threads_per_unit = 1;
  int64_t registers_per_unit = 0;
  // On-chip memory a block may use for regional values: shared memory per
  // block on a GPU; on a CPU, the share of the per-core cache a tile buffer
  // may take without evicting the tile's inputs.
  int64_t onchip_bytes_per_block = 0;
  int64_t onchip_bytes_per_unit = 0;
  int64_t last_level_cache_bytes = 0;
  // Bytes of one vector access (128-bit loads on GPUs, the SIMD width on CPUs).
  int64_t vector_bytes = 16;
  double dram_gbps = 0;            // DRAM (HBM) bandwidth
  double cache_gbps = 0;           // L2 bandwidth: where global-scheme values live
  double flops_per_ns = 0;         // simple fp32 ops, whole device
  double transcendental_cost = 8;  // in simple-op units: exp, log, tanh...
  double division_cost = 2;        // divide, sqrt, rsqrt
  double launch_us = 0;            // a kernel launch (GPU) or a parallel region (CPU)
  double block_barrier_us = 0;     // __syncthreads (GPU); nothing on a CPU tile
  double grid_barrier_us = 0;      // a grid-wide barrier inside a kernel

  bool is_gpu() const { return kind == DeviceKind::kGpu; }
  // Blocks that run at once: a grid barrier needs all of its blocks resident.
  int64_t BlocksPerWave() const { return units * max_blocks_per_unit; }
};

DeviceSpec H100Spec();
DeviceSpec A100Spec();
// The machine Seam runs on: cores and cache sizes from the system; the
// bandwidth and time constants fitted by `seam bench --calibrate` when
// SEAM_CPU_CALIBRATION names their file.
DeviceSpec HostCpuSpec();

// "cpu", "h100" or "a100".
absl::StatusOr<DeviceSpec> DeviceSpecByName(absl::string_view name);

}  // namespace seam::target
