// Golden tests: every `tests/golden/**/*.hlo` file is a list of cases run
// through the real `seam` binary, one gtest instance per case; case 3 of
// errors/syntax.hlo is `golden/GoldenTest.Case/errors_syntax_3`.
//
// Directives, all HLO comments:
//   // RUN: seam opt %s     the command; `not` in front expects a non-zero
//                           exit (a crash still fails). `%s` is the case's
//                           input. A RUN line inside a case overrides the
//                           file's first RUN line for that case.
//   // RUN: env A=1 seam ...  the same with variables set (env(1)).
//   // RUN-WHOLE-FILE: ...  the file is one case, not split on `// -----`
//                           (for inputs holding several modules).
//   // -----                separates independent cases. A case runs on a
//                           temporary file with the same base name in which
//                           earlier lines are blank and later lines dropped,
//                           so diagnostics carry the original line numbers.
//   // CHECK...: pattern    a FileCheck subset over stdout, see file_check.h.
//   // expected-error@+N:COL {{message}}   (also @-N, or an absolute @LINE)
//                           the error is N lines below this comment: the
//                           command exits with status 1 and stderr is exactly
//                           `FILE:LINE:COL: error: ...message...`, the source
//                           line and a `^` under COL. At most one per case; a
//                           `not` case needs one, or STDERR lines.
//   // STDERR: text         stderr says `text`: a `not` case's error that
//                           points at no place in the input (an option, a
//                           file that is not HLO), or a warning of a run
//                           that succeeds.
//
// SEAM_UPDATE_GOLDEN=1 rewrites expectations from the actual run, for review
// with `git diff`. A positive case's CHECK lines are replaced by a transcript
// of stdout (`CHECK:` then `CHECK-NEXT:`/`CHECK-EMPTY:` lines), placed where
// its first CHECK line was, else after its last non-blank line. A negative
// case's expected-error gets the actual place (written as @+N/@-N) and the
// whole message; one is inserted above the case's first non-comment line if
// it had none.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "file_check.h"
#include "gtest/gtest.h"

extern char** environ;

