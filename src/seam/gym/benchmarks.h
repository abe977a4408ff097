// Benchmarks by URI, the modules episodes start from:
//   corpus/<file>[#k]          a file of the bundled corpus (the k-th module of
//                              a multi-module file, 0 by default)
//   file:///abs/path.hlo[#k]   any HLO text file
//   generator/random/<seed>    a random memory-intensive graph
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "seam/ir/module.h"

namespace seam::gym {

// $SEAM_CORPUS_DIR, else the corpus in the source tree Seam was built from.
std::string CorpusDirectory();

// corpus/<file> for every module file of the corpus directory, sorted.
std::vector<std::string> CorpusBenchmarks();

// Parses (and verifies) the benchmark's module. Errors name the URI.
absl::StatusOr<std::unique_ptr<Module>> LoadBenchmark(absl::string_view uri);

}  // namespace seam::gym
