// The names of what a gym session can observe and be rewarded by.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace seam::gym {

enum class ObservationSpace {
  kOpcodeHistogram,  // "opcode_histogram": instructions per opcode (the opcode table's order)
  kFeatures,         // "features": the graph summary, FeatureNames() in order
  kHloText,          // "hlo_text": the module as HLO text
};

enum class RewardSpace {
  kOpsDelta,       // "ops_delta": instructions removed by the step
  kOpsNormalized,  // "ops_normalized": the same over the initial count
  kOpsVsDefault,   // "ops_vs_default": over what the default pipeline removes
                   //   (an episode's sum is the paper's (I - R) / (I - D); 1 = as good as default)
  kCostTime,       // "cost_time": microseconds the cost model saves after stitch fusion
  kCostVsDefault,  // "cost_vs_default": the same over what the default pipeline saves,
                   //   at least 1% of the start's time (an episode's sum is
                   //   (C_I - C_R) / max(C_I - C_D, C_I / 100); 1 = as fast as default)
  kShapedOpsVsDefault,  // "ops_vs_default_shaped": ops_vs_default plus the paper's
                        //   potential-based shaping, phi = -FLOPs - 2 * transcendentals,
                        //   scaled by |phi| of the initial module
};

std::vector<std::string> ObservationSpaceNames();
std::vector<std::string> RewardSpaceNames();
absl::string_view ObservationSpaceName(ObservationSpace space);
absl::string_view RewardSpaceName(RewardSpace space);
absl::StatusOr<ObservationSpace> ObservationSpaceByName(absl::string_view name);
absl::StatusOr<RewardSpace> RewardSpaceByName(absl::string_view name);

// The entries of the "features" observation, in order.
const std::vector<std::string>& FeatureNames();

}  // namespace seam::gym