namespace seam::golden {
namespace {

namespace fs = std::filesystem;
constexpr absl::string_view kSeparator = "// -----";
constexpr int kTimeoutSeconds = 60;

bool UpdateMode() {
  const char* value = std::getenv("SEAM_UPDATE_GOLDEN");
  return value != nullptr && absl::string_view(value) == "1";
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The lines of a file; a final newline leaves an empty last element, so
// joining with "\n" gives the file back.
std::vector<std::string> ReadLines(const std::string& path) {
  return absl::StrSplit(ReadAll(path), '\n');
}

void WriteText(const std::string& path, absl::string_view text) {
  std::ofstream(path, std::ios::binary) << text;
}

bool IsComment(absl::string_view line) {
  return absl::StartsWith(absl::StripLeadingAsciiWhitespace(line), "//");
}

// ---- Directives ----

struct RunLine {
  bool whole_file = false;
  bool expect_failure = false;
  std::vector<std::string> argv;  // `seam` and `%s` not yet substituted
};

std::optional<RunLine> ParseRunLine(absl::string_view text) {
  text = absl::StripLeadingAsciiWhitespace(text);
  RunLine run;
  if (absl::ConsumePrefix(&text, "// RUN-WHOLE-FILE:")) {
    run.whole_file = true;
  } else if (!absl::ConsumePrefix(&text, "// RUN:")) {
    return std::nullopt;
  }
  run.argv = absl::StrSplit(text, ' ', absl::SkipWhitespace());
  if (!run.argv.empty() && run.argv.front() == "not") {
    run.expect_failure = true;
    run.argv.erase(run.argv.begin());
  }
  return run;
}

struct Case {
  size_t begin;  // line indices [begin, end)
  size_t end;
};

std::vector<Case> SplitCases(const std::vector<std::string>& lines) {
  for (const std::string& line : lines) {
    std::optional<RunLine> run = ParseRunLine(line);
    if (run.has_value() && run->whole_file) return {{0, lines.size()}};
    if (run.has_value()) break;
  }
  std::vector<Case> cases{{0, 0}};
  for (size_t i = 0; i < lines.size(); ++i) {
    if (absl::StripAsciiWhitespace(lines[i]) != kSeparator) continue;
    cases.back().end = i;
    cases.push_back({i + 1, 0});
  }
  cases.back().end = lines.size();
  return cases;
}

struct Directives {
  RunLine run;
  std::vector<CheckLine> checks;
  std::optional<ExpectedError> error;
  std::vector<std::string> stderr_contains;
};

// `// STDERR: text`: stderr says `text` (a `not` case's error that points at
// no place in the input, or a successful run's warning).
std::optional<std::string> ParseStderrLine(const std::string& line) {
  constexpr absl::string_view kDirective = "// STDERR:";
  absl::string_view stripped = absl::StripLeadingAsciiWhitespace(line);
  if (!absl::ConsumePrefix(&stripped, kDirective)) return std::nullopt;
  return std::string(absl::StripAsciiWhitespace(stripped));
}

absl::StatusOr<Directives> ReadDirectives(const std::vector<std::string>& lines, Case c) {
  Directives d;
  std::optional<RunLine> own_run;
  for (size_t i = c.begin; i < c.end; ++i) {
    int line = static_cast<int>(i) + 1;
    if (std::optional<RunLine> run = ParseRunLine(lines[i])) {
      if (own_run.has_value()) {
        return absl::InvalidArgumentError(absl::StrCat(line, ": a second RUN line in one case"));
      }
      own_run = run;
    }
    if (std::optional<std::string> text = ParseStderrLine(lines[i])) {
      d.stderr_contains.push_back(*text);
    }
    absl::StatusOr<std::optional<CheckLine>> check = ParseCheckLine(lines[i], line);
    if (!check.ok()) return check.status();
    if (check->has_value()) d.checks.push_back(**check);
    absl::StatusOr<std::optional<ExpectedError>> error = ParseExpectedError(lines[i], line);
    if (!error.ok()) return error.status();
    if (!error->has_value()) continue;
    if (d.error.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat(line, ": a second expected-error in one case"));
    }
    d.error = **error;
  }
  for (size_t i = 0; i < lines.size() && !own_run.has_value(); ++i) {
    own_run = ParseRunLine(lines[i]);
  }
  if (!own_run.has_value() || own_run->argv.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(c.begin + 1, ": no `// RUN: command` line"));
  }
  d.run = *own_run;
  if (d.error.has_value() && !d.run.expect_failure) {
    return absl::InvalidArgumentError(
        absl::StrCat(d.error->comment_line, ": expected-error needs a `// RUN: not ...` line"));
  }
  return d;
}

// ---- Running the command ----

struct RunResult {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  bool timed_out = false;
  std::string out;
  std::string err;
};

// Runs argv[0] directly (no shell), stdin empty, stdout and stderr to files.
RunResult RunCommand(const std::vector<std::string>& argv, const std::string& dir) {
  std::string out_path = dir + "/stdout";
  std::string err_path = dir + "/stderr";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  RunResult result;
  pid_t pid = 0;
  int spawned = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    result.err = absl::StrCat("cannot start ", argv[0], ": ", std::strerror(spawned));
    return result;
  }
  int status = 0;
  for (int waited_ms = 0; waitpid(pid, &status, WNOHANG) == 0; waited_ms += 5) {
    if (waited_ms > kTimeoutSeconds * 1000) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      result.timed_out = true;
      break;
    }
    usleep(5000);
  }
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  result.out = ReadAll(out_path);
  result.err = ReadAll(err_path);
  return result;
}

std::vector<std::string> ResolveArgv(const RunLine& run, const std::string& input) {
  std::vector<std::string> argv;
  for (const std::string& word : run.argv) {
    if (argv.empty() && word == "env") {
      argv.push_back("/usr/bin/env");
      continue;
    }
    argv.push_back(word == "seam" ? SEAM_BINARY : absl::StrReplaceAll(word, {{"%s", input}}));
  }
  return argv;
}

