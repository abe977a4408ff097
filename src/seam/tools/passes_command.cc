// `seam passes`: every registered pass, one per line, name then description.
#include <cstdio>

#include "seam/passes/pipeline.h"
#include "seam/passes/registry.h"
#include "seam/tools/commands.h"

namespace seam {

std::function<int()> AddPassesCommand(CLI::App& app) {
  app.add_subcommand("passes", "List the graph passes usable in --passes=SPEC");
  return []() -> int {
    size_t width = 0;
    for (const PassInfo& info : RegisteredPasses()) width = std::max(width, info.name.size());
    for (const PassInfo& info : RegisteredPasses()) {
      std::printf("%-*s  %s\n", static_cast<int>(width), std::string(info.name).c_str(),
                  std::string(info.description).c_str());
    }
    return 0;
  };
}

}  // namespace seam
