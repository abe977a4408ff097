// Writing what a user asked to keep (dumps of plans and kernels): every
// failure is a status naming the path, never a silent partial file.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace seam {

// Creates `dir` and its parents when missing.
absl::Status CreateDirectories(const std::string& dir);

// Writes `text` to `path` (replacing it), bytes as they are.
absl::Status WriteFile(const std::string& path, const std::string& text);

// The same through a temporary unique to this process and call, renamed
// into place, so a reader (another process sharing a cache) sees the whole
// file or none; the temporary is removed when anything fails.
absl::Status WriteFileAtomically(const std::string& path, const std::string& text);

}  // namespace seam
