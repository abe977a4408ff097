#include "seam/compiler/module_cache.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "seam/runtime/jit.h"
#include "seam/text/parser.h"
#include "seam/text/printer.h"
#include "seam/util/files.h"
#include "seam/util/status_macros.h"

namespace seam::compiler {
namespace {

namespace fs = std::filesystem;

constexpr char kHeader[] = "// seam module cache: key=";

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The Seam build this code belongs to: the executable or library holding
// it, by path, size and modification time. A rebuild changes it, so a
// cached module never outlives the passes that made it.
const std::string& BuildIdentity() {
  static const std::string* identity = [] {
    Dl_info info;
    struct stat st;
    if (dladdr(reinterpret_cast<void*>(&BuildIdentity), &info) == 0 || info.dli_fname == nullptr ||
        stat(info.dli_fname, &st) != 0) {
      // Unknown: a key no other process shares, so nothing stale is used.
      return new std::string(absl::StrFormat("pid %d", getpid()));
    }
    return new std::string(absl::StrFormat("%s %d %d.%09d", info.dli_fname, st.st_size,
                                           st.st_mtim.tv_sec, st.st_mtim.tv_nsec));
  }();
  return *identity;
}

// The cached module of `entry`, or an error saying why it cannot be used.
absl::StatusOr<std::unique_ptr<Module>> ReadEntry(const std::string& entry,
                                                  const std::string& key) {
  SEAM_ASSIGN_OR_RETURN(std::string text, ReadRegularFile(entry));
  const auto newline = std::find(text.begin(), text.end(), '\n');
  if (newline == text.end()) return absl::DataLossError("no header");
  const std::string header(text.begin(), newline);
  std::string body(newline + 1, text.end());
  if (header != absl::StrCat(kHeader, key, " body=", runtime::StableHash(body))) {
    return absl::DataLossError(absl::StrCat(entry, " is not the entry it is named after"));
  }
  return ParseHloModule(body, entry);
}

// Drops the op names and source lines (`metadata`) of every instruction:
// nothing that runs a module reads them, and they were two thirds of
// Gemma-3's optimized text (0.8 of 1.27 MB), hence of a warm start's
// parse. Dropped on both paths, so a run from the cache and one after the
// passes see the same module.
void DropMetadata(Module& module) {
  for (const std::unique_ptr<Computation>& computation : module.computations()) {
    for (const std::unique_ptr<Instruction>& instruction : computation->instructions()) {
      std::vector<VerbatimAttribute>& verbatim = instruction->mutable_attrs().verbatim;
      std::erase_if(verbatim, [](const VerbatimAttribute& a) { return a.name == "metadata"; });
    }
  }
}

// Publishes `module` as the entry for `key`: written aside, then renamed.
// A cache that cannot be written only costs the next run the passes.
void WriteEntry(const std::string& entry, const std::string& key, const Module& module) {
  const std::string body = PrintModule(module);
  WriteFileAtomically(entry,
                      absl::StrCat(kHeader, key, " body=", runtime::StableHash(body), "\n", body))
      .IgnoreError();
}

// Dumps after each pass, and verification after each, ask for the passes
// to run.
bool Cacheable(const PipelineOptions& options) {
  return options.dump_to.empty() && !options.verify_each;
}

// The module of HLO `text` (unreadable: not cached) after `pipeline`.
absl::StatusOr<OptimizedModule> Optimize(
    const absl::StatusOr<std::string>& text, Pipeline& pipeline, const PipelineOptions& options,
    absl::FunctionRef<absl::StatusOr<std::unique_ptr<Module>>()> load) {
  OptimizedModule result;
  auto start = std::chrono::steady_clock::now();
  std::string key, entry;
  absl::StatusOr<std::string> dir = absl::UnavailableError("not cached");
  if (Cacheable(options)) dir = runtime::CacheDirectory();
  if (dir.ok() && text.ok()) {
    key = runtime::StableHash(absl::StrCat(*text, "\npasses: ", pipeline.ToString(), " at most ",
                                           options.max_fixpoint_iterations,
                                           "\nbuild: ", BuildIdentity()));
    entry = absl::StrCat(*dir, "/", key, ".hlo");
    absl::StatusOr<std::unique_ptr<Module>> cached = ReadEntry(entry, key);
    if (cached.ok()) {
      result.module = std::move(*cached);
      result.cache_hit = true;
      result.parse_seconds = SecondsSince(start);
      return result;
    }
    // Missing, or corrupt, foreign, not a regular file: rebuilt below.
    std::error_code ignored;
    fs::remove(entry, ignored);
  }
  SEAM_ASSIGN_OR_RETURN(result.module, load());
  result.parse_seconds = SecondsSince(start);
  auto passes_start = std::chrono::steady_clock::now();
  SEAM_RETURN_IF_ERROR(pipeline.Run(*result.module, options).status());
  DropMetadata(*result.module);
  result.passes_seconds = SecondsSince(passes_start);
  if (!entry.empty()) WriteEntry(entry, key, *result.module);
  return result;
}

}  // namespace

absl::StatusOr<OptimizedModule> LoadOptimizedModule(
    const std::string& path, Pipeline& pipeline, const PipelineOptions& options,
    absl::FunctionRef<absl::StatusOr<std::unique_ptr<Module>>()> load) {
  absl::StatusOr<std::string> text = absl::UnavailableError("not cached");
  if (Cacheable(options)) text = ReadFile(path);
  return Optimize(text, pipeline, options, load);
}

absl::StatusOr<OptimizedModule> OptimizeModuleText(
    const std::string& text, Pipeline& pipeline, const PipelineOptions& options,
    absl::FunctionRef<absl::StatusOr<std::unique_ptr<Module>>()> load) {
  return Optimize(text, pipeline, options, load);
}

}  // namespace seam::compiler