absl::Status CheckExit(const Directives& d, const RunResult& r) {
  const RunLine& run = d.run;
  if (r.timed_out) return absl::DeadlineExceededError("timed out");
  if (r.signal != 0) return absl::AbortedError(absl::StrCat("killed by signal ", r.signal));
  if (!run.expect_failure && r.exit_code != 0) {
    return absl::FailedPreconditionError(absl::StrCat("exit status ", r.exit_code, ", want 0"));
  }
  if (run.expect_failure && r.exit_code == 0) {
    return absl::FailedPreconditionError("exit status 0, want failure (`not`)");
  }
  if (d.error.has_value() && r.exit_code != 1) {
    return absl::FailedPreconditionError(absl::StrCat("exit status ", r.exit_code, ", want 1"));
  }
  return absl::OkStatus();
}

// ---- SEAM_UPDATE_GOLDEN ----

std::vector<std::string> UpdatedNegative(const std::vector<std::string>& lines, Case c,
                                         const std::optional<ExpectedError>& old,
                                         const Diagnostic& got) {
  std::vector<std::string> out(lines.begin() + c.begin, lines.begin() + c.end);
  if (old.has_value()) {
    std::string& line = out[old->comment_line - 1 - c.begin];
    line = line.substr(0, line.find("//")) +
           ExpectedErrorLine(got.line - old->comment_line, got.column, got.message);
    return out;
  }
  size_t k = 0;
  while (k < out.size() && (IsComment(out[k]) || absl::StripAsciiWhitespace(out[k]).empty())) ++k;
  int comment_line = static_cast<int>(c.begin + k) + 1;
  int error_line = got.line >= comment_line ? got.line + 1 : got.line;
  out.insert(out.begin() + k,
             ExpectedErrorLine(error_line - comment_line, got.column, got.message));
  return out;
}

std::vector<std::string> UpdatedPositive(const std::vector<std::string>& lines, Case c,
                                         absl::string_view stdout_text) {
  std::vector<std::string> out;
  std::optional<size_t> at;
  for (size_t i = c.begin; i < c.end; ++i) {
    absl::StatusOr<std::optional<CheckLine>> check = ParseCheckLine(lines[i], 0);
    if (check.ok() && check->has_value()) {
      if (!at.has_value()) at = out.size();
      continue;
    }
    out.push_back(lines[i]);
  }
  std::vector<std::string> block;
  std::vector<absl::string_view> printed = absl::StrSplit(stdout_text, '\n');
  if (absl::EndsWith(stdout_text, "\n")) printed.pop_back();
  for (absl::string_view line : printed) {
    if (block.empty()) {
      block.push_back(
          absl::StrCat("// CHECK: ", line.empty() ? "{{^$}}" : EscapeCheckPattern(line)));
    } else if (line.empty()) {
      block.push_back("// CHECK-EMPTY:");
    } else if (absl::StripAsciiWhitespace(line).empty()) {
      block.push_back("// CHECK-NEXT: {{^\\s+$}}");
    } else {
      block.push_back(absl::StrCat("// CHECK-NEXT: ", EscapeCheckPattern(line)));
    }
  }
  if (!at.has_value()) {  // after the last non-blank line, with a blank line between
    at = out.size();
    while (*at > 0 && absl::StripAsciiWhitespace(out[*at - 1]).empty()) --*at;
    if (!block.empty()) block.insert(block.begin(), "");
  }
  out.insert(out.begin() + *at, block.begin(), block.end());
  return out;
}

// Replaces case `c` of the file at `path` by `updated`.
void RewriteCase(const std::string& path, const std::vector<std::string>& lines, Case c,
                 const std::vector<std::string>& updated) {
  std::vector<std::string> all(lines.begin(), lines.begin() + c.begin);
  all.insert(all.end(), updated.begin(), updated.end());
  all.insert(all.end(), lines.begin() + c.end, lines.end());
  WriteText(path, absl::StrJoin(all, "\n"));
}

// ---- The test ----

struct GoldenCase {
  std::string file;  // relative to the golden directory
  size_t index;
};

void PrintTo(const GoldenCase& c, std::ostream* os) { *os << c.file << " case " << c.index; }

std::vector<GoldenCase> DiscoverCases() {
  std::vector<std::string> files;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(SEAM_GOLDEN_DIR)) {
    if (entry.is_regular_file() && entry.path().extension() == ".hlo") {
      files.push_back(fs::relative(entry.path(), SEAM_GOLDEN_DIR).string());
    }
  }
  std::sort(files.begin(), files.end());
  std::vector<GoldenCase> cases;
  for (const std::string& file : files) {
    size_t count = SplitCases(ReadLines(absl::StrCat(SEAM_GOLDEN_DIR, "/", file))).size();
    for (size_t i = 0; i < count; ++i) cases.push_back({file, i});
  }
  return cases;
}

