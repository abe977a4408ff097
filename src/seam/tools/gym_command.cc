// `seam gym FILE --agent=random|greedy|beam`: searches for a pass order
// that leaves the fewest ops, then checks the best order from scratch (a
// fresh load, the verifier after every pass, the interpreter against the
// original) and prints it as a --passes spec.
#include <cstdio>
#include <chrono>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "seam/gym/search.h"
#include "seam/gym/validation.h"
#include "seam/tools/cli_util.h"
#include "seam/tools/commands.h"

namespace seam {
namespace {

struct GymOptions {
  std::string file;
  std::string agent = "beam";
  gym::SearchOptions search;
  bool json = false;
  bool interpret = true;
  gym::SessionOptions session;
  std::string objective = "ops";
};

bool IsBenchmarkUri(const std::string& file) {
  for (absl::string_view scheme : {"corpus/", "file://", "generator/"}) {
    if (absl::StartsWith(file, scheme)) return true;
  }
  return false;
}

// The paper's metric for one module: 1 = as many ops removed as the default
// pipeline removes.
double PaperMetric(const gym::SearchResult& r) {
  double default_gain = static_cast<double>(r.initial_ops - r.default_ops);
  return default_gain == 0 ? 0 : static_cast<double>(r.initial_ops - r.best_ops) / default_gain;
}

void PrintText(const std::string& uri, const gym::SearchResult& r, const gym::Validation& v,
               const gym::Validation& default_order, double validation_s) {
  std::printf("benchmark  %s\n", uri.c_str());
  std::printf("agent      %s\n", r.agent.c_str());
  std::printf("initial    %lld ops\n", static_cast<long long>(r.initial_ops));
  std::printf("default    %lld ops (the default pipeline)\n", static_cast<long long>(r.default_ops));
  std::printf("best       %lld ops: %+.1f%% vs default, (I-R)/(I-D) = %.3f\n",
              static_cast<long long>(r.best_ops),
              r.default_ops == 0 ? 0.0 : 100.0 * static_cast<double>(r.best_ops - r.default_ops) /
                                             static_cast<double>(r.default_ops),
              PaperMetric(r));
  std::printf("order      %s\n", r.best_spec.empty() ? "(none)" : r.best_spec.c_str());
  std::printf("validated  %lld ops from scratch, verified after every pass; %s\n",
              static_cast<long long>(v.ops),
              v.interpreted ? "interpreter: outputs equal" : "not interpreted");
  std::printf("planned    %lld ops once composites are expanded for fusion; the default pipeline's %lld\n",
              static_cast<long long>(v.planned_ops), static_cast<long long>(default_order.planned_ops));
  std::printf("cost model %.1f us after stitch fusion (host CPU); the default pipeline's %.1f us\n",
              v.cost_us, default_order.cost_us);
  std::printf("walltime   %.2f s search (%lld steps), %.2f s validation\n", r.walltime_s,
              static_cast<long long>(r.steps), validation_s);
}

int RunGym(const GymOptions& options) {
  std::string uri = options.file;
  gym::SearchOptions search = options.search;
  gym::SessionOptions session_options = options.session;
  if (options.objective == "cost") {
    search.objective = gym::Objective::kCost;
    session_options.reward_space = gym::RewardSpace::kCostTime;
  }
  if (!IsBenchmarkUri(uri)) {
    // A path: errors in it read like every other command's (file:line:col).
    if (absl::StatusOr<std::unique_ptr<Module>> module = LoadModule(uri, "gym"); !module.ok()) {
      return Fail(module.status());
    }
    uri = absl::StrCat("file://", std::filesystem::absolute(uri).string());
  }
  gym::Session session(session_options);
  if (absl::Status reset = session.Reset(uri); !reset.ok()) return Fail(reset);
  absl::StatusOr<gym::SearchResult> result = gym::RunSearch(options.agent, session, search);
  if (!result.ok()) return Fail(result.status());
  auto begin = std::chrono::steady_clock::now();
  absl::StatusOr<gym::Validation> validation =
      gym::ValidatePassOrder(uri, result->best_spec, options.interpret);
  double validation_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  if (!validation.ok()) {
    return Fail(absl::Status(validation.status().code(),
                             absl::StrCat("the best order '", result->best_spec,
                                          "' fails from scratch: ", validation.status().message())));
  }
  // Whether fewer ops mean faster code: the default pipeline's module, costed alike.
  absl::StatusOr<gym::Validation> default_order = gym::ValidatePassOrder(uri, "default", false);
  if (!default_order.ok()) return Fail(default_order.status());
  if (options.json) {
    nlohmann::json out = {
        {"benchmark", uri},           {"agent", result->agent},
        {"canonical_start", options.session.canonical_start}, {"objective", options.objective},
        {"initial_ops", result->initial_ops}, {"default_ops", result->default_ops},
        {"best_ops", result->best_ops},       {"best_spec", result->best_spec},
        {"metric", PaperMetric(*result)},     {"steps", result->steps},
        {"walltime_s", result->walltime_s},   {"validated_ops", validation->ops},
        {"interpreted", validation->interpreted}, {"validation_s", validation_s},
        {"best_cost_us", validation->cost_us},    {"default_cost_us", default_order->cost_us},
        {"best_planned_ops", validation->planned_ops}, {"default_planned_ops", default_order->planned_ops},
    };
    std::printf("%s\n", out.dump().c_str());
  } else {
    PrintText(uri, *result, *validation, *default_order, validation_s);
  }
  if (validation->ops != result->best_ops) {
    return Fail(absl::InternalError(absl::StrCat("the best order gives ", validation->ops,
                                                 " ops from scratch, not ", result->best_ops)));
  }
  if (!validation->differences.empty()) {
    return Fail(absl::InternalError(absl::StrCat("the best order changes the results:\n",
                                                 validation->differences)));
  }
  return 0;
}

}  // namespace

std::function<int()> AddGymCommand(CLI::App& app) {
  auto options = std::make_shared<GymOptions>();
  CLI::App* command = app.add_subcommand(
      "gym", "Search for the pass order leaving the fewest ops, then validate it from scratch");
  command->add_option("FILE", options->file,
                      "HLO file, or a benchmark URI: corpus/<file>, file:///path, generator/random/<seed>")
      ->required();
  command->add_option("--agent", options->agent, "random, greedy or beam (default beam)")
      ->check(CLI::IsMember({"random", "greedy", "beam"}));
  command->add_option("--steps", options->search.max_steps,
                      "Actions per episode (random) or search depth (greedy, beam); default 40")
      ->check(CLI::PositiveNumber);
  command
      ->add_option("--budget", options->search.budget_seconds,
                   "Wall-clock budget of the search in seconds (default 10)")
      ->check(Seconds());
  command->add_option("--objective", options->objective,
                      "What to minimise: ops (the op count, default) or cost (the cost model's time "
                      "after stitch fusion on the host CPU)")
      ->check(CLI::IsMember({"ops", "cost"}));
  command->add_option("--seed", options->search.seed, "Seed of the random agent (default 0)")
      ->check(NonNegativeInteger());
  command->add_option("--beam-width", options->search.beam_width, "States kept per depth (default 4)")
      ->check(CLI::PositiveNumber);
  command->add_flag("!--no-interpret", options->interpret,
                    "Validate with the verifier only, not by interpreting both modules");
  command->add_flag("--canonical-start", options->session.canonical_start,
                    "Search from the planner's canonical forms (batch norms expanded...), so op counts "
                    "compare with the default pipeline like for like");
  command->add_flag("--json", options->json, "Print one JSON object");
  return [options]() { return RunGym(*options); };
}

}  // namespace seam
