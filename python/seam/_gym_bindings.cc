// seam._core.gym: the gym's C++ API (src/seam/gym/) for Python. Sessions,
// actions, spaces, benchmarks, the search baselines and validation; absl
// errors become ValueError (bad arguments, missing benchmarks) or
// RuntimeError (everything else), carrying the status message.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "bindings.h"
#include "seam/gym/actions.h"
#include "seam/gym/benchmarks.h"
#include "seam/gym/search.h"
#include "seam/gym/session.h"
#include "seam/gym/spaces.h"
#include "seam/gym/validation.h"
#include "seam/ir/opcode.h"
#include "seam/target/device_spec.h"
#include "seam/text/parser.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace seam::gym {
namespace {

using python::Check;
using python::Throw;
using python::Value;

// A 1-D numpy array that owns a copy of `values` (freed with the array).
template <typename T>
nb::ndarray<nb::numpy, T, nb::ndim<1>> ToNumpy(std::vector<T> values) {
  auto* owned = new std::vector<T>(std::move(values));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  return nb::ndarray<nb::numpy, T, nb::ndim<1>>(owned->data(), {owned->size()}, owner);
}

// std::vector<bool> is packed, so the mask goes through a plain bool array.
nb::ndarray<nb::numpy, bool, nb::ndim<1>> MaskToNumpy(const std::vector<bool>& mask) {
  bool* owned = new bool[mask.size()];
  for (size_t i = 0; i < mask.size(); ++i) owned[i] = mask[i];
  nb::capsule owner(owned, [](void* p) noexcept { delete[] static_cast<bool*>(p); });
  return nb::ndarray<nb::numpy, bool, nb::ndim<1>>(owned, {mask.size()}, owner);
}

int CheckedAction(int action) {
  if (!IsValidAction(action)) {
    throw nb::value_error(
        absl::StrCat("action ", action, " is out of range [0, ", ActionCount(), ")").c_str());
  }
  return action;
}

std::vector<std::string> ActionNames() {
  std::vector<std::string> names;
  for (int a = 0; a < ActionCount(); ++a) names.emplace_back(ActionName(a));
  return names;
}

std::vector<std::string> ActionDescriptions() {
  std::vector<std::string> descriptions;
  for (int a = 0; a < ActionCount(); ++a) descriptions.emplace_back(ActionDescription(a));
  return descriptions;
}

std::vector<std::string> OpcodeNames() {
  std::vector<std::string> names;
  for (int op = 0; op < kOpcodeCount; ++op) names.emplace_back(OpcodeName(static_cast<Opcode>(op)));
  return names;
}

Session MakeSession(int max_steps, const std::string& reward_space, bool verify_each,
                    const std::string& device, bool canonical_start) {
  if (max_steps <= 0) throw nb::value_error("max_steps must be positive");
  SessionOptions options;
  options.max_steps = max_steps;
  options.reward_space = Value(RewardSpaceByName(reward_space));
  options.verify_each = verify_each;
  options.device = Value(target::DeviceSpecByName(device));
  options.canonical_start = canonical_start;
  return Session(std::move(options));
}

nb::object ObservationToPython(Observation observation) {
  if (auto* counts = std::get_if<std::vector<int64_t>>(&observation)) {
    return nb::cast(ToNumpy(std::move(*counts)));
  }
  if (auto* values = std::get_if<std::vector<double>>(&observation)) {
    return nb::cast(ToNumpy(std::move(*values)));
  }
  return nb::cast(std::get<std::string>(std::move(observation)));
}

nb::dict SearchToDict(const SearchResult& r, Objective objective) {
  nb::dict d;
  d["agent"] = r.agent;
  d["best_spec"] = r.best_spec;
  d["initial_ops"] = r.initial_ops;
  d["default_ops"] = r.default_ops;
  d["best_ops"] = r.best_ops;
  d["best_cost_us"] = objective == Objective::kCost ? nb::cast(r.best_cost_us) : nb::none();
  d["steps"] = r.steps;
  d["episodes"] = r.episodes;
  d["walltime_s"] = r.walltime_s;
  return d;
}

// The searches fork `start` and never step it; they can run for their whole
// budget, so other Python threads run meanwhile.
nb::dict Search(const std::string& agent, const Session& start, int max_steps,
                double budget_seconds, uint64_t seed, int beam_width,
                const std::string& objective) {
  if (!start.has_episode())
    throw std::runtime_error("search: the session has no episode; call reset first");
  if (max_steps <= 0 || beam_width <= 0 || !(budget_seconds >= 0)) {
    throw nb::value_error("search: max_steps and beam_width must be positive, budget_seconds >= 0");
  }
  SearchOptions options;
  options.max_steps = max_steps;
  options.budget_seconds = budget_seconds;
  options.seed = seed;
  options.beam_width = beam_width;
  if (objective == "ops") {
    options.objective = Objective::kOps;
  } else if (objective == "cost") {
    options.objective = Objective::kCost;
  } else {
    throw nb::value_error(
        absl::StrCat("search: unknown objective '", objective, "'; expected ops or cost").c_str());
  }
  absl::StatusOr<SearchResult> result;
  {
    nb::gil_scoped_release release;
    result = RunSearch(agent, start, options);
  }
  return SearchToDict(Value(std::move(result)), options.objective);
}

}  // namespace
}  // namespace seam::gym

