// The cost model's calibration: Spearman's rank correlation, and a fit
// that recovers a machine's constants from kernel times it generated, and
// never fits worse than where it started.
#include "seam/fusion/calibration.h"

#include <random>

#include "gtest/gtest.h"

namespace seam::fusion {
namespace {

TEST(Calibration, RankCorrelationOfOrderedReversedAndTiedSeries) {
  EXPECT_DOUBLE_EQ(SpearmanRankCorrelation({1, 2, 3, 4}, {10, 20, 30, 400}), 1.0);
  EXPECT_DOUBLE_EQ(SpearmanRankCorrelation({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
  // Ties share their mean rank: ranks (1.5, 1.5, 3) against (1, 2, 3).
  EXPECT_NEAR(SpearmanRankCorrelation({5, 5, 7}, {1, 2, 3}), 0.8660254, 1e-6);
  EXPECT_EQ(SpearmanRankCorrelation({1}, {2}), 0.0);
}

// Kernels of every kind: memory-bound, compute-bound, tiny (launch-bound)
// and with grid barriers.
std::vector<Cost> Kernels() {
  std::vector<Cost> costs;
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> log_bytes(10, 28), log_flops(10, 30);
  for (int i = 0; i < 60; ++i) {
    Cost c;
    c.dram_read_bytes = std::exp2(log_bytes(rng));
    c.dram_write_bytes = c.dram_read_bytes / 2;
    c.flops = std::exp2(log_flops(rng));
    c.launches = 1;
    c.grid_barriers = i % 3;
    costs.push_back(c);
  }
  return costs;
}

TEST(Calibration, RecoversTheConstantsThatMadeTheTimes) {
  target::DeviceSpec truth = target::HostCpuSpec();
  truth.dram_gbps = 31;
  truth.flops_per_ns = 9;
  truth.launch_us = 6;
  truth.grid_barrier_us = 1.5;
  std::vector<KernelSample> samples;
  for (const Cost& c : Kernels()) samples.push_back({c, EstimateTimeUs(c, truth)});
  target::DeviceSpec start = target::HostCpuSpec();
  start.dram_gbps = 20;
  start.flops_per_ns = 40;
  start.launch_us = 2;
  start.grid_barrier_us = 0.5;
  ModelAccuracy before = Accuracy(samples, start);
  target::DeviceSpec fitted = Calibrate(start, samples, /*copy_gbps=*/31);
  ModelAccuracy after = Accuracy(samples, fitted);
  EXPECT_NEAR(fitted.dram_gbps, 31, 31 * 0.15);  // near the measured copy
  EXPECT_LT(after.rms_log2_error, before.rms_log2_error / 4);
  EXPECT_GE(after.rank_correlation, before.rank_correlation);
  EXPECT_NEAR(fitted.flops_per_ns, 9, 9 * 0.3);
}

TEST(Calibration, NeverFitsWorseThanItsStart) {
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> noise(0.2, 5);
  std::vector<KernelSample> samples;
  target::DeviceSpec start = target::HostCpuSpec();
  for (const Cost& c : Kernels()) samples.push_back({c, EstimateTimeUs(c, start) * noise(rng)});
  target::DeviceSpec fitted = Calibrate(start, samples, /*copy_gbps=*/3);
  EXPECT_LE(Accuracy(samples, fitted).rms_log2_error, Accuracy(samples, start).rms_log2_error);
}

}  // namespace
}  // namespace seam::fusion
