#include "seam/util/files.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace seam {

absl::Status CreateDirectories(const std::string& dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error)
    return absl::PermissionDeniedError(absl::StrCat("cannot create ", dir, ": ", error.message()));
  return absl::OkStatus();
}

absl::Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return absl::PermissionDeniedError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

absl::Status WriteFileAtomically(const std::string& path, const std::string& text) {
  const std::string temporary =
      absl::StrFormat("%s.tmp.%d.%x", path, getpid(), std::random_device{}());
  std::error_code error;
  absl::Status written = WriteFile(temporary, text);
  if (written.ok()) {
    std::filesystem::rename(temporary, path, error);
    if (!error) return absl::OkStatus();
    written =
        absl::PermissionDeniedError(absl::StrCat("cannot publish ", path, ": ", error.message()));
  }
  std::filesystem::remove(temporary, error);
  return written;
}

}  // namespace seam
