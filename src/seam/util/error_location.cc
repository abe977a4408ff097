#include "seam/util/error_location.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace seam {
namespace {
constexpr char kLocationPayload[] = "seam/source-location";
}  // namespace

absl::Status ErrorAt(SourceLocation location, absl::string_view message) {
  absl::Status status = absl::InvalidArgumentError(message);
  if (location.known()) {
    status.SetPayload(kLocationPayload,
                      absl::Cord(absl::StrCat(location.line, ":", location.column)));
  }
  return status;
}

std::optional<SourceLocation> ErrorLocation(const absl::Status& status) {
  absl::optional<absl::Cord> payload = status.GetPayload(kLocationPayload);
  if (!payload.has_value()) return std::nullopt;
  std::vector<std::string> parts =
      absl::StrSplit(std::string(payload->Flatten()), ':');
  SourceLocation location;
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &location.line) ||
      !absl::SimpleAtoi(parts[1], &location.column)) {
    return std::nullopt;
  }
  return location;
}

}  // namespace seam
