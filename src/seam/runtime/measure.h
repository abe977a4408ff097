// Measuring for benchmarks: medians of repeated runs after a warm-up, and
// the machine's copy bandwidth, taken with the kernels' compiler and flags
// so that "fraction of copy bandwidth" compares like with like.
#pragma once

#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "seam/runtime/cuda_driver.h"

namespace seam::runtime {

struct Timing {
  double median_s = 0;
  double min_s = 0;
  double max_s = 0;
  int runs = 0;
};

// The median, least and most of `seconds` (at least one).
Timing Summarize(std::vector<double> seconds);

// Runs `run` `warm_ups` times untimed (first touch, thread pool), then
// `repeat` times, timing each.
Timing TimeRuns(const std::function<void()>& run, int repeat, int warm_ups = 1);

// Bytes read plus bytes written per second by an OpenMP copy loop over
// 256 MiB (past every cache), compiled through the JIT; the median of
// `repeat` runs, in GB/s (1e9 bytes).
absl::StatusOr<double> CopyBandwidthGBps(int repeat);

// The same on a GPU: a device-to-device copy of 1 GiB (past the L2), timed
// by the device's events.
absl::StatusOr<double> DeviceCopyBandwidthGBps(cuda::Context& context, int repeat);

}  // namespace seam::runtime
