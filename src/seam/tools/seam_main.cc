// The `seam` command line: one subcommand per job.
#include <cstdio>

#include "CLI/CLI.hpp"
#include "seam/tools/commands.h"

int main(int argc, char** argv) {
  CLI::App app{
      "Seam: an optimizing compiler for the memory-intensive part of deep-learning "
      "programs.\nReads XLA HLO text, runs graph passes and stitches memory-intensive "
      "ops into few kernels."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "seam 0.1.0");

  struct Command {
    CLI::App* app;
    std::function<int()> run;
  };
  std::vector<Command> commands;
  auto add = [&](auto adder) {
    size_t before = app.get_subcommands({}).size();
    std::function<int()> run = adder(app);
    commands.push_back({app.get_subcommands({})[before], std::move(run)});
  };
  add(seam::AddOptCommand);
  add(seam::AddRunCommand);
  add(seam::AddPassesCommand);
  add(seam::AddPlanCommand);
  add(seam::AddBenchCommand);
  add(seam::AddCompileCommand);
  add(seam::AddGymCommand);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  for (const Command& command : commands) {
    if (command.app->parsed()) return command.run();
  }
  return 1;
}
