#include "seam/util/files.h"

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"

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

}  // namespace seam
