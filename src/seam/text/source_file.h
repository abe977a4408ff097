// A named source text with line lookup, used to turn byte offsets and
// SourceLocations into `file:line:col: error: ...` diagnostics.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "seam/util/source_location.h"

namespace seam {

class SourceFile {
 public:
  SourceFile(std::string name, std::string text);
  // Reads a file; the error names the path when it cannot be read.
  static absl::StatusOr<SourceFile> Read(const std::string& path);

  const std::string& name() const { return name_; }
  const std::string& text() const { return text_; }

  SourceLocation LocationOf(size_t offset) const;
  // The text of a 1-based line, without its newline.
  absl::string_view Line(int line) const;

  // `name:line:col: error: message`, then the source line and a caret.
  std::string FormatError(SourceLocation location,
                          absl::string_view message) const;
  // Renders a status that carries a location payload with
  // FormatError; other statuses get the file name as prefix.
  absl::Status Annotate(const absl::Status& status) const;

 private:
  std::string name_;
  std::string text_;
  std::vector<size_t> line_starts_;
};

}  // namespace seam
