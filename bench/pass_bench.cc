// The default pipeline on every corpus module: instruction count before and
// after, and the pipeline's wall time (median of N runs on fresh parses; min
// and max too, since shared machines are noisy).
// Usage: seam_pass_bench [--repeat N] [--passes SPEC] [FILE...]; default:
// every file in tests/corpus/hlo.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_util.h"
#include "seam/passes/pipeline.h"
#include "seam/text/parser.h"

int main(int argc, char** argv) {
  int repeat = 5;
  std::string spec = "default";
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--repeat" && i + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--passes" && i + 1 < argc) {
      spec = argv[++i];
    } else {
      paths.push_back(arg);
    }
  }
  if (paths.empty()) paths = seam::bench::CorpusFiles();
  absl::StatusOr<seam::Pipeline> pipeline = seam::Pipeline::Parse(spec);
  if (!pipeline.ok()) seam::bench::Die(pipeline.status());
  std::printf("pipeline: %s\n", pipeline->ToString().c_str());
  std::printf("%-44s %8s %8s %7s %10s %9s %9s\n", "module", "ops", "after", "change",
              "median ms", "min ms", "max ms");
  for (const std::string& path : paths) {
    absl::StatusOr<seam::SourceFile> file = seam::SourceFile::Read(path);
    if (!file.ok()) seam::bench::Die(file.status());
    std::string name = path.substr(path.rfind('/') + 1);
    int64_t before = 0, after = 0;
    std::vector<double> ms;
    for (int r = 0; r < repeat; ++r) {
      auto modules = seam::ParseHloText(file->text(), file->name(), {.verify = false});
      if (!modules.ok()) seam::bench::Die(modules.status());
      before = after = 0;
      auto start = std::chrono::steady_clock::now();
      for (auto& module : *modules) {
        before += module->InstructionCount();
        absl::StatusOr<bool> changed = pipeline->Run(*module);
        if (!changed.ok()) seam::bench::Die(changed.status());
        after += module->InstructionCount();
      }
      ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count());
    }
    std::sort(ms.begin(), ms.end());
    std::printf("%-44s %8lld %8lld %6.1f%% %10.1f %9.1f %9.1f\n", name.substr(0, 44).c_str(),
                static_cast<long long>(before), static_cast<long long>(after),
                before == 0 ? 0.0 : 100.0 * (after - before) / before, ms[ms.size() / 2],
                ms.front(), ms.back());
  }
  return 0;
}
