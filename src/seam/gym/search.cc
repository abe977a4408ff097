#include "seam/gym/search.h"

#include <algorithm>
#include <chrono>
#include <random>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "seam/gym/actions.h"
#include "seam/util/status_macros.h"

namespace seam::gym {
namespace {

using Clock = std::chrono::steady_clock;

// Lower is better: the objective, then the op count.
std::pair<double, int64_t> Score(const Session& state, Objective objective) {
  double primary = objective == Objective::kCost ? state.cost_us().value_or(0)
                                                 : static_cast<double>(state.ops());
  return {primary, state.ops()};
}

// The budget, and the best state seen so far.
class Tracker {
 public:
  Tracker(const Session& start, const SearchOptions& options, std::string agent)
      : begin_(Clock::now()),
        budget_s_(options.budget_seconds),
        budget_steps_(options.budget_steps),
        objective_(options.objective) {
    result_.agent = std::move(agent);
    result_.initial_ops = start.initial_ops();
    result_.default_ops = start.default_ops();
    result_.best_ops = start.ops();
    result_.best_cost_us = start.cost_us().value_or(0);
    result_.best_spec = start.PassSpec();
    best_score_ = Score(start, objective_);
  }

  bool OutOfBudget() const {
    return Seconds() >= budget_s_ || (budget_steps_ > 0 && result_.steps >= budget_steps_);
  }
  bool Better(const Session& a, const Session& b) const { return Score(a, objective_) < Score(b, objective_); }

  // A better score wins; on a tie, the shorter order.
  void Offer(const Session& state) {
    std::string spec = state.PassSpec();
    std::pair<double, int64_t> score = Score(state, objective_);
    if (score < best_score_ || (score == best_score_ && spec.size() < result_.best_spec.size())) {
      best_score_ = score;
      result_.best_ops = state.ops();
      result_.best_cost_us = state.cost_us().value_or(0);
      result_.best_spec = std::move(spec);
    }
  }

  SearchResult& result() { return result_; }

  SearchResult Finish() {
    result_.walltime_s = Seconds();
    return result_;
  }

