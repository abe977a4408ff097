// Fusion plans of every corpus module after the default pipeline: per
// strategy the memory-intensive kernels (stitched kernels plus ops run on
// their own), the estimated DRAM traffic, and the planning time (median of
// N runs); then stitch/xla ratios. Kernel counts are what the papers
// compare (AStitch: -65.7% launches against XLA).
// Usage: seam_plan_bench [--repeat N] [--device cpu|h100|a100] [FILE...];
// default: every file in tests/corpus/hlo on an h100.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_util.h"
#include "seam/fusion/planner.h"
#include "seam/passes/pipeline.h"
#include "seam/text/parser.h"

namespace {

struct Column {
  const char* name;
  seam::fusion::Strategy strategy;
  const char* explorer;
};

}  // namespace

int main(int argc, char** argv) {
  int repeat = 3;
  std::string device_name = "h100";
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--repeat" && i + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--device" && i + 1 < argc) {
      device_name = argv[++i];
    } else {
      paths.push_back(arg);
    }
  }
  if (paths.empty()) paths = seam::bench::CorpusFiles();
  absl::StatusOr<seam::target::DeviceSpec> device = seam::target::DeviceSpecByName(device_name);
  if (!device.ok()) seam::bench::Die(device.status());
  const std::vector<Column> columns = {{"none", seam::fusion::Strategy::kNone, "astitch"},
                                       {"xla", seam::fusion::Strategy::kXla, "astitch"},
                                       {"stitch", seam::fusion::Strategy::kStitch, "astitch"},
                                       {"beam", seam::fusion::Strategy::kStitch, "beam"}};
  std::printf("device: %s; kernels = memory-intensive kernels; MB = estimated DRAM traffic\n",
              device->name.c_str());
  std::printf("%-40s", "module");
  for (const Column& c : columns) std::printf(" %7s %8s %7s", c.name, "MB", "plan ms");
  std::printf(" %8s %8s\n", "st/xla k", "st/xla B");
  absl::StatusOr<seam::Pipeline> pipeline = seam::Pipeline::Parse("default");
  for (const std::string& path : paths) {
    absl::StatusOr<std::vector<std::unique_ptr<seam::Module>>> modules = seam::ParseHloFile(path);
    if (!modules.ok()) seam::bench::Die(modules.status());
    for (auto& module : *modules) {
      if (absl::StatusOr<bool> changed = pipeline->Run(*module); !changed.ok()) {
        seam::bench::Die(changed.status());
      }
    }
    std::string name = path.substr(path.rfind('/') + 1);
    std::printf("%-40s", name.substr(0, 40).c_str());
    double kernels[4] = {}, bytes[4] = {};
    for (size_t c = 0; c < columns.size(); ++c) {
      seam::fusion::PlanOptions options;
      options.strategy = columns[c].strategy;
      options.explorer = columns[c].explorer;
      options.device = *device;
      std::vector<double> ms;
      for (int r = 0; r < repeat; ++r) {
        kernels[c] = bytes[c] = 0;
        auto start = std::chrono::steady_clock::now();
        for (auto& module : *modules) {
          absl::StatusOr<seam::fusion::FusionPlan> plan = seam::fusion::PlanModule(*module, options);
          if (!plan.ok()) seam::bench::Die(plan.status());
          seam::fusion::PlanTotals t = plan->Totals();
          kernels[c] += static_cast<double>(t.MemoryIntensiveKernels());
          bytes[c] += t.cost.dram_bytes();
        }
        ms.push_back(std::chrono::duration<double, std::milli>(
                         std::chrono::steady_clock::now() - start).count());
      }
      std::sort(ms.begin(), ms.end());
      std::printf(" %7.0f %8.1f %7.1f", kernels[c], bytes[c] / 1e6, ms[ms.size() / 2]);
    }
    std::printf(" %8.2f %8.2f\n", kernels[1] > 0 ? kernels[2] / kernels[1] : 0.0,
                bytes[1] > 0 ? bytes[2] / bytes[1] : 0.0);
  }
  return 0;
}
