#include "seam/passes/pipeline.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "seam/ir/verifier.h"
#include "seam/passes/registry.h"
#include "seam/text/printer.h"
#include "seam/util/status_macros.h"

namespace seam {
namespace {

// Levenshtein distance, for "did you mean" on misspelt pass names.
size_t EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string Suggestion(absl::string_view name) {
  absl::string_view best;
  size_t best_distance = 3;  // further than this is not a typo
  for (const PassInfo& info : RegisteredPasses()) {
    size_t d = EditDistance(name, info.name);
    if (d < best_distance) {
      best = info.name;
      best_distance = d;
    }
  }
  return best.empty() ? " (`seam passes` lists them)" : absl::StrCat(" (did you mean '", best, "'?)");
}

}  // namespace

// Recursive descent over the spec, tracking the column for errors.
class Pipeline::Parser {
 public:
  explicit Parser(absl::string_view spec) : spec_(spec) {}

  absl::StatusOr<std::vector<Step>> ParseAll() {
    SEAM_ASSIGN_OR_RETURN(std::vector<Step> steps, ParseList(/*depth=*/0));
    SkipSpaces();
    if (pos_ != spec_.size()) return Error(absl::StrCat("unexpected '", spec_.substr(pos_, 1), "'"));
    return steps;
  }

 private:
  absl::StatusOr<std::vector<Step>> ParseList(int depth) {
    std::vector<Step> steps;
    while (true) {
      SEAM_RETURN_IF_ERROR(ParseStep(depth, steps));
      SkipSpaces();
      if (pos_ < spec_.size() && spec_[pos_] == ',') {
        ++pos_;
        continue;
      }
      return steps;
    }
  }

  absl::Status ParseStep(int depth, std::vector<Step>& steps) {
    SkipSpaces();
    size_t start = pos_;
    while (pos_ < spec_.size() &&
           (absl::ascii_isalnum(spec_[pos_]) || spec_[pos_] == '-' || spec_[pos_] == '_')) {
      ++pos_;
    }
    absl::string_view name = spec_.substr(start, pos_ - start);
    if (name.empty()) {
      return Error(pos_ < spec_.size() ? absl::StrCat("expected a pass name, found '",
                                                      spec_.substr(pos_, 1), "'")
                                       : "expected a pass name at the end");
    }
    SkipSpaces();
    if (name == "fixpoint") {
      if (pos_ >= spec_.size() || spec_[pos_] != '(') return Error("expected '(' after fixpoint");
      ++pos_;
      SEAM_ASSIGN_OR_RETURN(std::vector<Step> body, ParseList(depth + 1));
      SkipSpaces();
      if (pos_ >= spec_.size() || spec_[pos_] != ')') return Error("expected ')' to close fixpoint(");
      ++pos_;
      steps.push_back(Step{nullptr, std::move(body)});
      return absl::OkStatus();
    }
    if (const NamedPipeline* named = FindNamedPipeline(name); named != nullptr) {
      if (depth > 4) return Error(absl::StrCat("'", name, "' nested too deeply"));
      Parser inner(named->spec);
      SEAM_ASSIGN_OR_RETURN(std::vector<Step> expanded, inner.ParseList(depth + 1));
      for (Step& s : expanded) steps.push_back(std::move(s));
      return absl::OkStatus();
    }
    const PassInfo* info = FindPass(name);
    if (info == nullptr) {
      pos_ = start;
      return Error(absl::StrCat("unknown pass '", name, "'", Suggestion(name)));
    }
    steps.push_back(Step{info->Create(), {}});
    return absl::OkStatus();
  }

  void SkipSpaces() {
    while (pos_ < spec_.size() && absl::ascii_isspace(spec_[pos_])) ++pos_;
  }

  absl::Status Error(absl::string_view message) const {
    return absl::InvalidArgumentError(
        absl::StrCat("--passes: ", message, " at column ", pos_ + 1, " of '", spec_, "'"));
  }

  absl::string_view spec_;
  size_t pos_ = 0;
};

absl::StatusOr<std::optional<Pipeline>> Pipeline::ParseUnlessNone(absl::string_view spec) {
  if (spec.empty() || spec == "none") return std::nullopt;
  SEAM_ASSIGN_OR_RETURN(Pipeline pipeline, Parse(spec));
  return std::optional<Pipeline>(std::move(pipeline));
}

absl::StatusOr<Pipeline> Pipeline::Parse(absl::string_view spec) {
  Parser parser(spec);
  Pipeline pipeline;
  SEAM_ASSIGN_OR_RETURN(pipeline.steps_, parser.ParseAll());
  return pipeline;
}

// Runs steps, recording, verifying and dumping as the options say.
class Pipeline::Runner {
 public:
  Runner(Module& module, const PipelineOptions& options, PipelineReport* report)
      : module_(module), options_(options), report_(report) {}

