#include "file_check.h"

#include <algorithm>
#include <regex>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace seam::golden {
namespace {

struct Directive {
  absl::string_view name;
  CheckKind kind;
};
constexpr Directive kDirectives[] = {
    {"CHECK", CheckKind::kCheck},       {"CHECK-LABEL", CheckKind::kLabel},
    {"CHECK-NEXT", CheckKind::kNext},   {"CHECK-SAME", CheckKind::kSame},
    {"CHECK-EMPTY", CheckKind::kEmpty}, {"CHECK-NOT", CheckKind::kNot},
};

// A compiled pattern: a plain substring, or a regex when it holds `{{...}}`.
struct Pattern {
  std::string literal;
  std::optional<std::regex> regex;
};

// A place in the output: line index and byte column within the line.
struct Position {
  size_t line = 0;
  size_t column = 0;
};

std::string EscapeRegex(absl::string_view text) {
  std::string out;
  for (char c : text) {
    if (absl::string_view("\\^$.|?*+()[]{}").find(c) != absl::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

absl::StatusOr<Pattern> Compile(absl::string_view text) {
  if (!absl::StrContains(text, "{{")) return Pattern{std::string(text), std::nullopt};
  std::string regex;
  size_t at = 0;
  while (at < text.size()) {
    size_t open = text.find("{{", at);
    if (open == absl::string_view::npos) open = text.size();
    regex += EscapeRegex(text.substr(at, open - at));
    if (open == text.size()) break;
    size_t close = text.find("}}", open + 2);
    if (close == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat("unterminated '{{' in '", text, "'"));
    }
    absl::StrAppend(&regex, "(?:", text.substr(open + 2, close - open - 2), ")");
    at = close + 2;
  }
  try {
    return Pattern{"", std::regex(regex, std::regex::ECMAScript)};
  } catch (const std::regex_error& e) {
    return absl::InvalidArgumentError(absl::StrCat("bad regex in '", text, "': ", e.what()));
  }
}

// The [begin, end) columns of the first match in `line` within [from, to).
std::optional<std::pair<size_t, size_t>> Find(const Pattern& pattern, absl::string_view line,
                                              size_t from, size_t to = std::string::npos) {
  if (from > line.size()) return std::nullopt;
  absl::string_view window = line.substr(from, to == std::string::npos ? to : to - from);
  if (!pattern.regex.has_value()) {
    size_t at = window.find(pattern.literal);
    if (at == absl::string_view::npos) return std::nullopt;
    return std::make_pair(from + at, from + at + pattern.literal.size());
  }
  std::string text(window);
  std::smatch match;
  if (!std::regex_search(text, match, *pattern.regex)) return std::nullopt;
  size_t begin = from + static_cast<size_t>(match.position(0));
  return std::make_pair(begin, begin + static_cast<size_t>(match.length(0)));
}

class Checker {
 public:
  Checker(absl::string_view file, absl::string_view output) : file_(file) {
    lines_ = absl::StrSplit(output, '\n');
    if (absl::EndsWith(output, "\n")) lines_.pop_back();
  }

  absl::Status Run(const std::vector<CheckLine>& checks);

 private:
  absl::StatusOr<std::pair<Position, Position>> Match(const CheckLine& check,
                                                      const Pattern& pattern);
  absl::Status CheckNots(Position from, Position to);
  absl::Status Fail(const CheckLine& check, absl::string_view why) const {
    return absl::NotFoundError(
        absl::StrCat(file_, ":", check.line, ": ", CheckKindName(check.kind), ": ", why));
  }
  std::string Quote(size_t line) const {
    return line < lines_.size() ? absl::StrCat("output line ", line + 1, ": '", lines_[line], "'")
                                : "the end of the output";
  }

  absl::string_view file_;
  std::vector<absl::string_view> lines_;
  Position at_;  // the end of the previous match
  std::vector<std::pair<const CheckLine*, Pattern>> nots_;
};

absl::Status Checker::Run(const std::vector<CheckLine>& checks) {
  bool matched = false;
  for (const CheckLine& check : checks) {
    absl::StatusOr<Pattern> pattern = Compile(check.pattern);
    if (!pattern.ok()) return Fail(check, pattern.status().message());
    if (check.kind == CheckKind::kNot) {
      nots_.push_back({&check, *std::move(pattern)});
      continue;
    }
    bool follows = check.kind == CheckKind::kNext || check.kind == CheckKind::kSame ||
                   check.kind == CheckKind::kEmpty;
    if (follows && !matched) return Fail(check, "no previous match to follow");
    absl::StatusOr<std::pair<Position, Position>> match = Match(check, *pattern);
    if (!match.ok()) return match.status();
    if (absl::Status status = CheckNots(at_, match->first); !status.ok()) return status;
    at_ = match->second;
    matched = true;
  }
  return CheckNots(at_, Position{lines_.size(), 0});
}

absl::StatusOr<std::pair<Position, Position>> Checker::Match(const CheckLine& check,
                                                             const Pattern& pattern) {
  std::string what = absl::StrCat("'", check.pattern, "'");
  switch (check.kind) {
    case CheckKind::kCheck:
    case CheckKind::kLabel:
      for (size_t line = at_.line; line < lines_.size(); ++line) {
        if (auto m = Find(pattern, lines_[line], line == at_.line ? at_.column : 0)) {
          return std::make_pair(Position{line, m->first}, Position{line, m->second});
        }
      }
      return Fail(check, absl::StrCat(what, " not found at or after ", Quote(at_.line)));
    case CheckKind::kNext:
      if (at_.line + 1 < lines_.size()) {
        if (auto m = Find(pattern, lines_[at_.line + 1], 0)) {
          return std::make_pair(Position{at_.line + 1, m->first},
                                Position{at_.line + 1, m->second});
        }
      }
      return Fail(check, absl::StrCat(what, " not found on ", Quote(at_.line + 1)));
    case CheckKind::kSame:
      if (auto m = Find(pattern, lines_[at_.line], at_.column)) {
        return std::make_pair(Position{at_.line, m->first}, Position{at_.line, m->second});
      }
      return Fail(check, absl::StrCat(what, " not found later on ", Quote(at_.line)));
    case CheckKind::kEmpty:
      if (at_.line + 1 < lines_.size() && lines_[at_.line + 1].empty()) {
        return std::make_pair(Position{at_.line + 1, 0}, Position{at_.line + 1, 0});
      }
      return Fail(check, absl::StrCat("expected an empty line, found ", Quote(at_.line + 1)));
    case CheckKind::kNot:
      break;
  }
  return Fail(check, "internal error: CHECK-NOT has no position");
}

absl::Status Checker::CheckNots(Position from, Position to) {
  for (const auto& [check, pattern] : nots_) {
    for (size_t line = from.line; line <= to.line && line < lines_.size(); ++line) {
      size_t begin = line == from.line ? from.column : 0;
      size_t end = line == to.line ? to.column : std::string::npos;
      if (Find(pattern, lines_[line], begin, end)) {
        return Fail(*check, absl::StrCat("'", check->pattern, "' found on ", Quote(line)));
      }
    }
  }
  nots_.clear();
  return absl::OkStatus();
}

}  // namespace

absl::string_view CheckKindName(CheckKind kind) {
  for (const Directive& directive : kDirectives) {
    if (directive.kind == kind) return directive.name;
  }
  return "CHECK?";
}

absl::StatusOr<std::optional<CheckLine>> ParseCheckLine(absl::string_view text, int line) {
  text = absl::StripLeadingAsciiWhitespace(text);
  if (!absl::ConsumePrefix(&text, "//")) return std::nullopt;
  text = absl::StripLeadingAsciiWhitespace(text);
  size_t word_end = 0;
  while (
      word_end < text.size() &&
      (absl::ascii_isupper(static_cast<unsigned char>(text[word_end])) || text[word_end] == '-')) {
    ++word_end;
  }
  absl::string_view word = text.substr(0, word_end);
  bool has_colon = word_end < text.size() && text[word_end] == ':';
  const Directive* directive = nullptr;
  for (const Directive& d : kDirectives) {
    if (d.name == word) directive = &d;
  }
  if (directive == nullptr) {
    if (has_colon && absl::StartsWith(word, "CHECK")) {
      return absl::InvalidArgumentError(absl::StrCat(line, ": unknown directive '", word, ":'"));
    }
    return std::nullopt;
  }
  if (!has_colon) {
    return absl::InvalidArgumentError(absl::StrCat(line, ": '", word, "' needs a ':' after it"));
  }
  std::string pattern(absl::StripAsciiWhitespace(text.substr(word_end + 1)));
  if (pattern.empty() != (directive->kind == CheckKind::kEmpty)) {
    return absl::InvalidArgumentError(absl::StrCat(
        line, ": ", word,
        directive->kind == CheckKind::kEmpty ? " takes no pattern" : " needs a pattern"));
  }
  return CheckLine{directive->kind, std::move(pattern), line};
}

absl::Status RunFileCheck(absl::string_view file, const std::vector<CheckLine>& checks,
                          absl::string_view output) {
  return Checker(file, output).Run(checks);
}

std::string EscapeCheckPattern(absl::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.substr(i, 2) == "{{") {
      out += "{{\\{\\{}}";
      ++i;
    } else {
      out += text[i];
    }
  }
  return out;
}

