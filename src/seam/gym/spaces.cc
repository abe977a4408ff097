#include "seam/gym/spaces.h"

#include <array>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "seam/fusion/op_class.h"

namespace seam::gym {
namespace {

constexpr std::array<std::pair<ObservationSpace, absl::string_view>, 3> kObservationSpaces = {{
    {ObservationSpace::kOpcodeHistogram, "opcode_histogram"},
    {ObservationSpace::kFeatures, "features"},
    {ObservationSpace::kHloText, "hlo_text"},
}};

constexpr std::array<std::pair<RewardSpace, absl::string_view>, 6> kRewardSpaces = {{
    {RewardSpace::kOpsDelta, "ops_delta"},
    {RewardSpace::kOpsNormalized, "ops_normalized"},
    {RewardSpace::kOpsVsDefault, "ops_vs_default"},
    {RewardSpace::kCostTime, "cost_time"},
    {RewardSpace::kCostVsDefault, "cost_vs_default"},
    {RewardSpace::kShapedOpsVsDefault, "ops_vs_default_shaped"},
}};

template <typename Space, size_t N>
std::vector<std::string> Names(const std::array<std::pair<Space, absl::string_view>, N>& table) {
  std::vector<std::string> names;
  for (const auto& [space, name] : table) names.emplace_back(name);
  return names;
}

template <typename Space, size_t N>
absl::string_view NameOf(const std::array<std::pair<Space, absl::string_view>, N>& table, Space space) {
  for (const auto& [s, name] : table) {
    if (s == space) return name;
  }
  return "?";
}

template <typename Space, size_t N>
absl::StatusOr<Space> ByName(const std::array<std::pair<Space, absl::string_view>, N>& table,
                             absl::string_view what, absl::string_view name) {
  for (const auto& [space, n] : table) {
    if (n == name) return space;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown ", what, " space '", name, "'; expected one of ", absl::StrJoin(Names(table), ", ")));
}

}  // namespace

std::vector<std::string> ObservationSpaceNames() { return Names(kObservationSpaces); }
std::vector<std::string> RewardSpaceNames() { return Names(kRewardSpaces); }
absl::string_view ObservationSpaceName(ObservationSpace space) { return NameOf(kObservationSpaces, space); }
absl::string_view RewardSpaceName(RewardSpace space) { return NameOf(kRewardSpaces, space); }

absl::StatusOr<ObservationSpace> ObservationSpaceByName(absl::string_view name) {
  return ByName(kObservationSpaces, "observation", name);
}

absl::StatusOr<RewardSpace> RewardSpaceByName(absl::string_view name) {
  return ByName(kRewardSpaces, "reward", name);
}

const std::vector<std::string>& FeatureNames() {
  static const auto* names = [] {
    auto* all = new std::vector<std::string>{"instructions", "computations"};
    for (int c = 0; c <= static_cast<int>(fusion::OpClass::kOpaque); ++c) {
      std::string op_class(fusion::OpClassName(static_cast<fusion::OpClass>(c)));
      all->push_back(absl::StrCat("ops_", absl::StrReplaceAll(op_class, {{"-", "_"}})));
    }
    for (const char* name : {"parameter_bytes", "output_bytes", "flops", "transcendentals",
                             "dram_bytes_after_stitch", "last_pass_edits", "step"}) {
      all->push_back(name);
    }
    return all;
  }();
  return *names;
}

}  // namespace seam::gym
