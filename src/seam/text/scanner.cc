#include "seam/text/scanner.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "seam/util/error_location.h"

namespace seam {

bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' ||
         c == '-' || c == '$';
}

Scanner::Scanner(const SourceFile& file, size_t begin, size_t end)
    : file_(file), text_(file.text().data()), pos_(begin), end_(end) {}

void Scanner::SkipTrivia() {
  while (pos_ < end_) {
    char c = text_[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++pos_;
    } else if (c == '/' && PeekRawAt(1) == '/') {
      while (pos_ < end_ && text_[pos_] != '\n') ++pos_;
    } else if (c == '/' && PeekRawAt(1) == '*') {
      SkipBlockComment();
    } else {
      return;
    }
  }
}

void Scanner::SkipBlockComment() {
  size_t close = file_.text().find("*/", pos_ + 2);
  if (close == std::string::npos || close + 2 > end_) {
    unterminated_comment_ = pos_;
    pos_ = end_;
  } else {
    pos_ = close + 2;
  }
}

bool Scanner::SkipToLineEnd() {
  while (pos_ < end_) {
    char c = text_[pos_];
    if (c == ' ' || c == '\t') {
      ++pos_;
    } else if (c == '/' && PeekRawAt(1) == '*') {
      size_t open = pos_;
      SkipBlockComment();
      // A comment spanning lines ends the line it started on.
      if (Text(open, pos_).find('\n') != absl::string_view::npos) return true;
    } else {
      return c == '\n' || c == '\r' || (c == '/' && PeekRawAt(1) == '/');
    }
  }
  return true;
}

bool Scanner::AtEnd() {
  SkipTrivia();
  return pos_ >= end_;
}

char Scanner::Peek() {
  SkipTrivia();
  return PeekRaw();
}

bool Scanner::TryConsume(absl::string_view token) {
  SkipTrivia();
  if (end_ - pos_ < token.size()) return false;
  if (absl::string_view(text_ + pos_, token.size()) != token) return false;
  pos_ += token.size();
  return true;
}

absl::Status Scanner::Expect(absl::string_view token) {
  if (TryConsume(token)) return absl::OkStatus();
  return Unexpected(absl::StrCat("'", token, "'"));
}

std::string Scanner::PeekWord() {
  SkipTrivia();
  size_t p = pos_;
  if (p < end_ && text_[p] == '%') ++p;
  size_t start = p;
  while (p < end_ && IsNameChar(text_[p])) ++p;
  return std::string(text_ + start, p - start);
}

absl::StatusOr<std::string> Scanner::Name(absl::string_view what) {
  SkipTrivia();
  size_t p = pos_;
  if (p < end_ && text_[p] == '%') ++p;
  size_t start = p;
  while (p < end_ && IsNameChar(text_[p])) ++p;
  if (p == start) return Unexpected(what);
  pos_ = p;
  return std::string(text_ + start, p - start);
}

absl::StatusOr<int64_t> Scanner::Integer(absl::string_view what) {
  SkipTrivia();
  return RawInteger(what);
}

absl::StatusOr<int64_t> Scanner::RawInteger(absl::string_view what) {
  size_t start = pos_;
  size_t p = pos_;
  if (p < end_ && (text_[p] == '-' || text_[p] == '+')) ++p;
  size_t digits = p;
  // Unsigned, so that accumulating more than 18 digits wraps instead of
  // overflowing; those are re-read by from_chars below.
  uint64_t magnitude = 0;
  while (p < end_ && std::isdigit(static_cast<unsigned char>(text_[p]))) {
    magnitude = magnitude * 10 + static_cast<uint64_t>(text_[p] - '0');
    ++p;
  }
  int64_t value = static_cast<int64_t>(magnitude);  // exact up to 18 digits
  if (p == digits) return Unexpected(what);
  if (p - digits > 18) {  // may overflow: let from_chars check the range
    const char* first = text_ + start + (text_[start] == '+' ? 1 : 0);
    auto [ptr, ec] = std::from_chars(first, text_ + p, value);
    if (ec != std::errc() || ptr != text_ + p) {
      return ErrorAtOffset(start, absl::StrCat("'", Text(start, p), "' is out of range for ",
                                               what));
    }
  } else if (text_[start] == '-') {
    value = -value;
  }
  pos_ = p;
  return value;
}

