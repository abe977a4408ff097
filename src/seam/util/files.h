// Reading and writing whole files. Reading: a user's inputs, and what Seam
// itself stored (cache entries), which may since have been replaced by
// anything. Writing what a user asked to keep (dumps of plans and kernels):
// every failure is a status naming the path, never a silent partial file.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace seam {

// The bytes of the file at `path`. A directory or a device is refused; a
// pipe (a shell's `<(...)`) is read to its end.
absl::StatusOr<std::string> ReadFile(const std::string& path);

// The same for a file that must be a regular one (a link to one will do),
// such as what Seam wrote itself: anything else found in its place (a FIFO,
// which would block the open forever, a device, a directory) is refused, as
// is a missing one.
absl::StatusOr<std::string> ReadRegularFile(const std::string& path);

// Creates `dir` and its parents when missing.
absl::Status CreateDirectories(const std::string& dir);

// Writes `text` to `path` (replacing it), bytes as they are.
absl::Status WriteFile(const std::string& path, const std::string& text);

// The same through a temporary unique to this process and call, renamed
// into place, so a reader (another process sharing a cache) sees the whole
// file or none; the temporary is removed when anything fails.
absl::Status WriteFileAtomically(const std::string& path, const std::string& text);

}  // namespace seam
