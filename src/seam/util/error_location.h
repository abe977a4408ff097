// Attaches a source location to an absl::Status as a payload, so layers that
// know nothing of files (the verifier, passes) can say where an error is and
// the text layer can render it as `file:line:col: error: ...` with a caret.
#pragma once

#include <optional>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "seam/util/source_location.h"

namespace seam {

// An InvalidArgument error at `location` (which may be unknown).
absl::Status ErrorAt(SourceLocation location, absl::string_view message);
// The location attached by ErrorAt, if any.
std::optional<SourceLocation> ErrorLocation(const absl::Status& status);

}  // namespace seam
