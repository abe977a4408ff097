#include "seam/codegen/simd_twins.h"

#include <algorithm>
#include <cctype>

#include "absl/strings/match.h"
#include "absl/strings/str_replace.h"

namespace seam::codegen {
namespace {

// The prelude's functions with a vector-ABI twin for branch-free loops.
const std::pair<std::string, std::string> kSimdTwins[] = {{"seam_exp", "seam_exp_simd"},
                                                          {"seam_tanh", "seam_tanh_simd"}};

// The name called by the parenthesis at `open` in `line`, spaces before it
// skipped and template arguments dropped: "static_cast<float>(" gives
// static_cast, "if (" gives if, "= (a + b)" gives nothing.
std::string CalledName(const std::string& line, size_t open) {
  size_t end = open;
  while (end > 0 && line[end - 1] == ' ') --end;
  size_t begin = end;
  auto part_of_name = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':' || c == '<' ||
           c == '>';
  };
  while (begin > 0 && part_of_name(line[begin - 1])) --begin;
  std::string name;
  int depth = 0;
  for (char c : line.substr(begin, end - begin)) {
    depth += c == '<' ? 1 : c == '>' ? -1 : 0;
    if (depth == 0 && c != '>') name += c;
  }
  return name;
}

}  // namespace

bool CanUseSimdTwins(const std::vector<std::string>& lines,
                     const absl::flat_hash_set<std::string>& also_allowed, bool twinned) {
  static const absl::flat_hash_set<std::string> kBranchFree = {
      "static_cast",     "float",
      "double",          "std::fma",
      "std::sqrt",       "std::fabs",
      "std::abs",        "seam_bf16_to_float",
      "seam_keep",       "seam_float_to_bf16",
      "seam_round_bf16", "std::numeric_limits::infinity",
      "std::numeric_limits::quiet_NaN"};
  for (const std::string& line : lines) {
    if (absl::StrContains(line, "?") || absl::StrContains(line, "&&") ||
        absl::StrContains(line, "||")) {
      return false;
    }
    for (size_t open = line.find('('); open != std::string::npos; open = line.find('(', open + 1)) {
      std::string name = CalledName(line, open);
      bool has_twin = std::any_of(std::begin(kSimdTwins), std::end(kSimdTwins),
                                  [&](const auto& twin) { return twin.first == name; });
      if (!name.empty() && !kBranchFree.contains(name) && !also_allowed.contains(name) &&
          !(twinned && has_twin)) {
        return false;
      }
    }
  }
  return true;
}

void UseSimdTwins(std::vector<std::string>& body, bool vectorized,
                  const absl::flat_hash_set<std::string>& branch_free_reducers) {
  if (!vectorized || !CanUseSimdTwins(body, branch_free_reducers)) return;
  for (std::string& line : body) {
    for (const auto& [inline_name, twin] : kSimdTwins) {
      absl::StrReplaceAll({{inline_name + "(", twin + "("}}, &line);
    }
  }
}

}  // namespace seam::codegen