  absl::StatusOr<bool> RunSteps(const std::vector<Step>& steps) {
    bool changed = false;
    for (const Step& step : steps) {
      bool step_changed = false;
      if (step.pass != nullptr) {
        SEAM_ASSIGN_OR_RETURN(step_changed, RunPass(*step.pass));
      } else {
        SEAM_ASSIGN_OR_RETURN(step_changed, RunFixpoint(step.fixpoint_body));
      }
      changed |= step_changed;
    }
    return changed;
  }

 private:
  absl::StatusOr<bool> RunFixpoint(const std::vector<Step>& body) {
    bool changed = false;
    for (int i = 0; i < options_.max_fixpoint_iterations; ++i) {
      SEAM_ASSIGN_OR_RETURN(bool body_changed, RunSteps(body));
      if (!body_changed) return changed;
      changed = true;
    }
    if (report_ != nullptr) ++report_->unconverged_fixpoints;
    return changed;
  }

  absl::StatusOr<bool> RunPass(Pass& pass) {
    PassRunRecord record{std::string(pass.name()), false, 0, module_.InstructionCount(), 0};
    auto start = std::chrono::steady_clock::now();
    absl::StatusOr<bool> changed = pass.Run(module_);
    record.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!changed.ok()) {
      return absl::Status(changed.status().code(),
                          absl::StrCat("pass '", pass.name(), "': ", changed.status().message()));
    }
    record.changed = *changed;
    record.ops_after = module_.InstructionCount();
    if (report_ != nullptr) report_->runs.push_back(record);
    if (*changed && options_.verify_each) {
      absl::Status verified = VerifyModule(module_);
      if (!verified.ok()) {
        return absl::InternalError(absl::StrCat("the module is invalid after pass '", pass.name(),
                                                "': ", verified.message()));
      }
    }
    if (*changed && !options_.dump_to.empty()) SEAM_RETURN_IF_ERROR(Dump(pass.name()));
    return *changed;
  }

  absl::Status Dump(absl::string_view pass_name) {
    std::error_code error;
    std::filesystem::create_directories(options_.dump_to, error);
    std::string path = absl::StrFormat("%s/%04d.%s.%s.hlo", options_.dump_to, ++dumps_,
                                       module_.name(), pass_name);
    std::ofstream out(path);
    out << PrintModule(module_);
    if (!out) return absl::UnavailableError(absl::StrCat("cannot write '", path, "'"));
    return absl::OkStatus();
  }

  Module& module_;
  const PipelineOptions& options_;
  PipelineReport* report_;
  int dumps_ = 0;
};

absl::StatusOr<bool> Pipeline::Run(Module& module, const PipelineOptions& options,
                                   PipelineReport* report) {
  Runner runner(module, options, report);
  return runner.RunSteps(steps_);
}

namespace {

void AppendSpec(const auto& steps, std::vector<std::string>& out) {
  for (const auto& step : steps) {
    if (step.pass != nullptr) {
      out.emplace_back(step.pass->name());
    } else {
      std::vector<std::string> body;
      AppendSpec(step.fixpoint_body, body);
      out.push_back(absl::StrCat("fixpoint(", absl::StrJoin(body, ","), ")"));
    }
  }
}

}  // namespace

std::string Pipeline::ToString() const {
  std::vector<std::string> parts;
  AppendSpec(steps_, parts);
  return absl::StrJoin(parts, ",");
}

std::string PipelineReport::Summary() const {
  struct Totals {
    int runs = 0, changes = 0;
    double seconds = 0;
    int64_t delta = 0;
  };
  // Passes in the order they first ran.
  std::vector<std::pair<std::string, Totals>> by_pass;
  std::map<std::string, size_t> index;
  double total_seconds = 0;
  for (const PassRunRecord& r : runs) {
    auto [it, inserted] = index.emplace(r.pass, by_pass.size());
    if (inserted) by_pass.push_back({r.pass, Totals{}});
    Totals& t = by_pass[it->second].second;
    ++t.runs;
    t.changes += r.changed;
    t.seconds += r.seconds;
    t.delta += r.ops_after - r.ops_before;
    total_seconds += r.seconds;
  }
  std::string out = absl::StrFormat("%-36s %5s %7s %10s %9s\n", "pass", "runs", "changed",
                                    "time(ms)", "op delta");
  for (const auto& [name, t] : by_pass) {
    absl::StrAppendFormat(&out, "%-36s %5d %7d %10.2f %+9d\n", name, t.runs, t.changes,
                          t.seconds * 1e3, t.delta);
  }
  int64_t delta = runs.empty() ? 0 : runs.back().ops_after - runs.front().ops_before;
  absl::StrAppendFormat(&out, "%-36s %5d %7s %10.2f %+9d\n", "total", static_cast<int>(runs.size()),
                        "", total_seconds * 1e3, delta);
  if (unconverged_fixpoints > 0) {
    absl::StrAppendFormat(&out, "warning: %d fixpoint(...) hit the iteration limit\n",
                          unconverged_fixpoints);
  }
  return out;
}

}  // namespace seam
