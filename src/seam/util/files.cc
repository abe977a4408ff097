#include "seam/util/files.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace seam {
namespace {

absl::StatusOr<std::string> ReadOpened(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open file"));
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad()) return absl::DataLossError(absl::StrCat(path, ": read failed"));
  return contents.str();
}

}  // namespace

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(path, error);
  if (std::filesystem::is_directory(status)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": is a directory, expected a file"));
  }
  // /dev/zero or /dev/urandom would be read until memory runs out.
  if (std::filesystem::is_character_file(status) || std::filesystem::is_block_file(status)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": is a device, expected a file"));
  }
  return ReadOpened(path);
}

absl::StatusOr<std::string> ReadRegularFile(const std::string& path) {
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(path, error);
  if (error || !std::filesystem::exists(status)) {
    return absl::NotFoundError(absl::StrCat(path, ": cannot open file"));
  }
  if (!std::filesystem::is_regular_file(status)) {
    return absl::FailedPreconditionError(absl::StrCat(path, ": not a regular file"));
  }
  return ReadOpened(path);
}

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
