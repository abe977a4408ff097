// `seam opt FILE`: parse, verify and print HLO modules. Later the graph passes
// run here (`--passes=`).
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "seam/text/parser.h"
#include "seam/text/printer.h"
#include "seam/tools/commands.h"

namespace seam {

std::function<int()> AddOptCommand(CLI::App& app) {
  struct Options {
    std::string file;
    bool verify = true;
  };
  auto options = std::make_shared<Options>();
  CLI::App* command = app.add_subcommand(
      "opt", "Parse, verify and print HLO modules (every module of a `// -----` file)");
  command->add_option("FILE", options->file, "HLO text file, or - for standard input")
      ->required();
  command->add_flag("!--no-verify", options->verify,
                    "Skip the verifier (shape and structure checks)");
  return [options]() -> int {
    absl::StatusOr<std::vector<std::unique_ptr<Module>>> modules;
    ParseOptions parse_options{.verify = options->verify};
    if (options->file == "-") {
      std::string text(std::istreambuf_iterator<char>(std::cin), {});
      modules = ParseHloText(text, "<stdin>", parse_options);
    } else {
      modules = ParseHloFile(options->file, parse_options);
    }
    if (!modules.ok()) {
      std::fprintf(stderr, "%s\n", std::string(modules.status().message()).c_str());
      return 1;
    }
    std::fputs(PrintModules(*modules).c_str(), stdout);
    return 0;
  };
}

}  // namespace seam
