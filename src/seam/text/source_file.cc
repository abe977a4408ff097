#include "seam/text/source_file.h"

#include <algorithm>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "seam/util/error_location.h"
#include "seam/util/files.h"
#include "seam/util/status_macros.h"

namespace seam {

SourceFile::SourceFile(std::string name, std::string text)
    : name_(std::move(name)), text_(std::move(text)) {
  // A UTF-8 byte order mark (some editors write one) is not text.
  if (absl::StartsWith(text_, "\xEF\xBB\xBF")) text_.erase(0, 3);
  line_starts_.push_back(0);
  for (size_t i = 0; i < text_.size(); ++i) {
    if (text_[i] == '\n') line_starts_.push_back(i + 1);
  }
}

absl::StatusOr<SourceFile> SourceFile::Read(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": is a directory, expected a file of HLO text"));
  }
  SEAM_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return SourceFile(path, std::move(text));
}

SourceLocation SourceFile::LocationOf(size_t offset) const {
  offset = std::min(offset, text_.size());
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  int line = static_cast<int>(it - line_starts_.begin());
  int column = static_cast<int>(offset - line_starts_[line - 1]) + 1;
  return {line, column};
}

absl::string_view SourceFile::Line(int line) const {
  if (line < 1 || line > static_cast<int>(line_starts_.size())) return "";
  size_t begin = line_starts_[line - 1];
  size_t end = text_.find('\n', begin);
  if (end == std::string::npos) end = text_.size();
  if (end > begin && text_[end - 1] == '\r') --end;
  return absl::string_view(text_).substr(begin, end - begin);
}

std::string SourceFile::FormatError(SourceLocation location,
                                    absl::string_view message) const {
  if (!location.known()) return absl::StrCat(name_, ": error: ", message);
  std::string out = absl::StrCat(name_, ":", location.line, ":",
                                 location.column, ": error: ", message);
  absl::string_view line = Line(location.line);
  // Very long lines (elided metadata, huge tuples) would drown the message.
  constexpr size_t kMaxShown = 240;
  size_t caret = static_cast<size_t>(location.column - 1);
  size_t start = caret > kMaxShown / 2 ? caret - kMaxShown / 2 : 0;
  std::string shown(line.substr(std::min(start, line.size()), kMaxShown));
  // Control bytes (a NUL would end the message where it is printed) show
  // as '?', one column each.
  for (char& c : shown) {
    if (static_cast<unsigned char>(c) < 0x20 && c != '\t') c = '?';
  }
  std::string pad;
  for (size_t i = start; i < caret && i < line.size(); ++i) {
    pad += line[i] == '\t' ? '\t' : ' ';
  }
  absl::StrAppend(&out, "\n", start > 0 ? "..." : "", shown, "\n",
                  start > 0 ? "   " : "", pad, "^");
  return out;
}

absl::Status SourceFile::Annotate(const absl::Status& status) const {
  if (status.ok()) return status;
  std::optional<SourceLocation> location = ErrorLocation(status);
  std::string message =
      FormatError(location.value_or(SourceLocation{}), status.message());
  return absl::Status(status.code(), message);
}

}  // namespace seam
