// The HLO text parser. It accepts the dialects JAX, TensorFlow, PyTorch/XLA
// and XLA's own tests write: optional `%` sigils, typed operands, elided
// constants, tiled layouts, verbatim attributes, computations with or without
// signatures, missing ROOT / ENTRY / HloModule, debug tables, and files
// holding several modules separated by `// -----` lines.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "seam/ir/module.h"
#include "seam/text/source_file.h"

namespace seam {

// Byte ranges [begin, end) of the modules in a file split on `// -----`
// lines; ranges holding only comments and blanks are dropped.
std::vector<std::pair<size_t, size_t>> SplitModuleRanges(absl::string_view text);

// Parses one module from `file` between byte offsets. Errors carry their
// source location as a status payload, not yet rendered.
absl::StatusOr<std::unique_ptr<Module>> ParseModuleRange(const SourceFile& file,
                                                         size_t begin, size_t end);

// Parses every module of `file`. Errors carry their location as a payload.
absl::StatusOr<std::vector<std::unique_ptr<Module>>> ParseSourceFile(
    const SourceFile& file);

}  // namespace seam

namespace seam {

struct ParseOptions {
  bool verify = true;  // run VerifyModule on every module parsed
};

// The entry points: parse (and verify) HLO text. Errors are rendered as
// `file:line:col: error: message` followed by the source line and a caret.
absl::StatusOr<std::vector<std::unique_ptr<Module>>> ParseHloText(
    absl::string_view text, absl::string_view filename = "<text>",
    ParseOptions options = {});
// Exactly one module; a multi-module text is an error.
absl::StatusOr<std::unique_ptr<Module>> ParseHloModule(
    absl::string_view text, absl::string_view filename = "<text>",
    ParseOptions options = {});
absl::StatusOr<std::vector<std::unique_ptr<Module>>> ParseHloFile(
    const std::string& path, ParseOptions options = {});

}  // namespace seam