absl::StatusOr<std::optional<ExpectedError>> ParseExpectedError(absl::string_view text, int line) {
  absl::string_view comment = absl::StripLeadingAsciiWhitespace(text);
  if (!absl::StartsWith(comment, "//") || !absl::StrContains(text, "expected-error")) {
    return std::nullopt;
  }
  static const std::regex kForm(R"(^\s*//\s*expected-error@([+-]?)(\d+):(\d+)\s+\{\{(.*)\}\}\s*$)");
  std::string owned(text);
  std::smatch m;
  if (!std::regex_match(owned, m, kForm)) {
    return absl::InvalidArgumentError(absl::StrCat(
        line, ": malformed expected-error, want `// expected-error@+N:COL {{message}}`"));
  }
  int number = std::stoi(m[2]);
  int target = m[1] == "+" ? line + number : m[1] == "-" ? line - number : number;
  return ExpectedError{line, target, std::stoi(m[3]), m[4]};
}

std::string ExpectedErrorLine(int delta, int column, absl::string_view message) {
  return absl::StrCat("// expected-error@", delta < 0 ? "-" : "+", std::abs(delta), ":", column,
                      " {{", message, "}}");
}

absl::StatusOr<Diagnostic> ParseDiagnostic(absl::string_view stderr_text, absl::string_view file) {
  std::vector<std::string> lines = absl::StrSplit(stderr_text, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  int error_lines = std::count_if(lines.begin(), lines.end(), [](const std::string& line) {
    return absl::StrContains(line, ": error: ");
  });
  if (error_lines != 1 || lines.size() != 3) {
    return absl::InvalidArgumentError(absl::StrCat(
        "stderr should be one `: error: ` line, the source line and a caret line; it has ",
        lines.size(), " lines, ", error_lines, " with `: error: `"));
  }
  absl::string_view head = lines[0];
  Diagnostic e{0, 0, "", lines[1], lines[2]};
  std::vector<absl::string_view> parts;
  if (absl::ConsumePrefix(&head, absl::StrCat(file, ":"))) {
    parts = absl::StrSplit(head, absl::MaxSplits(':', 2));
  }
  if (parts.size() != 3 || !absl::SimpleAtoi(parts[0], &e.line) ||
      !absl::SimpleAtoi(parts[1], &e.column) || !absl::StartsWith(parts[2], " error: ")) {
    return absl::InvalidArgumentError("the error does not start with `FILE:LINE:COL: error: `");
  }
  e.message = std::string(parts[2].substr(8));
  return e;
}

absl::Status CheckDiagnostic(const ExpectedError& want, const Diagnostic& got,
                             const std::vector<std::string>& input_lines) {
  if (got.line != want.line || got.column != want.column) {
    return absl::NotFoundError(absl::StrCat("error at ", got.line, ":", got.column, ", want ",
                                            want.line, ":", want.column));
  }
  if (!absl::StrContains(got.message, want.message)) {
    return absl::NotFoundError(
        absl::StrCat("message '", got.message, "' lacks '", want.message, "'"));
  }
  size_t index = static_cast<size_t>(got.line - 1);
  std::string source = index < input_lines.size() ? input_lines[index] : "";
  if (absl::StartsWith(got.source, "...")) return absl::OkStatus();  // a long line, cut
  size_t caret = got.caret.find('^');
  if (got.source != source) return absl::NotFoundError("the second line is not the source line");
  if (caret + 1 != got.caret.size() || caret != static_cast<size_t>(got.column - 1) ||
      !absl::StripAsciiWhitespace(got.caret.substr(0, caret)).empty()) {
    return absl::NotFoundError("the third line is not a caret under the column");
  }
  return absl::OkStatus();
}

}  // namespace seam::golden
