// The checks a golden case makes on a tool's output: a small subset of LLVM
// FileCheck over stdout, and MLIR-style `expected-error` over stderr.
//
// `// CHECK:` lines are matched in order, one output line per match:
//   CHECK: p        p occurs at or after the end of the previous match
//   CHECK-LABEL: p  the same as CHECK
//   CHECK-NEXT: p   p occurs on the line right after the previous match
//   CHECK-SAME: p   p occurs on the previous match's line, after it
//   CHECK-EMPTY:    the line right after the previous match is empty
//   CHECK-NOT: p    p does not occur between the previous match and the next
//
// A pattern is a substring; `{{re}}` embeds an ECMAScript regular expression.
// Leading and trailing spaces of a pattern are ignored.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace seam::golden {

enum class CheckKind { kCheck, kLabel, kNext, kSame, kEmpty, kNot };

struct CheckLine {
  CheckKind kind;
  std::string pattern;
  int line;  // 1-based line of the directive in the golden file
};

absl::string_view CheckKindName(CheckKind kind);

// Reads a `// CHECK...: pattern` comment line. Returns nullopt for any other
// line, and an error for a misspelt directive such as `// CHECK-NXT:`.
absl::StatusOr<std::optional<CheckLine>> ParseCheckLine(absl::string_view text, int line);

// Matches `checks` in order against `output`. The error reads
// `file:line: CHECK-NEXT: ...`, naming the golden-file line of the first check
// that failed and the output line it looked at.
absl::Status RunFileCheck(absl::string_view file, const std::vector<CheckLine>& checks,
                          absl::string_view output);

// A pattern that matches `text` literally: `{{` is written as a regex block.
std::string EscapeCheckPattern(absl::string_view text);

// `// expected-error@+N:COL {{message}}` (or @-N, or an absolute @LINE): the
// one error is at LINE:COL and its message contains `message`.
struct ExpectedError {
  int comment_line;  // 1-based line of the directive
  int line;
  int column;
  std::string message;
};

// Reads an expected-error comment; nullopt for other lines, an error for a
// malformed one.
absl::StatusOr<std::optional<ExpectedError>> ParseExpectedError(absl::string_view text, int line);

// The directive for an error `delta` lines below (above, if negative) it.
std::string ExpectedErrorLine(int delta, int column, absl::string_view message);

// A diagnostic as Seam prints it: `FILE:LINE:COL: error: message`, the
// source line, and a caret line with `^` under COL.
struct Diagnostic {
  int line = 0;
  int column = 0;
  std::string message;
  std::string source;
  std::string caret;
};

// Reads `stderr`, which must hold exactly one diagnostic about `file`.
absl::StatusOr<Diagnostic> ParseDiagnostic(absl::string_view stderr_text, absl::string_view file);

// Compares a diagnostic with the expectation; `input_lines` are the lines of
// the file the tool read, to check the quoted source line and the caret.
absl::Status CheckDiagnostic(const ExpectedError& want, const Diagnostic& got,
                             const std::vector<std::string>& input_lines);

}  // namespace seam::golden
