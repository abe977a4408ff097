#include "seam/fusion/calibration.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace seam::fusion {
namespace {

// Ranks from 1, ties sharing their mean rank.
std::vector<double> Ranks(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> ranks(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    double mean = (static_cast<double>(i) + static_cast<double>(j)) / 2 + 1;
    for (size_t k = i; k <= j; ++k) ranks[order[k]] = mean;
    i = j + 1;
  }
  return ranks;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double SquaredLogError(const std::vector<KernelSample>& samples, const target::DeviceSpec& device) {
  double sum = 0;
  for (const KernelSample& s : samples) {
    double e = std::log2(std::max(EstimateTimeUs(s.cost, device), 1e-3) /
                         std::max(s.measured_us, 1e-3));
    sum += e * e;
  }
  return sum;
}

}  // namespace

double SpearmanRankCorrelation(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.size() < 2) return 0;
  std::vector<double> ra = Ranks(a), rb = Ranks(b);
  double n = static_cast<double>(a.size());
  double mean = (n + 1) / 2, cov = 0, va = 0, vb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    cov += (ra[i] - mean) * (rb[i] - mean);
    va += (ra[i] - mean) * (ra[i] - mean);
    vb += (rb[i] - mean) * (rb[i] - mean);
  }
  return va > 0 && vb > 0 ? cov / std::sqrt(va * vb) : 0;
}

ModelAccuracy Accuracy(const std::vector<KernelSample>& samples, const target::DeviceSpec& device) {
  std::vector<double> estimated, measured, errors;
  for (const KernelSample& s : samples) {
    estimated.push_back(EstimateTimeUs(s.cost, device));
    measured.push_back(s.measured_us);
    errors.push_back(std::fabs(std::log2(std::max(estimated.back(), 1e-3) /
                                         std::max(s.measured_us, 1e-3))));
  }
  double squares = 0;
  for (double e : errors) squares += e * e;
  return {SpearmanRankCorrelation(estimated, measured), Median(errors),
          samples.empty() ? 0 : std::sqrt(squares / static_cast<double>(samples.size())),
          static_cast<int>(samples.size())};
}

target::DeviceSpec Calibrate(const target::DeviceSpec& base,
                             const std::vector<KernelSample>& samples, double copy_gbps) {
  target::DeviceSpec best = base;
  double best_error = SquaredLogError(samples, best);
  target::DeviceSpec measured = base;
  measured.cache_gbps = base.cache_gbps * copy_gbps / base.dram_gbps;
  measured.dram_gbps = copy_gbps;
  if (double error = SquaredLogError(samples, measured); error < best_error) {
    best = measured;
    best_error = error;
  }
  // Coordinate search over factors of each constant, a few rounds: the
  // error is smooth in each and the constants barely interact.
  const double factors[] = {0.25, 0.5, 0.7, 0.85, 1.2, 1.4, 2, 4};
  for (int round = 0; round < 4; ++round) {
    for (double target::DeviceSpec::*field :
         {&target::DeviceSpec::dram_gbps, &target::DeviceSpec::flops_per_ns,
          &target::DeviceSpec::launch_us, &target::DeviceSpec::grid_barrier_us,
          &target::DeviceSpec::cache_gbps}) {
      target::DeviceSpec start = best;
      for (double f : factors) {
        target::DeviceSpec candidate = start;
        candidate.*field = start.*field * f;
        double error = SquaredLogError(samples, candidate);
        if (error < best_error) {
          best_error = error;
          best = candidate;
        }
      }
    }
  }
  return best;
}

}  // namespace seam::fusion
