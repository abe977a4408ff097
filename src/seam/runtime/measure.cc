#include "seam/runtime/measure.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "seam/codegen/prelude.h"
#include "seam/runtime/jit.h"
#include "seam/runtime/thread_pool.h"
#include "seam/util/status_macros.h"

namespace seam::runtime {

Timing TimeRuns(const std::function<void()>& run, int repeat, int warm_ups) {
  for (int i = 0; i < warm_ups; ++i) run();
  std::vector<double> seconds;
  for (int i = 0; i < std::max(1, repeat); ++i) {
    auto start = std::chrono::steady_clock::now();
    run();
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return Summarize(std::move(seconds));
}

TimedRun WallClock(std::function<absl::Status()> run) {
  return [run = std::move(run)]() -> absl::StatusOr<double> {
    auto start = std::chrono::steady_clock::now();
    SEAM_RETURN_IF_ERROR(run());
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
}

absl::StatusOr<std::vector<std::vector<double>>> TimeInterleaved(absl::Span<const TimedRun> runs,
                                                                 int repeat) {
  std::vector<std::vector<double>> seconds(runs.size());
  for (int round = 0; round < std::max(1, repeat); ++round) {
    for (size_t k = 0; k < runs.size(); ++k) {
      size_t which = (k + static_cast<size_t>(round)) % runs.size();
      SEAM_ASSIGN_OR_RETURN(double s, runs[which]());
      seconds[which].push_back(s);
    }
  }
  return seconds;
}

double MedianRatio(const std::vector<double>& slower, const std::vector<double>& faster) {
  std::vector<double> ratios;
  for (size_t k = 0; k < std::min(slower.size(), faster.size()); ++k) {
    if (faster[k] > 0) ratios.push_back(slower[k] / faster[k]);
  }
  if (ratios.empty()) return 0;
  return Summarize(std::move(ratios)).median_s;
}

Timing Summarize(std::vector<double> seconds) {
  std::sort(seconds.begin(), seconds.end());
  return {seconds[seconds.size() / 2], seconds.front(), seconds.back(),
          static_cast<int>(seconds.size())};
}

absl::StatusOr<double> CopyBandwidthGBps(int repeat) {
  const std::string source = codegen::CpuPrelude() + R"(
extern "C" __attribute__((visibility("default"))) void seam_copy(const float* in, float* out, long n,
                                                                const seam_pool* threads) {
  constexpr long kPieces = 256;
  seam_parallel(threads, kPieces, [&](int64_t begin, int64_t end, int) {
    #pragma omp simd
    for (long i = n * begin / kPieces; i < n * end / kPieces; ++i) out[i] = in[i];
  });
}
)";
  SEAM_ASSIGN_OR_RETURN(CompileResult compiled, CompileAndLoad(source));
  SEAM_ASSIGN_OR_RETURN(void* symbol, compiled.object->Symbol("seam_copy"));
  auto copy = reinterpret_cast<void (*)(const float*, float*, long, const seam_pool*)>(symbol);
  const long n = 64L << 20;
  std::vector<float> in(n, 1.0f), out(n, 0.0f);
  const seam_pool* threads = ThreadPool::Global().c_interface();
  Timing t = TimeRuns([&] { copy(in.data(), out.data(), n, threads); }, repeat);
  return 2.0 * n * sizeof(float) / t.median_s / 1e9;
}

absl::StatusOr<double> DeviceCopyBandwidthGBps(cuda::Context& context, int repeat) {
  const int64_t bytes = int64_t{1} << 30;
  SEAM_ASSIGN_OR_RETURN(cuda::DeviceBuffer in, context.Allocate(bytes));
  SEAM_ASSIGN_OR_RETURN(cuda::DeviceBuffer out, context.Allocate(bytes));
  SEAM_RETURN_IF_ERROR(context.Zero(in.ptr(), bytes));
  auto copy = [&] { return context.CopyOnDevice(out.ptr(), in.ptr(), bytes); };
  SEAM_RETURN_IF_ERROR(copy());  // warm-up
  std::vector<double> seconds;
  for (int i = 0; i < std::max(1, repeat); ++i) {
    SEAM_ASSIGN_OR_RETURN(double s, context.ElapsedSeconds(copy));
    seconds.push_back(s);
  }
  return 2.0 * static_cast<double>(bytes) / Summarize(std::move(seconds)).median_s / 1e9;
}

}  // namespace seam::runtime
