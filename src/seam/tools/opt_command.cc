// `seam opt FILE [--passes=SPEC]`: parse, verify, run graph passes and print
// HLO modules.
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "seam/eval/random_fill.h"
#include "seam/passes/pipeline.h"
#include "seam/text/parser.h"
#include "seam/text/printer.h"
#include "seam/tools/commands.h"

namespace seam {

std::function<int()> AddOptCommand(CLI::App& app) {
  struct Options {
    std::string file;
    bool verify = true;
    std::string passes;
    bool verify_each = false;
    std::string dump_to;
    bool stats = false;
    bool fill_elided_constants = false;
  };
  auto options = std::make_shared<Options>();
  CLI::App* command = app.add_subcommand(
      "opt", "Parse, verify, run graph passes on and print HLO modules (every module of a "
             "`// -----` file)");
  command->add_option("FILE", options->file, "HLO text file, or - for standard input")
      ->required();
  command->add_flag("!--no-verify", options->verify,
                    "Skip the verifier (shape and structure checks)");
  command->add_option("--passes", options->passes,
                      "Pipeline spec, e.g. dce,cse,fixpoint(algsimp,dce), or `default`");
  command->add_flag("--verify-each", options->verify_each,
                    "Verify the module after every pass that changed it");
  command->add_option("--dump-to", options->dump_to,
                      "Write the module to DIR after every pass that changed it");
  command->add_flag("--stats", options->stats,
                    "Print per-pass runs, wall time and op-count delta to stderr");
  command->add_flag("--fill-elided-constants", options->fill_elided_constants,
                    "Print elided constants ({...}) with the data Seam fills them with, so "
                    "that other tools compute the same");
  return [options]() -> int {
    // The spec is checked before any file is read: a typo fails fast.
    std::optional<Pipeline> pipeline;
    if (!options->passes.empty()) {
      absl::StatusOr<Pipeline> parsed = Pipeline::Parse(options->passes);
      if (!parsed.ok()) {
        std::fprintf(stderr, "%s\n", std::string(parsed.status().message()).c_str());
        return 2;
      }
      pipeline = std::move(*parsed);
    }
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
    if (pipeline.has_value()) {
      PipelineOptions run_options;
      run_options.verify_each = options->verify_each;
      run_options.dump_to = options->dump_to;
      for (std::unique_ptr<Module>& module : *modules) {
        PipelineReport report;
        absl::StatusOr<bool> changed = pipeline->Run(*module, run_options, &report);
        if (!changed.ok()) {
          std::fprintf(stderr, "%s: %s\n", module->name().c_str(),
                       std::string(changed.status().message()).c_str());
          return 1;
        }
        if (options->stats) {
          std::fprintf(stderr, "module %s\n%s", module->name().c_str(), report.Summary().c_str());
        }
      }
    }
    if (options->fill_elided_constants) {
      for (std::unique_ptr<Module>& module : *modules) FillElidedConstants(*module);
    }
    std::fputs(PrintModules(*modules).c_str(), stdout);
    return 0;
  };
}

}  // namespace seam
