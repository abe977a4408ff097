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
  bool interpreted = false;  // false when the module cannot be interpreted here
  std::string differences;   // "" when the outputs agree (eval/compare.h's rewrite tolerance)
};

// Errors: the benchmark does not load, the spec does not parse, a pass fails
// or leaves an invalid module.
absl::StatusOr<Validation> ValidatePassOrder(absl::string_view benchmark, absl::string_view spec,
                                             bool interpret, uint64_t seed = 0);

}  // namespace seam::gym
