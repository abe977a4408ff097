// `seam plan FILE --strategy=none|xla|stitch`: run the default pipeline (or
// --passes=SPEC), plan fusion for a device and print the plan as text, JSON
// or Graphviz DOT.
#include <cstdio>
#include <memory>
#include <string>

#include "seam/fusion/plan_printer.h"
#include "seam/fusion/planner.h"
#include "seam/text/parser.h"
#include "seam/tools/cli_util.h"
#include "seam/tools/commands.h"

namespace seam {

std::function<int()> AddPlanCommand(CLI::App& app) {
  struct Options {
    std::string file;
    std::string strategy = "stitch";
    std::string explorer = "astitch";
    std::string device = "cpu";
    std::string format = "text";
    std::string passes = "default";
    bool one_pass_statistics = true;
    bool online_softmax = true;
  };
  auto options = std::make_shared<Options>();
  CLI::App* command = app.add_subcommand(
      "plan", "Plan kernel fusion: which ops run together, how values pass inside a kernel");
  command->add_option("FILE", options->file, "HLO text file")->required();
  command->add_option("--strategy", options->strategy, "none, xla or stitch")
      ->check(CLI::IsMember({"none", "xla", "stitch"}));
  command->add_option("--explorer", options->explorer,
                      "stitch's planner: astitch (AStitch) or beam (FusionStitching's explorer)")
      ->check(CLI::IsMember({"astitch", "beam"}));
  command->add_option("--device", options->device, "cpu (this machine), h100 or a100")
      ->check(CLI::IsMember({"cpu", "h100", "a100"}));
  command->add_option("--format", options->format, "text, json or dot")
      ->check(CLI::IsMember({"text", "json", "dot"}));
  command->add_option("--passes", options->passes,
                      "Pipeline spec run before planning (default: the default pipeline; "
                      "`none` to plan the module as written)");
  command->add_flag("--one-pass-statistics,!--no-one-pass-statistics", options->one_pass_statistics,
                    "cpu: a variance's sum of squared deviations folds in the pass of the mean it "
                    "is centred on (one read of the input fewer; the default); "
                    "--no-one-pass-statistics reads the input again for it, as written");
  command->add_flag("--online-softmax,!--no-online-softmax", options->online_softmax,
                    "cpu: a softmax's sum folds in the pass of its max as a running max and a "
                    "rescaled sum where that saves reads (the default); --no-online-softmax "
                    "keeps the two passes, as written");
  return [options]() -> int {
    absl::StatusOr<std::vector<std::unique_ptr<Module>>> modules = ParseHloFile(options->file);
    if (!modules.ok()) return Fail(modules.status());
    fusion::PlanOptions plan_options;
    absl::StatusOr<fusion::Strategy> strategy = fusion::StrategyByName(options->strategy);
    if (!strategy.ok()) return Fail(strategy.status());
    absl::StatusOr<target::DeviceSpec> device = target::DeviceSpecByName(options->device);
    if (!device.ok()) return Fail(device.status());
    plan_options.strategy = *strategy;
    plan_options.explorer = options->explorer;
    plan_options.device = *device;
    plan_options.one_pass_statistics = options->one_pass_statistics;
    plan_options.online_softmax = options->online_softmax;
    for (std::unique_ptr<Module>& module : *modules) {
      absl::Status passed = RunPassSpec(*module, options->passes);
      if (!passed.ok()) return Fail(passed);
      WarnUnrunnable(options->file, *module);
      absl::StatusOr<fusion::FusionPlan> plan = fusion::PlanModule(*module, plan_options);
      if (!plan.ok()) return Fail(plan.status());
      std::string text = options->format == "json"  ? fusion::PlanToJson(*plan)
                         : options->format == "dot" ? fusion::PlanToDot(*plan)
                                                    : fusion::PlanToText(*plan);
      std::fputs(text.c_str(), stdout);
    }
    return 0;
  };
}

}  // namespace seam
