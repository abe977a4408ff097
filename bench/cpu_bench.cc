// CPU backend speed, side by side in one run: layer norm, softmax and
// RMSNorm over shapes from [4096,768] to [256,65536], f32 and bf16, each
// compiled with the none, xla and stitch strategies. Per case: the median
// time of N runs after warm-up, the three timed in interleaved rounds,
// stitch's speed-up over none and xla (the median of the rounds' ratios), and
// stitch's bytes/s (inputs read once, outputs written once) as a fraction
// of the copy bandwidth measured in the same run by a copy loop on the thread pool
// built with the same compiler and flags as the kernels.
// Usage: seam_cpu_bench [--repeat N] [--quick]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench_util.h"
#include "seam/compiler/cpu_compiler.h"
#include "seam/eval/arguments.h"
#include "seam/runtime/executable.h"
#include "seam/runtime/measure.h"
#include "seam/text/parser.h"

namespace {

using seam::bench::Die;

std::string Reducers(const std::string&) {
  return "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
         "max {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT m = f32[] maximum(a, b)\n}\n";
}

// The three workloads, computed in f32 whatever the storage type (as JAX
// and PyTorch write them for bf16).
std::string LayerNorm(int64_t r, int64_t c, const std::string& t) {
  return absl::StrFormat(R"(HloModule layer_norm
%s
ENTRY e {
  x = %s[%d,%d] parameter(0)
  g = f32[%d] parameter(1)
  b = f32[%d] parameter(2)
  xf = f32[%d,%d] convert(x)
  z = f32[] constant(0)
  n = f32[] constant(%d)
  eps = f32[] constant(1e-5)
  s = f32[%d] reduce(xf, z), dimensions={1}, to_apply=add
  nb = f32[%d] broadcast(n), dimensions={}
  mean = f32[%d] divide(s, nb)
  mb = f32[%d,%d] broadcast(mean), dimensions={0}
  xc = f32[%d,%d] subtract(xf, mb)
  sq = f32[%d,%d] multiply(xc, xc)
  ss = f32[%d] reduce(sq, z), dimensions={1}, to_apply=add
  var = f32[%d] divide(ss, nb)
  eb = f32[%d] broadcast(eps), dimensions={}
  ve = f32[%d] add(var, eb)
  rs = f32[%d] rsqrt(ve)
  rb = f32[%d,%d] broadcast(rs), dimensions={0}
  xh = f32[%d,%d] multiply(xc, rb)
  gb = f32[%d,%d] broadcast(g), dimensions={1}
  bb = f32[%d,%d] broadcast(b), dimensions={1}
  y0 = f32[%d,%d] multiply(xh, gb)
  y1 = f32[%d,%d] add(y0, bb)
  ROOT y = %s[%d,%d] convert(y1)
}
)",
                         Reducers(t), t, r, c, c, c, r, c, c, r, r, r, r, c, r, c, r, c, r, r, r, r,
                         r, r, c, r, c, r, c, r, c, r, c, r, c, t, r, c);
}

std::string Softmax(int64_t r, int64_t c, const std::string& t) {
  return absl::StrFormat(R"(HloModule softmax
%s
ENTRY e {
  x = %s[%d,%d] parameter(0)
  xf = f32[%d,%d] convert(x)
  ninf = f32[] constant(-inf)
  z = f32[] constant(0)
  m = f32[%d] reduce(xf, ninf), dimensions={1}, to_apply=max
  mb = f32[%d,%d] broadcast(m), dimensions={0}
  d = f32[%d,%d] subtract(xf, mb)
  e = f32[%d,%d] exponential(d)
  s = f32[%d] reduce(e, z), dimensions={1}, to_apply=add
  sb = f32[%d,%d] broadcast(s), dimensions={0}
  y = f32[%d,%d] divide(e, sb)
  ROOT o = %s[%d,%d] convert(y)
}
)",
                         Reducers(t), t, r, c, r, c, r, r, c, r, c, r, c, r, r, c, r, c, t, r, c);
}

