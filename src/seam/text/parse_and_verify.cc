// The parser's public entry points: parse, verify, and render any error
// against the source text.
#include "absl/strings/str_cat.h"
#include "seam/ir/verifier.h"
#include "seam/text/parser.h"
#include "seam/util/status_macros.h"

namespace seam {
namespace {

absl::StatusOr<std::vector<std::unique_ptr<Module>>> ParseAndVerify(
    const SourceFile& file, ParseOptions options) {
  absl::StatusOr<std::vector<std::unique_ptr<Module>>> modules = ParseSourceFile(file);
  if (!modules.ok()) return file.Annotate(modules.status());
  if (options.verify) {
    for (const auto& module : *modules) {
      absl::Status status = VerifyModule(*module);
      if (!status.ok()) return file.Annotate(status);
    }
  }
  return modules;
}

}  // namespace

absl::StatusOr<std::vector<std::unique_ptr<Module>>> ParseHloText(
    absl::string_view text, absl::string_view filename, ParseOptions options) {
  return ParseAndVerify(SourceFile(std::string(filename), std::string(text)), options);
}

absl::StatusOr<std::unique_ptr<Module>> ParseHloModule(absl::string_view text,
                                                       absl::string_view filename,
                                                       ParseOptions options) {
  SEAM_ASSIGN_OR_RETURN(auto modules, ParseHloText(text, filename, options));
  if (modules.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        filename, ": error: expected one module, found ", modules.size()));
  }
  return std::move(modules.front());
}

absl::StatusOr<std::vector<std::unique_ptr<Module>>> ParseHloFile(
    const std::string& path, ParseOptions options) {
  SEAM_ASSIGN_OR_RETURN(SourceFile file, SourceFile::Read(path));
  return ParseAndVerify(file, options);
}

}  // namespace seam