absl::StatusOr<std::string> Scanner::NumberText() {
  SkipTrivia();
  size_t start = pos_;
  size_t p = pos_;
  if (p < end_ && (text_[p] == '-' || text_[p] == '+')) ++p;
  auto word_at = [&](absl::string_view w) {
    return end_ - p >= w.size() && absl::string_view(text_ + p, w.size()) == w &&
           (p + w.size() >= end_ || !IsNameChar(text_[p + w.size()]));
  };
  if (word_at("inf") || word_at("nan")) {
    p += 3;
  } else {
    size_t digits = p;
    while (p < end_ && std::isdigit(static_cast<unsigned char>(text_[p]))) ++p;
    if (p < end_ && text_[p] == '.') {
      ++p;
      while (p < end_ && std::isdigit(static_cast<unsigned char>(text_[p]))) ++p;
    }
    if (p == digits) return Unexpected("a number");
    if (p < end_ && (text_[p] == 'e' || text_[p] == 'E')) {
      size_t q = p + 1;
      if (q < end_ && (text_[q] == '-' || text_[q] == '+')) ++q;
      size_t exp_digits = q;
      while (q < end_ && std::isdigit(static_cast<unsigned char>(text_[q]))) ++q;
      if (q > exp_digits) p = q;
    }
  }
  if (p < end_ && IsNameChar(text_[p])) {
    // Quote the whole run, e.g. `0x10` or `1.2.3`, not just its valid prefix.
    while (p < end_ && (IsNameChar(text_[p]) || text_[p] == '+')) ++p;
    return ErrorAtOffset(start, absl::StrCat("malformed number '", Text(start, p), "'"));
  }
  pos_ = p;
  return std::string(text_ + start, p - start);
}

absl::StatusOr<double> Scanner::Double(absl::string_view type) {
  SkipTrivia();
  size_t start = pos_;
  absl::StatusOr<std::string> text = NumberText();
  if (!text.ok()) return text.status();
  bool negative = (*text)[0] == '-';
  absl::string_view body = *text;
  if (body[0] == '-' || body[0] == '+') body.remove_prefix(1);
  double value = 0;
  if (body == "inf") {
    value = HUGE_VAL;
  } else if (body == "nan") {
    value = std::nan("");
  } else {
    auto [ptr, ec] = std::from_chars(body.data(), body.data() + body.size(), value);
    if (ec == std::errc::result_out_of_range) {
      // Too small flushes to zero (or a subnormal) like strtod; too large is
      // an error, as only an explicit `inf` means infinity.
      value = std::abs(std::strtod(std::string(body).c_str(), nullptr));
      if (std::isinf(value)) {
        return ErrorAtOffset(start, absl::StrCat("'", *text, "' is out of range for ", type));
      }
    } else if (ec != std::errc() || ptr != body.data() + body.size()) {
      return ErrorAtOffset(start, absl::StrCat("malformed number '", *text, "'"));
    }
  }
  return negative ? -value : value;
}

absl::Status Scanner::SkipQuoted(std::string* out) {
  size_t start = pos_;
  ++pos_;  // opening quote
  while (pos_ < end_) {
    char c = text_[pos_++];
    if (c == '"') return absl::OkStatus();
    if (c == '\\') {
      if (pos_ >= end_) break;
      char e = text_[pos_++];
      if (out == nullptr) continue;
      switch (e) {
        case 'n': *out += '\n'; break;
        case 't': *out += '\t'; break;
        case 'r': *out += '\r'; break;
        default: *out += e; break;  // \" \\ \' and anything else literally
      }
      continue;
    }
    if (c == '\n') break;
    // A NUL would end the string wherever it is handed on as C text.
    if (c == '\0') return ErrorAtOffset(pos_ - 1, "a NUL byte inside a string");
    if (out != nullptr) *out += c;
  }
  return ErrorAtOffset(start, "unterminated string");
}

absl::StatusOr<std::string> Scanner::QuotedString() {
  SkipTrivia();
  if (PeekRaw() != '"') return Unexpected("a string");
  std::string out;
  absl::Status status = SkipQuoted(&out);
  if (!status.ok()) return status;
  return out;
}

