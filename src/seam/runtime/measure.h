// Measuring for benchmarks: medians of repeated runs after a warm-up, and
// the machine's copy bandwidth, taken with the kernels' compiler and flags
// so that "fraction of copy bandwidth" compares like with like.
#pragma once

#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
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

// One contestant of an interleaved timing: runs once and says how many
// seconds that took (by the wall clock, or a device's events).
using TimedRun = std::function<absl::StatusOr<double>()>;

// `run` timed by the wall clock.
TimedRun WallClock(std::function<absl::Status()> run);

// Times each of `runs` `repeat` times in rounds: every round runs each once,
// the first of them rotating from round to round, so that the slow spells
// of a shared machine fall on all of them alike rather than on whichever
// was being timed then. No warm-up: the caller's. seconds[run][round].
absl::StatusOr<std::vector<std::vector<double>>> TimeInterleaved(absl::Span<const TimedRun> runs,
                                                                 int repeat);

// The median over rounds of slower[k] / faster[k]: a speed-up taken within
// each round (both of one TimeInterleaved call), steadier on a noisy
// machine than the ratio of two medians. 0 when there is no round.
double MedianRatio(const std::vector<double>& slower, const std::vector<double>& faster);

// Bytes read plus bytes written per second by a copy loop on Seam's pool over
// 256 MiB (past every cache), compiled through the JIT; the median of
// `repeat` runs, in GB/s (1e9 bytes).
absl::StatusOr<double> CopyBandwidthGBps(int repeat);

// The same on a GPU: a device-to-device copy of 1 GiB (past the L2), timed
// by the device's events.
absl::StatusOr<double> DeviceCopyBandwidthGBps(cuda::Context& context, int repeat);

}  // namespace seam::runtime
