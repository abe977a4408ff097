#include "seam/gym/benchmarks.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "seam/gym/random_graph.h"
#include "seam/text/parser.h"

#ifndef SEAM_CORPUS_DIR
#define SEAM_CORPUS_DIR ""
#endif

namespace seam::gym {
namespace {

constexpr absl::string_view kCorpusScheme = "corpus/";
constexpr absl::string_view kFileScheme = "file://";
constexpr absl::string_view kRandomScheme = "generator/random/";

// Four graphs of about a dozen ops each: small enough to interpret in
// milliseconds, big enough for the passes to disagree.
constexpr int kRandomGraphs = 4;
constexpr int kRandomGraphOps = 12;

absl::StatusOr<std::unique_ptr<Module>> LoadFile(absl::string_view uri, absl::string_view path_and_index) {
  std::string path(path_and_index);
  size_t index = 0;
  if (size_t hash = path.rfind('#'); hash != std::string::npos) {
    if (!absl::SimpleAtoi(path.substr(hash + 1), &index)) {
      return absl::InvalidArgumentError(absl::StrCat("benchmark '", uri, "': bad module index after '#'"));
    }
    path.resize(hash);
  }
  absl::StatusOr<std::vector<std::unique_ptr<Module>>> modules = ParseHloFile(path);
  if (!modules.ok()) {
    return absl::Status(modules.status().code(),
                        absl::StrCat("benchmark '", uri, "': ", modules.status().message()));
  }
  if (index >= modules->size()) {
    return absl::InvalidArgumentError(absl::StrCat("benchmark '", uri, "': the file holds ",
                                                   modules->size(), " module(s), no #", index));
  }
  return std::move((*modules)[index]);
}

absl::StatusOr<std::unique_ptr<Module>> GenerateRandom(absl::string_view uri, absl::string_view seed_text) {
  uint64_t seed = 0;
  if (!absl::SimpleAtoi(seed_text, &seed)) {
    return absl::InvalidArgumentError(absl::StrCat("benchmark '", uri, "': the seed must be a number"));
  }
  std::vector<RandomGraph> graphs;
  for (int g = 0; g < kRandomGraphs; ++g) {
    graphs.push_back(MakeRandomGraph(seed * kRandomGraphs + g, absl::StrCat("g", g, "_"), kRandomGraphOps));
  }
  std::string text = ModuleText(graphs, absl::StrCat("random_", seed));
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text, uri);
  if (!module.ok()) {
    return absl::InternalError(absl::StrCat("benchmark '", uri, "': ", module.status().message()));
  }
  return module;
}

}  // namespace

std::string CorpusDirectory() {
  if (const char* dir = std::getenv("SEAM_CORPUS_DIR"); dir != nullptr && *dir != '\0') return dir;
  return SEAM_CORPUS_DIR;
}

std::vector<std::string> CorpusBenchmarks() {
  std::vector<std::string> uris;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(CorpusDirectory(), error)) {
    std::string name = entry.path().filename().string();
    if (!entry.is_regular_file() || absl::EndsWith(name, ".md")) continue;
    uris.push_back(absl::StrCat(kCorpusScheme, name));
  }
  std::sort(uris.begin(), uris.end());
  return uris;
}

absl::StatusOr<std::unique_ptr<Module>> LoadBenchmark(absl::string_view uri) {
  if (absl::StartsWith(uri, kCorpusScheme)) {
    absl::string_view file = uri.substr(kCorpusScheme.size());
    if (file.empty() || absl::StrContains(file, "/")) {
      return absl::InvalidArgumentError(absl::StrCat("benchmark '", uri, "': expected corpus/<file>"));
    }
    return LoadFile(uri, absl::StrCat(CorpusDirectory(), "/", file));
  }
  if (absl::StartsWith(uri, kFileScheme)) return LoadFile(uri, uri.substr(kFileScheme.size()));
  if (absl::StartsWith(uri, kRandomScheme)) return GenerateRandom(uri, uri.substr(kRandomScheme.size()));
  return absl::InvalidArgumentError(absl::StrCat(
      "benchmark '", uri, "': unknown scheme; expected corpus/<file>, file:///path or generator/random/<seed>"));
}

}  // namespace seam::gym
