// Parse throughput: parses each HLO file several times and prints the median
// time and MB/s (also min and max, since shared machines are noisy).
// Usage: seam_parse_bench [--repeat N] [FILE...]; default: the Gemma-3 module.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_util.h"
#include "seam/text/parser.h"

namespace {

struct Timing {
  double median_ms;
  double min_ms;
  double max_ms;
};

Timing TimeParse(const seam::SourceFile& file, int repeat, bool verify) {
  std::vector<double> ms;
  for (int i = 0; i < repeat; ++i) {
    auto start = std::chrono::steady_clock::now();
    auto modules = seam::ParseHloText(file.text(), file.name(), {.verify = verify});
    auto stop = std::chrono::steady_clock::now();
    if (!modules.ok()) {
      std::fprintf(stderr, "%s\n", std::string(modules.status().message()).c_str());
      std::exit(1);
    }
    ms.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
  }
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms.front(), ms.back()};
}

}  // namespace

int main(int argc, char** argv) {
  auto [repeat, paths] = seam::bench::ParseRepeatAndFiles(argc, argv, 11);
  if (paths.empty()) {
    paths.push_back(SEAM_SOURCE_ROOT "/tests/corpus/hlo/xla_gemma3_1b_flax_call.hlo");
  }
  std::printf("%-48s %9s %10s %10s %9s %9s\n", "file", "MB", "median ms", "MB/s",
              "min ms", "max ms");
  for (const std::string& path : paths) {
    absl::StatusOr<seam::SourceFile> file = seam::SourceFile::Read(path);
    if (!file.ok()) {
      std::fprintf(stderr, "%s\n", std::string(file.status().message()).c_str());
      return 1;
    }
    double mb = file->text().size() / 1e6;
    std::string name = path.substr(path.rfind('/') + 1);
    for (bool verify : {false, true}) {
      Timing t = TimeParse(*file, repeat, verify);
      std::printf("%-48s %9.2f %10.1f %10.1f %9.1f %9.1f\n",
                  (name.substr(0, 38) + (verify ? " +verify" : "")).c_str(), mb,
                  t.median_ms, mb / (t.median_ms / 1e3), t.min_ms, t.max_ms);
    }
  }
  return 0;
}