 private:
  double Seconds() const { return std::chrono::duration<double>(Clock::now() - begin_).count(); }
  Clock::time_point begin_;
  double budget_s_;
  int64_t budget_steps_;
  Objective objective_;
  std::pair<double, int64_t> best_score_;
  SearchResult result_;
};

std::vector<int> UsefulPasses(const Session& state) {
  std::vector<bool> mask = state.ActionMask();
  std::vector<int> passes;
  for (int a = 0; a < StopAction(); ++a) {
    if (mask[a]) passes.push_back(a);
  }
  return passes;
}

absl::Status CheckStart(const Session& start, const SearchOptions& options) {
  if (!start.has_episode() || start.done()) {
    return absl::FailedPreconditionError("search: the session must hold an episode that has not ended");
  }
  if (options.objective == Objective::kCost && !start.cost_us().has_value()) {
    return absl::FailedPreconditionError(
        "search: the cost objective needs a session whose reward_space is cost_time");
  }
  return absl::OkStatus();
}

// The children of `state` that some pass changes, each one step further.
absl::StatusOr<std::vector<Session>> ChangedChildren(const Session& state, Tracker& tracker) {
  std::vector<Session> children;
  for (int action : UsefulPasses(state)) {
    Session child = state.Fork();
    SEAM_ASSIGN_OR_RETURN(StepResult step, child.Step(action));
    ++tracker.result().steps;
    if (step.changed) children.push_back(std::move(child));
  }
  return children;
}

// States compared for duplicates: the graph's structure (opcodes, shapes,
// operand and called-computation positions), not its names, which passes make up as they go.
size_t Fingerprint(const Session& state) {
  absl::flat_hash_map<const Computation*, size_t> computation_position;
  for (const auto& computation : state.module().computations()) {
    computation_position.emplace(computation.get(), computation_position.size());
  }
  // Number every instruction before hashing: a pass may append an instruction
  // after the users it was given to, so an operand can come later in the list.
  absl::flat_hash_map<const Instruction*, size_t> position;
  for (const auto& computation : state.module().computations()) {
    for (const auto& i : computation->instructions()) position.emplace(i.get(), position.size());
  }
  size_t hash = 0;
  for (const auto& computation : state.module().computations()) {
    for (const auto& i : computation->instructions()) {
      hash = absl::HashOf(hash, static_cast<int>(i->opcode()), i->shape().dims(), i->IsRoot());
      for (const Instruction* operand : i->operands()) hash = absl::HashOf(hash, position.at(operand));
      for (const Computation* called : i->CalledComputations()) {
        hash = absl::HashOf(hash, computation_position.at(called));
      }
    }
  }
  return hash;
}

}  // namespace

absl::StatusOr<SearchResult> RandomSearch(const Session& start, const SearchOptions& options) {
  SEAM_RETURN_IF_ERROR(CheckStart(start, options));
  Tracker tracker(start, options, "random");
  std::mt19937_64 random(options.seed);
  do {
    Session state = start.Fork();
    ++tracker.result().episodes;
    for (int t = 0; t < options.max_steps && !state.done(); ++t) {
      std::vector<int> passes = UsefulPasses(state);
      if (passes.empty()) break;
      int action = passes[std::uniform_int_distribution<size_t>(0, passes.size() - 1)(random)];
      SEAM_ASSIGN_OR_RETURN(StepResult step, state.Step(action));
      ++tracker.result().steps;
      if (step.changed) tracker.Offer(state);
    }
  } while (!tracker.OutOfBudget());
  return tracker.Finish();
}

absl::StatusOr<SearchResult> GreedySearch(const Session& start, const SearchOptions& options) {
  SEAM_RETURN_IF_ERROR(CheckStart(start, options));
  Tracker tracker(start, options, "greedy");
  Session state = start.Fork();
  for (int depth = 0; depth < options.max_steps && !tracker.OutOfBudget() && !state.done();
       ++depth) {
    SEAM_ASSIGN_OR_RETURN(std::vector<Session> children, ChangedChildren(state, tracker));
    auto best = std::min_element(children.begin(), children.end(), [&](const Session& a, const Session& b) {
      return tracker.Better(a, b);
    });
    // Descend while the score falls strictly; passes that only reshape the
    // graph are left to beam search.
    if (best == children.end() || !tracker.Better(*best, state)) break;
    state = std::move(*best);
    tracker.Offer(state);
    ++tracker.result().episodes;
  }
  return tracker.Finish();
}

namespace {

// One beam search of `width` states per depth; the tracker keeps the best.
absl::Status SearchBeam(const Session& start, const SearchOptions& options, int width, Tracker& tracker) {
  std::vector<Session> beam = {start.Fork()};
  absl::flat_hash_set<size_t> seen = {Fingerprint(beam.front())};
  for (int depth = 0; depth < options.max_steps && !beam.empty() && !tracker.OutOfBudget();
       ++depth) {
    std::vector<Session> candidates;
    for (const Session& state : beam) {
      if (state.done()) continue;
      SEAM_ASSIGN_OR_RETURN(std::vector<Session> children, ChangedChildren(state, tracker));
      for (Session& child : children) {
        // A state reached again by another order is not expanded twice.
        if (!seen.insert(Fingerprint(child)).second) continue;
        tracker.Offer(child);
        candidates.push_back(std::move(child));
      }
      if (tracker.OutOfBudget()) break;
    }
    std::stable_sort(candidates.begin(), candidates.end(),
                     [&](const Session& a, const Session& b) { return tracker.Better(a, b); });
    if (candidates.size() > static_cast<size_t>(width)) {
      candidates.erase(candidates.begin() + width, candidates.end());
    }
    beam = std::move(candidates);
    tracker.result().episodes = std::max<int64_t>(tracker.result().episodes, depth + 1);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SearchResult> BeamSearch(const Session& start, const SearchOptions& options) {
  SEAM_RETURN_IF_ERROR(CheckStart(start, options));
  Tracker tracker(start, options, "beam");
  // A search that runs out of new states before the budget starts again
  // twice as wide: the budget buys breadth, the first answer comes fast.
  for (int width = std::max(1, options.beam_width); !tracker.OutOfBudget(); width *= 2) {
    SEAM_RETURN_IF_ERROR(SearchBeam(start, options, width, tracker));
    if (width > (1 << 12)) break;
  }
  return tracker.Finish();
}

absl::StatusOr<SearchResult> RunSearch(absl::string_view agent, const Session& start,
                                       const SearchOptions& options) {
  if (agent == "random") return RandomSearch(start, options);
  if (agent == "greedy") return GreedySearch(start, options);
  if (agent == "beam") return BeamSearch(start, options);
  return absl::InvalidArgumentError(
      absl::StrCat("unknown agent '", agent, "'; expected random, greedy or beam"));
}

}  // namespace seam::gym