std::string RmsNorm(int64_t r, int64_t c, const std::string& t) {
  return absl::StrFormat(R"(HloModule rms_norm
%s
ENTRY e {
  x = %s[%d,%d] parameter(0)
  g = f32[%d] parameter(1)
  xf = f32[%d,%d] convert(x)
  z = f32[] constant(0)
  n = f32[] constant(%d)
  eps = f32[] constant(1e-6)
  sq = f32[%d,%d] multiply(xf, xf)
  ss = f32[%d] reduce(sq, z), dimensions={1}, to_apply=add
  nb = f32[%d] broadcast(n), dimensions={}
  ms = f32[%d] divide(ss, nb)
  eb = f32[%d] broadcast(eps), dimensions={}
  me = f32[%d] add(ms, eb)
  rs = f32[%d] rsqrt(me)
  rb = f32[%d,%d] broadcast(rs), dimensions={0}
  gb = f32[%d,%d] broadcast(g), dimensions={1}
  y0 = f32[%d,%d] multiply(xf, rb)
  y1 = f32[%d,%d] multiply(y0, gb)
  ROOT y = %s[%d,%d] convert(y1)
}
)",
                         Reducers(t), t, r, c, c, r, c, c, r, c, r, r, r, r, r, r, r, c, r, c, r,
                         c, r, c, t, r, c);
}

struct Case {
  std::string name;
  std::string text;
  double bytes;  // moved at least once: inputs read, outputs written
};

}  // namespace

int main(int argc, char** argv) {
  int repeat = 11;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--repeat" && i + 1 < argc) repeat = std::max(1, std::atoi(argv[++i]));
    if (arg == "--quick") quick = true;
  }
  absl::StatusOr<double> copy = seam::runtime::CopyBandwidthGBps(repeat);
  if (!copy.ok()) Die(copy.status());
  double copy_gbps = *copy;
  std::printf("copy bandwidth: %.1f GB/s (copy on the pool, same compiler and flags)\n", copy_gbps);
  std::vector<std::pair<int64_t, int64_t>> shapes = {{4096, 768}, {4096, 4096}, {1024, 16384},
                                                     {256, 65536}};
  if (quick) shapes = {{4096, 768}, {256, 65536}};
  std::vector<Case> cases;
  for (const char* t : {"f32", "bf16"}) {
    int64_t size = std::string(t) == "f32" ? 4 : 2;
    for (auto [r, c] : shapes) {
      std::string shape = absl::StrCat(t, "[", r, ",", c, "]");
      double io = 2.0 * r * c * size;
      cases.push_back({"layer_norm " + shape, LayerNorm(r, c, t), io + 8.0 * c});
      cases.push_back({"softmax " + shape, Softmax(r, c, t), io});
      cases.push_back({"rms_norm " + shape, RmsNorm(r, c, t), io + 4.0 * c});
    }
  }
  std::printf("%-30s %9s %9s %9s %9s %9s %8s %8s\n", "workload", "none ms", "xla ms", "stitch ms",
              "st/none", "st/xla", "GB/s", "of copy");
  for (const Case& c : cases) {
    absl::StatusOr<std::vector<std::unique_ptr<seam::Module>>> modules =
        seam::ParseHloText(c.text, c.name);
    if (!modules.ok()) Die(modules.status());
    seam::Module& module = *modules->front();
    std::vector<seam::Literal> arguments = seam::RandomArguments(*module.entry(), 0);
    // Compiled and warmed up first, then timed in interleaved rounds.
    std::vector<std::unique_ptr<seam::runtime::Executable>> executables;
    std::vector<seam::runtime::TimedRun> runs;
    for (seam::fusion::Strategy s : {seam::fusion::Strategy::kNone, seam::fusion::Strategy::kXla,
                                     seam::fusion::Strategy::kStitch}) {
      seam::compiler::CpuOptions options;
      options.plan.strategy = s;
      auto executable = seam::compiler::CompileForCpu(module, options);
      if (!executable.ok()) Die(executable.status());
      seam::runtime::Executable* e = executable->executable.get();
      executables.push_back(std::move(executable->executable));
      runs.push_back(
          seam::runtime::WallClock([e, &arguments] { return e->RunAndDiscard(arguments); }));
      if (absl::Status warm = runs.back()().status(); !warm.ok()) Die(warm);
    }
    absl::StatusOr<std::vector<std::vector<double>>> seconds =
        seam::runtime::TimeInterleaved(runs, repeat);
    if (!seconds.ok()) Die(seconds.status());
    double ms[3];
    for (int k = 0; k < 3; ++k) ms[k] = 1000 * seam::runtime::Summarize((*seconds)[k]).median_s;
    double gbps = c.bytes / (ms[2] / 1000) / 1e9;
    std::printf("%-30s %9.3f %9.3f %9.3f %8.2fx %8.2fx %8.1f %7.0f%%\n", c.name.c_str(), ms[0],
                ms[1], ms[2], seam::runtime::MedianRatio((*seconds)[0], (*seconds)[2]),
                seam::runtime::MedianRatio((*seconds)[1], (*seconds)[2]), gbps,
                100 * gbps / copy_gbps);
    std::fflush(stdout);
  }
  return 0;
}
