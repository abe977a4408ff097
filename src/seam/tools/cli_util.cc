#include "seam/tools/cli_util.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "seam/eval/evaluator.h"
#include "seam/runtime/cuda_binary.h"
#include "seam/text/parser.h"
#include "seam/text/source_file.h"
#include "seam/tools/commands.h"

namespace seam {

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "%s\n", std::string(status.message()).c_str());
  return 1;
}

int FailAt(const std::string& path, const absl::Status& status) {
  absl::StatusOr<SourceFile> source = SourceFile::Read(path);
  return Fail(source.ok() ? source->Annotate(status) : status);
}

void WarnUnrunnable(const std::string& path, const Module& module) {
  absl::StatusOr<SourceFile> source = SourceFile::Read(path);
  for (const absl::Status& op : UninterpretableOps(module)) {
    absl::Status warning(op.code(), absl::StrCat(op.message(),
                                                 "; no backend runs it, so `seam run` would fail"));
    op.ForEachPayload([&](absl::string_view url, const absl::Cord& payload) {
      warning.SetPayload(url, payload);  // the location
    });
    std::string text(source.ok() ? source->Annotate(warning).message() : warning.message());
    if (size_t at = text.find("error: "); at != std::string::npos) text.replace(at, 7, "warning: ");
    std::fprintf(stderr, "%s\n", text.c_str());
  }
}

absl::StatusOr<std::unique_ptr<Module>> LoadModule(const std::string& file,
                                                   const std::string& command) {
  auto modules = ParseHloFile(file);
  if (!modules.ok()) return modules.status();
  if (modules->size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(file, ": error: holds ", modules->size(),
                                                   " modules; seam ", command, " takes one"));
  }
  return std::move(modules->front());
}

absl::Status RunPassSpec(Module& module, const std::string& spec) {
  absl::StatusOr<std::optional<Pipeline>> pipeline = Pipeline::ParseUnlessNone(spec);
  if (!pipeline.ok()) return pipeline.status();
  if (!pipeline->has_value()) return absl::OkStatus();
  return (*pipeline)->Run(module, PipelineOptions{}).status();
}

absl::Status CheckArgumentsFitInMemory(const Computation& entry) {
  double bytes = 0;
  for (const Instruction* param : entry.parameters()) {
    if (param == nullptr || !param->shape().IsArray()) continue;
    bytes += static_cast<double>(param->shape().ElementCount().value_or(0)) *
             DTypeByteSize(param->shape().dtype());
  }
  double memory = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  if (memory > 0 && bytes > memory / 2) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "the arguments of '%s' take %.1f GiB; this machine has %.1f GiB of memory, and the "
        "interpreter needs room for intermediates too",
        entry.name(), bytes / (1 << 30), memory / (1 << 30)));
  }
  return absl::OkStatus();
}

absl::Status CudaBackendAvailable() {
  absl::Status device = runtime::CudaDevicePresent();
  if (device.ok()) return device;
  return absl::UnavailableError(absl::StrCat(
      "--backend=cuda: ", device.message(),
      "; `seam compile FILE --backend=cuda --target=sm_90` compiles the kernels to PTX without one"));
}

CLI::Validator NonNegativeInteger() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        const size_t first = value.find_first_not_of(" \t");
        if (first != std::string::npos && value[first] == '-') {
          return "must be a non-negative integer, got " + value;
        }
        return "";
      },
      "NONNEGATIVE");
}

CLI::Validator Seconds() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        double seconds = 0;
        if (absl::SimpleAtod(value, &seconds) && std::isfinite(seconds) && seconds >= 0) return "";
        return "must be a number of seconds, 0 or more, got " + value;
      },
      "SECONDS");
}

}  // namespace seam