std::string CaseName(const GoldenCase& c) {
  std::string name = c.file.substr(0, c.file.size() - 4);  // without `.hlo`
  for (char& ch : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return absl::StrCat(name, "_", c.index);
}

class GoldenTest : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(GoldenTest, Case) {
  const GoldenCase& param = GetParam();
  std::string path = absl::StrCat(SEAM_GOLDEN_DIR, "/", param.file);
  std::string where = absl::StrCat("tests/golden/", param.file);
  std::vector<std::string> lines = ReadLines(path);
  std::vector<Case> cases = SplitCases(lines);
  ASSERT_LT(param.index, cases.size()) << where << ": cases changed; rebuild to list them";
  Case c = cases[param.index];
  absl::StatusOr<Directives> d = ReadDirectives(lines, c);
  ASSERT_TRUE(d.ok()) << where << ":" << d.status().message();

  // The input: earlier lines blank, this case's lines, nothing after.
  std::vector<std::string> input_lines(c.begin, "");
  input_lines.insert(input_lines.end(), lines.begin() + c.begin, lines.begin() + c.end);
  fs::path dir =
      fs::path(::testing::TempDir()) / absl::StrCat("seam_golden_", getpid()) / CaseName(param);
  fs::create_directories(dir);
  std::string input = (dir / fs::path(param.file).filename()).string();
  WriteText(input,
            absl::StrCat(absl::StrJoin(input_lines, "\n"), c.end < lines.size() ? "\n" : ""));
  RunResult r = RunCommand(ResolveArgv(d->run, input), dir.string());
  std::error_code ignored;
  fs::remove_all(dir.parent_path(), ignored);
  std::string transcript = absl::StrCat("\n--- stdout ---\n", r.out, "--- stderr ---\n", r.err);

  absl::Status exit = CheckExit(*d, r);
  ASSERT_TRUE(exit.ok() || (UpdateMode() && d->run.expect_failure && r.exit_code > 0))
      << where << ":" << c.begin + 1 << ": " << exit.message() << transcript;
  for (const std::string& text : d->stderr_contains) {
    EXPECT_NE(r.err.find(text), std::string::npos)
        << where << ":" << c.begin + 1 << ": stderr does not say `" << text << "`" << transcript;
  }
  if (d->run.expect_failure && !d->error.has_value() && !d->stderr_contains.empty()) return;
  absl::StatusOr<Diagnostic> got;
  if (d->run.expect_failure) {
    got = ParseDiagnostic(r.err, input);
    ASSERT_TRUE(got.ok()) << where << ":" << c.begin + 1 << ": " << got.status().message()
                          << transcript;
  }
  if (UpdateMode()) {
    RewriteCase(path, lines, c,
                d->run.expect_failure ? UpdatedNegative(lines, c, d->error, *got)
                                      : UpdatedPositive(lines, c, r.out));
    return;
  }
  if (d->run.expect_failure) {
    ASSERT_TRUE(d->error.has_value())
        << where << ":" << c.begin + 1 << ": a `not` case needs an expected-error" << transcript;
    absl::Status error = CheckDiagnostic(*d->error, *got, input_lines);
    EXPECT_TRUE(error.ok()) << where << ":" << d->error->comment_line << ": " << error.message()
                            << transcript;
  } else {
    EXPECT_FALSE(d->checks.empty())
        << where << ":" << c.begin + 1 << ": no CHECK lines (SEAM_UPDATE_GOLDEN=1 writes them)";
  }
  absl::Status checked = RunFileCheck(where, d->checks, r.out);
  EXPECT_TRUE(checked.ok()) << checked.message() << transcript;
}

INSTANTIATE_TEST_SUITE_P(golden, GoldenTest, ::testing::ValuesIn(DiscoverCases()),
                         [](const ::testing::TestParamInfo<GoldenCase>& info) {
                           return CaseName(info.param);
                         });

}  // namespace
}  // namespace seam::golden
