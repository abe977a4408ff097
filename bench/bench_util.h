// Shared by the benchmarks: the bundled corpus and failing loudly.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace seam::bench {

[[noreturn]] inline void Die(const absl::Status& status) {
  std::fprintf(stderr, "%s\n", std::string(status.message()).c_str());
  std::exit(1);
}

// `--repeat N [FILE...]`, the command line of the benchmarks timing files.
struct RepeatAndFiles {
  int repeat;
  std::vector<std::string> files;
};
inline RepeatAndFiles ParseRepeatAndFiles(int argc, char** argv, int default_repeat) {
  RepeatAndFiles args{default_repeat, {}};
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--repeat" && i + 1 < argc) {
      args.repeat = std::max(1, std::atoi(argv[++i]));
    } else {
      args.files.push_back(arg);
    }
  }
  return args;
}

// Every module file of tests/corpus/hlo, sorted.
inline std::vector<std::string> CorpusFiles() {
  std::vector<std::string> files;
  for (const auto& entry :
       std::filesystem::directory_iterator(SEAM_SOURCE_ROOT "/tests/corpus/hlo")) {
    std::string name = entry.path().filename().string();
    if (name.ends_with(".hlo") || name.ends_with(".txt")) files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace seam::bench
