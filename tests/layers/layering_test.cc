// The source tree's layers: each directory of src/seam includes only from
// the layers below it: runtime runs programs without naming how they were
// planned, the planner knows nothing of how kernels run. (Direct includes:
// the kernel IR still carries the planner's thread mapping.)
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>

#include "gtest/gtest.h"

namespace seam {
namespace {

namespace fs = std::filesystem;

// Each layer and the layers it may include from (besides its own).
const std::map<std::string, std::set<std::string>>& AllowedIncludes() {
  static const auto* allowed = new std::map<std::string, std::set<std::string>>{
      {"util", {}},
      {"ir", {"util"}},
      {"text", {"ir", "util"}},
      {"eval", {"ir", "util"}},
      {"passes", {"eval", "ir", "text", "util"}},
      {"target", {"util"}},  // the machines plans and kernels are made for
      {"fusion", {"eval", "ir", "target", "util"}},
      {"codegen", {"eval", "fusion", "ir", "target", "util"}},
      {"runtime", {"codegen", "eval", "ir", "target", "util"}},
      {"compiler",
       {"codegen", "eval", "fusion", "ir", "passes", "runtime", "target", "text", "util"}},
      // The gym's cost estimate asks what generated code covers and what
      // executors run themselves (the rest is the interpreter's).
      {"gym", {"codegen", "eval", "fusion", "ir", "passes", "runtime", "target", "text", "util"}},
      {"tools",
       {"compiler", "codegen", "eval", "fusion", "gym", "ir", "passes", "runtime", "target", "text",
        "util"}},
  };
  return *allowed;
}

TEST(Layering, EveryIncludeComesFromALowerLayer) {
  const fs::path root = fs::path(SEAM_SOURCE_ROOT) / "src" / "seam";
  const std::regex include(R"(^\s*#\s*include\s+"seam/([a-z_]+)/)");
  int files = 0;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file()) continue;
    const std::string extension = entry.path().extension().string();
    if (extension != ".h" && extension != ".cc" && extension != ".in") continue;
    const std::string layer = fs::relative(entry.path(), root).begin()->string();
    auto allowed = AllowedIncludes().find(layer);
    ASSERT_NE(allowed, AllowedIncludes().end()) << "src/seam/" << layer << " is in no layer";
    ++files;
    std::ifstream in(entry.path());
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
      std::smatch match;
      if (!std::regex_search(line, match, include)) continue;
      const std::string from = match[1];
      EXPECT_TRUE(from == layer || allowed->second.contains(from))
          << fs::relative(entry.path(), root).string() << ":" << number << " includes from " << from
          << ", which " << layer << " may not";
    }
  }
  EXPECT_GT(files, 100);  // the tree was found
}

}  // namespace
}  // namespace seam