namespace seam::python {

void BindGym(nb::module_& m) {
  using namespace seam::gym;
  m.doc() = "Seam's pass-ordering gym (C++ core)";

  // Actions.
  m.def("action_count", &ActionCount,
        "Registered passes + the default pipeline's fixpoint phases + 1 (STOP).");
  m.def("stop_action", &StopAction, "The index of STOP, the last action.");
  m.def("action_names", &ActionNames, "Every action's name, by index ('stop' last).");
  m.def("action_descriptions", &ActionDescriptions,
        "Every action's one-line description, by index.");
  m.def(
      "action_name", [](int action) { return std::string(ActionName(CheckedAction(action))); },
      "action"_a);
  m.def(
      "action_description",
      [](int action) { return std::string(ActionDescription(CheckedAction(action))); }, "action"_a);
  m.def(
      "action_index", [](const std::string& name) { return Value(ActionByName(name)); }, "name"_a,
      "The action of a pass name or 'stop'.");

  // Spaces.
  m.def("observation_spaces", &ObservationSpaceNames);
  m.def("reward_spaces", &RewardSpaceNames);
  m.def(
      "feature_names", [] { return FeatureNames(); }, "The entries of the 'features' observation.");
  m.def("opcode_names", &OpcodeNames, "The entries of the 'opcode_histogram' observation.");

  // Benchmarks.
  m.def("corpus_directory", &CorpusDirectory);
  m.def("corpus_benchmarks", &CorpusBenchmarks,
        "corpus/<file> for every module file of the corpus.");

  nb::class_<Session>(m, "Session",
                      "A pass-ordering episode on one module. Not thread-safe: use a session from "
                      "one thread at a time.")
      .def(
          "__init__",
          [](Session* self, int max_steps, const std::string& reward_space, bool verify_each,
             const std::string& device, bool canonical_start) {
            new (self)
                Session(MakeSession(max_steps, reward_space, verify_each, device, canonical_start));
          },
          "max_steps"_a = 50, "reward_space"_a = "ops_vs_default", "verify_each"_a = false,
          "device"_a = "cpu", "canonical_start"_a = false,
          "canonical_start: start episodes from the fusion planner's canonical forms (batch norms "
          "expanded...), where op counts compare with the default pipeline like for like.")
      .def(
          "reset", [](Session& s, const std::string& benchmark) { Check(s.Reset(benchmark)); },
          "benchmark"_a,
          "Starts an episode on a benchmark URI: corpus/<file>[#k], file:///path[#k] or "
          "generator/random/<seed>.")
      .def(
          "reset_text",
          [](Session& s, const std::string& hlo_text, const std::string& name) {
            auto module = Value(seam::ParseHloModule(hlo_text, name));
            Check(s.Reset(std::move(module), name));
          },
          "hlo_text"_a, "name"_a = "<text>",
          "Starts an episode on a module given as HLO text (validate_pass_order cannot reload it).")
      .def(
          "step",
          [](Session& s, int action) {
            StepResult r = Value(s.Step(action));
            return std::make_tuple(r.changed, r.terminated, r.truncated);
          },
          "action"_a, "Applies an action; returns (changed, terminated, truncated).")
      .def(
          "step",
          [](Session& s, const std::string& name) {
            StepResult r = Value(s.Step(Value(ActionByName(name))));
            return std::make_tuple(r.changed, r.terminated, r.truncated);
          },
          "name"_a, "Applies an action given by name.")
      .def("fork", &Session::Fork,
           "An independent copy (the module is shared until either side steps).")
      .def("__copy__", &Session::Fork)
      .def(
          "__deepcopy__", [](const Session& s, nb::handle) { return s.Fork(); }, "memo"_a)
      .def(
          "observe",
          [](Session& s, const std::string& space) {
            ObservationSpace parsed = Value(ObservationSpaceByName(space));
            return ObservationToPython(Value(s.Observe(parsed)));
          },
          "space"_a, "opcode_histogram -> int64 array, features -> float64 array, hlo_text -> str.")
      .def(
          "reward",
          [](const Session& s, std::optional<std::string> space) {
            if (!space.has_value()) return Value(s.Reward());
            return Value(s.Reward(Value(RewardSpaceByName(*space))));
          },
          "space"_a = nb::none(), "The last step's reward (the session's reward space by default).")
      .def(
          "action_mask", [](const Session& s) { return MaskToNumpy(s.ActionMask()); },
          "False where a pass is known to leave the current module unchanged; STOP is always True.")
      .def_prop_ro("pass_spec", &Session::PassSpec,
                   "The changing actions as a pipeline spec that reproduces the current module.")
      .def_prop_ro("ops", &Session::ops)
      .def_prop_ro(
          "cost_us", &Session::cost_us,
          "The cost model's time after stitch fusion; None unless the reward space measures cost.")
      .def_prop_ro("initial_ops", &Session::initial_ops)
      .def_prop_ro("default_ops", &Session::default_ops, "Ops after the default pipeline.")
      .def_prop_ro("initial_cost_us", &Session::initial_cost_us,
                   "The cost model's time of the episode's start; None unless the reward space "
                   "measures cost.")
      .def_prop_ro("default_cost_us", &Session::default_cost_us,
                   "The cost model's time after the default pipeline; None unless the reward space "
                   "measures cost.")
      .def_prop_ro("steps", &Session::steps)
      .def_prop_ro("done", &Session::done)
      .def_prop_ro("has_episode", &Session::has_episode)
      .def_prop_ro(
          "actions", [](const Session& s) { return s.actions(); }, "Every action taken.")
      .def_prop_ro("benchmark",
                   [](const Session& s) -> std::optional<std::string> {
                     if (!s.has_episode()) return std::nullopt;
                     return s.benchmark();
                   })
      .def_prop_ro("max_steps", [](const Session& s) { return s.options().max_steps; })
      .def_prop_ro(
          "reward_space",
          [](const Session& s) { return std::string(RewardSpaceName(s.options().reward_space)); })
      .def_prop_ro("verify_each", [](const Session& s) { return s.options().verify_each; })
      .def_prop_ro("canonical_start", [](const Session& s) { return s.options().canonical_start; })
      .def("__repr__", [](const Session& s) {
        if (!s.has_episode()) return std::string("<seam.gym.Session (no episode)>");
        return absl::StrCat("<seam.gym.Session ", s.benchmark(), ": ", s.ops(), " ops (initial ",
                            s.initial_ops(), ", default ", s.default_ops(), "), ", s.steps(),
                            " steps", s.done() ? ", done" : "", ">");
      });

  // Search baselines and validation.
  const char* search_doc =
      "Searches from the session's current state (forked, never stepped) for the pass order "
      "minimising the objective: 'ops', or 'cost' (the cost model's time after stitch fusion, "
      "ops breaking ties; needs a session with reward_space='cost_time'). Returns a dict (agent, "
      "best_spec, initial_ops, default_ops, best_ops, best_cost_us, steps, episodes, walltime_s).";
  m.def("search", &Search, "agent"_a, "session"_a, "max_steps"_a = 40, "budget_seconds"_a = 10.0,
        "seed"_a = 0, "beam_width"_a = 4, "objective"_a = "ops", search_doc);
  for (const char* agent : {"random", "greedy", "beam"}) {
    std::string name = std::string(agent);
    m.def((name + "_search").c_str(),
          [name](const Session& session, int max_steps, double budget_seconds, uint64_t seed,
                 int beam_width, const std::string& objective) {
            return Search(name, session, max_steps, budget_seconds, seed, beam_width, objective);
          },
          "session"_a, "max_steps"_a = 40, "budget_seconds"_a = 10.0, "seed"_a = 0,
          "beam_width"_a = 4, "objective"_a = "ops", search_doc);
  }
  m.def(
      "validate_pass_order",
      [](const std::string& benchmark, const std::string& spec, bool interpret, uint64_t seed) {
        absl::StatusOr<Validation> validation;
        {
          nb::gil_scoped_release release;
          validation = ValidatePassOrder(benchmark, spec, interpret, seed);
        }
        Validation v = Value(std::move(validation));
        nb::dict d;
        d["ops"] = v.ops;
        d["cost_us"] = v.cost_us;
        d["planned_ops"] = v.planned_ops;
        d["interpreted"] = v.interpreted;
        d["differences"] = v.differences;
        return d;
      },
      "benchmark"_a, "spec"_a, "interpret"_a = true, "seed"_a = 0,
      "Reloads the benchmark, runs the spec with the verifier after every pass and "
      "(interpret=True) "
      "compares the interpreter's outputs with the original's on the same inputs. Returns a dict "
      "(ops, cost_us: the cost model's host-CPU time after stitch fusion, planned_ops: ops once "
      "composites are expanded, interpreted, differences: '' when equal); raises when a pass "
      "fails or leaves an invalid module.");
}

}  // namespace seam::python