absl::StatusOr<std::string> Scanner::VerbatimValue() {
  while (pos_ < end_ && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
  size_t start = pos_;
  std::string out;
  std::string closers;  // expected closing brackets, innermost last
  while (pos_ < end_) {
    char c = text_[pos_];
    if (closers.empty() && (c == ',' || c == '\n' || c == '\r' || c == ')' ||
                            c == '}' || c == ']')) {
      break;
    }
    if (closers.empty() && c == '/' && (PeekRawAt(1) == '/' || PeekRawAt(1) == '*')) {
      break;
    }
    if (c == '"') {
      size_t quote = pos_;
      absl::Status status = SkipQuoted(nullptr);
      if (!status.ok()) return status;
      out.append(text_ + quote, pos_ - quote);
      continue;
    }
    if (c == '{' || c == '(' || c == '[') {
      closers += c == '{' ? '}' : c == '(' ? ')' : ']';
    } else if (c == '}' || c == ')' || c == ']') {
      if (c != closers.back()) {
        return Error(absl::StrCat("expected '", std::string(1, closers.back()),
                                  "', found '", std::string(1, c), "'"));
      }
      closers.pop_back();
    }
    if (c == '\n' || c == '\r' || c == '\t') {
      // Values spread over several lines print on one.
      while (!out.empty() && out.back() == ' ') out.pop_back();
      ++pos_;
      while (pos_ < end_ && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
      out += ' ';
      continue;
    }
    out += c;
    ++pos_;
  }
  if (!closers.empty()) {
    return Error(absl::StrCat("unexpected end of input, expected '",
                              std::string(1, closers.back()), "'"));
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (out.empty()) return ErrorAtOffset(start, "expected an attribute value");
  return out;
}

absl::StatusOr<std::string> Scanner::RawUntilClosingParen() {
  size_t start = pos_;
  int depth = 0;
  while (pos_ < end_) {
    char c = text_[pos_];
    if (c == '"') {
      absl::Status status = SkipQuoted(nullptr);
      if (!status.ok()) return status;
      continue;
    }
    if (c == '(' || c == '{' || c == '[') ++depth;
    if (c == ')' || c == '}' || c == ']') {
      if (depth == 0) break;
      --depth;
    }
    ++pos_;
  }
  if (pos_ >= end_) return Error("unexpected end of input, expected ')'");
  std::string raw(text_ + start, pos_ - start);
  while (!raw.empty() && std::isspace(static_cast<unsigned char>(raw.back()))) {
    raw.pop_back();
  }
  return raw;
}

SourceLocation Scanner::Location() const { return file_.LocationOf(pos_); }
SourceLocation Scanner::LocationAt(size_t offset) const {
  return file_.LocationOf(offset);
}

absl::Status Scanner::Error(absl::string_view message) {
  SkipTrivia();
  return ErrorAtOffset(pos_, message);
}

absl::Status Scanner::ErrorAtOffset(size_t offset,
                                    absl::string_view message) const {
  if (unterminated_comment()) {
    return ErrorAt(file_.LocationOf(unterminated_comment_), "unterminated comment");
  }
  return ErrorAt(file_.LocationOf(offset), message);
}

absl::Status Scanner::Unexpected(absl::string_view expected) {
  if (pos_ >= end_) {
    return ErrorAtOffset(pos_, absl::StrCat("unexpected end of input, expected ", expected));
  }
  char c = text_[pos_];
  if (c == '\n' || c == '\r') {
    return ErrorAtOffset(pos_, absl::StrCat("expected ", expected, ", found the end of the line"));
  }
  if (c == ' ' || c == '\t') {
    return ErrorAtOffset(pos_, absl::StrCat("expected ", expected, ", found a space"));
  }
  size_t p = pos_;
  while (p < end_ && IsNameChar(text_[p]) && p - pos_ < 40) ++p;
  if (p == pos_) ++p;
  return ErrorAtOffset(pos_, absl::StrCat("expected ", expected, ", found '",
                                          Text(pos_, p), "'"));
}

}  // namespace seam
