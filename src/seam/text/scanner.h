// A character-level scanner over HLO text. HLO mixes ordinary tokens with
// compact forms (`3x3`, `0_1x0_1`, `b01f_01io->b01f`, `{1,0:T(8,128)}`), so the
// parser pulls tokens on demand instead of lexing the file up front.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "seam/text/source_file.h"
#include "seam/util/source_location.h"

namespace seam {

class Scanner {
 public:
  // Scans `file` between byte offsets [begin, end).
  Scanner(const SourceFile& file, size_t begin, size_t end);

  // Skips spaces, newlines, `// ...` and `/* ... */` comments. A `/*` with
  // no `*/` skips to the end and is remembered: every later error becomes
  // "unterminated comment" at the `/*`, since the comment swallowed the rest.
  void SkipTrivia();
  bool AtEnd();  // after trivia
  bool unterminated_comment() const { return unterminated_comment_ != kNone; }
  // Skips spaces, tabs and comments but not newlines; true when the cursor
  // then is at a line end or the end of input. Inline for the usual case,
  // a token or newline right at the cursor (it runs once per instruction).
  bool AtLineEnd() {
    char c = PeekRaw();
    if (c != ' ' && c != '\t' && c != '/') return c == '\n' || c == '\r' || pos_ >= end_;
    return SkipToLineEnd();
  }
  // The next character after trivia, or '\0' at the end.
  char Peek();
  // The character right at the cursor, trivia not skipped.
  char PeekRaw() const { return pos_ < end_ ? text_[pos_] : '\0'; }
  char PeekRawAt(size_t ahead) const {
    return pos_ + ahead < end_ ? text_[pos_ + ahead] : '\0';
  }
  void Advance(size_t n = 1) { pos_ = std::min(pos_ + n, end_); }
  size_t pos() const { return pos_; }
  size_t remaining() const { return end_ - pos_; }
  void set_pos(size_t pos) { pos_ = pos; }

  // Consumes `token` (after trivia) if it is next.
  bool TryConsume(absl::string_view token);
  // Consumes `token` or fails with "expected 'token'".
  absl::Status Expect(absl::string_view token);

  // A name: letters, digits, `_ . - $`, with an optional leading `%` that is
  // dropped. Fails when there is none.
  absl::StatusOr<std::string> Name(absl::string_view what = "name");
  // Like Name but returns empty instead of failing, and keeps the cursor.
  std::string PeekWord();
  absl::StatusOr<int64_t> Integer(absl::string_view what = "an integer");
  // Integer without skipping trivia first: for the parts of compact values
  // like `1_1x1`, which hold no spaces, so a missing part is reported where
  // it is missing rather than at the next token.
  absl::StatusOr<int64_t> RawInteger(absl::string_view what = "an integer");
  // The text of a number as written: optional sign, digits, fraction,
  // exponent, or inf / nan. A number run into letters, digits or dots
  // (`0x10`, `1.2.3`) is malformed, reported at its start.
  absl::StatusOr<std::string> NumberText();
  // A floating-point value: a number, inf or nan, with an optional sign. A
  // finite number beyond f64's range is an error (`type` names the type in
  // the message); one too small flushes to zero as in strtod.
  absl::StatusOr<double> Double(absl::string_view type = "f64");
  // A double-quoted string with C escapes, unescaped.
  absl::StatusOr<std::string> QuotedString();
  // The text of one attribute value that Seam keeps verbatim: up to a `,`,
  // newline or unmatched closer at nesting depth 0. Newlines inside become
  // single spaces.
  absl::StatusOr<std::string> VerbatimValue();
  // The raw text up to the `)` closing the current nesting level (excluded).
  absl::StatusOr<std::string> RawUntilClosingParen();

  // The input text between two offsets.
  absl::string_view Text(size_t begin, size_t end) const {
    return absl::string_view(text_ + begin, end - begin);
  }

  SourceLocation Location() const;
  SourceLocation LocationAt(size_t offset) const;
  // An InvalidArgument error at the cursor (after trivia) / at `offset`.
  absl::Status Error(absl::string_view message);
  absl::Status ErrorAtOffset(size_t offset, absl::string_view message) const;
  // "expected X, found 'y'" at the cursor as it is: callers skip trivia
  // first where the expected thing may follow spaces or newlines.
  absl::Status Unexpected(absl::string_view expected);

 private:
  static constexpr size_t kNone = static_cast<size_t>(-1);
  void SkipBlockComment();  // the cursor is on `/*`
  bool SkipToLineEnd();     // AtLineEnd's general case
  absl::Status SkipQuoted(std::string* out);
  const SourceFile& file_;
  const char* text_;
  size_t pos_;
  size_t end_;
  size_t unterminated_comment_ = kNone;  // offset of a `/*` with no `*/`
};

// True for characters that may appear inside a name.
bool IsNameChar(char c);

}  // namespace seam
