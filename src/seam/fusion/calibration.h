// Checking the cost model against measured kernel times, and fitting the
// host CPU's constants to them: DRAM bandwidth from the measured copy,
// then the compute rate, the parallel-region overhead and the grid
// barrier by a search that minimizes the squared log error. A kernel's
// estimate depends on the device only through EstimateTimeUs, so its plan's
// Cost is re-estimated under each candidate without planning again.
#pragma once

#include <vector>

#include "seam/fusion/cost_model.h"
#include "seam/fusion/fusion_plan.h"
#include "seam/target/device_spec.h"

namespace seam::fusion {

struct KernelSample {
  Cost cost;           // the plan's cost of the kernel (bytes, flops, launches...)
  double measured_us;  // its measured time per launch
};

struct ModelAccuracy {
  double rank_correlation = 0;       // Spearman, estimate vs measured
  double median_abs_log2_error = 0;  // |log2(estimate / measured)|, median
  double rms_log2_error = 0;         // what the calibration minimizes
  int samples = 0;
};

ModelAccuracy Accuracy(const std::vector<KernelSample>& samples, const target::DeviceSpec& device);

// Spearman's rank correlation of two equally long series (ties share ranks).
double SpearmanRankCorrelation(const std::vector<double>& a, const std::vector<double>& b);

// `base` refitted to `samples`: first the measured copy bandwidth as DRAM
// bandwidth (the cache's scaled with it) when that fits better, then each of
// DRAM and cache bandwidth, compute rate, parallel-region overhead and grid
// barrier scaled in turn while the squared log error falls. Never fits
// worse than `base`.
target::DeviceSpec Calibrate(const target::DeviceSpec& base,
                             const std::vector<KernelSample>& samples, double copy_gbps);

}  // namespace seam::fusion
