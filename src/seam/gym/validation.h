// Checking a pass order found by a search or an agent from scratch: the
// benchmark is loaded again, the order run with the verifier after every
// pass, and the result interpreted against the original on the same inputs.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace seam::gym {

struct Validation {
  int64_t ops = 0;           // after the order
  double cost_us = 0;        // the cost model's time after stitch fusion
  int64_t planned_ops = 0;   // ops once the planner's canonical forms expand composites
  bool interpreted = false;  // false when the module cannot be interpreted here
  std::string differences;   // "" when the outputs agree (within the rewrite tolerance)
};

// Errors: the benchmark does not load, the spec does not parse, a pass fails
// or leaves an invalid module, or the stitch plan fails. The cost model
// plans for the host CPU.
absl::StatusOr<Validation> ValidatePassOrder(absl::string_view benchmark, absl::string_view spec,
                                             bool interpret, uint64_t seed = 0);

}  // namespace seam::gym
