// `seam passes`: every registered pass, one per line, name then
// description; then the named pipelines a spec may use like a pass.
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
    for (const NamedPipeline& named : NamedPipelines()) width = std::max(width, named.name.size());
    auto row = [&](absl::string_view name, absl::string_view description) {
      std::printf("%-*s  %s\n", static_cast<int>(width), std::string(name).c_str(),
                  std::string(description).c_str());
    };
    for (const PassInfo& info : RegisteredPasses()) row(info.name, info.description);
    std::printf("\nnamed pipelines:\n");
    for (const NamedPipeline& named : NamedPipelines()) row(named.name, named.description);
    return 0;
  };
}

}  // namespace seam
