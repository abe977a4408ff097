// Search baselines over pass orders (CompilerGym showed cheap search lands
// close to RL): random episodes, greedy descent and beam search, all on
// forked sessions, all minimising the op count.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "seam/gym/session.h"

namespace seam::gym {

// What a search minimises.
enum class Objective {
  kOps,   // the op count (the paper's)
  kCost,  // the cost model's time after stitch fusion (op count breaks ties)
};

struct SearchOptions {
  int max_steps = 40;           // actions per episode (random) or depth (greedy, beam)
  double budget_seconds = 10;   // wall-clock budget; the best found so far is returned
  // Session steps the search may take (0: no bound but the clock's): a
  // budget that buys every machine the same search, for tests.
  int64_t budget_steps = 0;
  uint64_t seed = 0;            // random search
  Objective objective = Objective::kOps;
  int beam_width = 4;           // beam search: the first width; doubled while budget remains
};

struct SearchResult {
  std::string agent;
  std::string best_spec;  // the changing passes of the best state, as a pipeline spec
  int64_t initial_ops = 0;
  int64_t default_ops = 0;
  int64_t best_ops = 0;
  double best_cost_us = 0;  // objective kCost only
  int64_t steps = 0;      // session steps the search took
  int64_t episodes = 0;   // random: episodes; greedy and beam: the deepest level reached
  double walltime_s = 0;
};

// `start` must hold a fresh episode; it is forked, never stepped. The cost
// objective needs a start whose options measure cost (reward_space cost_time).
absl::StatusOr<SearchResult> RandomSearch(const Session& start, const SearchOptions& options);
absl::StatusOr<SearchResult> GreedySearch(const Session& start, const SearchOptions& options);
absl::StatusOr<SearchResult> BeamSearch(const Session& start, const SearchOptions& options);

// By name: "random", "greedy" or "beam".
absl::StatusOr<SearchResult> RunSearch(absl::string_view agent, const Session& start,
                                       const SearchOptions& options);

}  // namespace seam::gym
