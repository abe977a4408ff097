#include "harnesses.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "seam/eval/arguments.h"
#include "seam/eval/compare.h"
#include "seam/eval/evaluator.h"
#include "seam/eval/npy.h"
#include "seam/ir/module.h"
#include "seam/passes/pipeline.h"
#include "seam/passes/registry.h"
#include "seam/text/parser.h"
#include "seam/text/printer.h"
#include "seam/util/fnv1a.h"

namespace seam::fuzz {
namespace {

// Small enough that the interpreter finishes any single instruction of a
// module within the limits quickly: a dot or convolution of such arrays
// does at most kMaxArrayElements^2 multiply-adds.
bool SmallEnoughToInterpret(const Module& module) {
  if (module.InstructionCount() > kMaxInstructions) return false;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      std::vector<const Shape*> shapes = {&instruction->shape()};
      for (size_t i = 0; i < shapes.size(); ++i) {
        const Shape& shape = *shapes[i];
        if (shape.IsTuple()) {
          for (const Shape& element : shape.tuple_shapes()) shapes.push_back(&element);
        } else if (shape.IsArray()) {
          std::optional<int64_t> elements = shape.ElementCount();
          if (!elements.has_value() || *elements > kMaxArrayElements) return false;
        }
      }
      if (const std::optional<Window>& window = instruction->attrs().window) {
        int64_t elements = 1;
        for (const WindowDim& dim : window->dims) {
          // Dilation spreads a window over more positions of its input.
          if (dim.size > kMaxWindowElements || dim.rhs_dilation > kMaxWindowElements ||
              dim.lhs_dilation > kMaxWindowElements) {
            return false;
          }
          elements *= dim.size;
          if (elements > kMaxWindowElements) return false;
        }
      }
    }
  }
  return true;
}

// The interpreter with the harness's limits: 64 MiB and one second.
absl::StatusOr<Literal> Interpret(const Module& module, const std::vector<Literal>& arguments) {
  Evaluator evaluator;
  evaluator.set_memory_limit(64 << 20);
  evaluator.set_deadline(absl::Now() + absl::Seconds(1));
  return evaluator.Run(module, arguments);
}

// Whether a run stopped at a limit of the harness rather than on its own.
bool HitLimit(const absl::Status& status) {
  return absl::StrContains(status.message(), "time limit") ||
         absl::StrContains(status.message(), "the interpreter would need");
}

absl::StatusOr<std::vector<std::unique_ptr<Module>>> ParseAndVerify(absl::string_view text) {
  return ParseHloText(text, "<fuzz>");
}

void FuzzHloParse(absl::string_view input) {
  absl::StatusOr<std::vector<std::unique_ptr<Module>>> modules = ParseAndVerify(input);
  if (!modules.ok()) {
    if (modules.status().message().empty()) FuzzFailure("hlo_parse", "an error without a message");
    return;
  }
  for (const auto& module : *modules) {
    const std::string printed = PrintModule(*module);
    absl::StatusOr<std::unique_ptr<Module>> reparsed = ParseHloModule(printed, "<printed>");
    if (!reparsed.ok()) {
      FuzzFailure("hlo_parse", absl::StrCat("a verified module's printed text does not parse:\n",
                                            reparsed.status().message(), "\n", printed));
    }
    const std::string reprinted = PrintModule(**reparsed);
    if (reprinted != printed) {
      FuzzFailure("hlo_parse", absl::StrCat("printing is not a fixed point:\n", printed,
                                            "\n-- printed again --\n", reprinted));
    }
  }
}

void FuzzHloInterpret(absl::string_view input) {
  absl::StatusOr<std::vector<std::unique_ptr<Module>>> modules = ParseAndVerify(input);
  if (!modules.ok()) return;
  for (const auto& module : *modules) {
    if (!SmallEnoughToInterpret(*module) || !CheckInterpretable(*module).ok()) continue;
    // Errors are fine (clean ones: a crash or a sanitizer report is not).
    (void)Interpret(*module, RandomArguments(*module->entry(), Fnv1a(input)));
  }
}

// The pipeline an input names on its first line (`// passes: SPEC`, as
// stored regression inputs do), else passes picked from its hash: the
// default pipeline half the time, otherwise up to eight registered passes.
std::string PickPipeline(absl::string_view input, uint64_t hash) {
  constexpr absl::string_view kNamed = "// passes: ";
  if (absl::StartsWith(input, kNamed)) {
    const absl::string_view spec = input.substr(kNamed.size(), input.find('\n') - kNamed.size());
    if (Pipeline::Parse(spec).ok()) return std::string(spec);
  }
  if (hash % 2 == 0) return "default";
  const std::vector<PassInfo>& passes = RegisteredPasses();
  std::vector<absl::string_view> picked;
  for (int n = 1 + static_cast<int>((hash >> 1) % 8); n > 0; --n) {
    hash = hash * 6364136223846793005ull + 1442695040888963407ull;
    picked.push_back(passes[(hash >> 33) % passes.size()].name);
  }
  return absl::StrJoin(picked, ",");
}

void FuzzHloPasses(absl::string_view input) {
  absl::StatusOr<std::vector<std::unique_ptr<Module>>> modules = ParseAndVerify(input);
  if (!modules.ok()) return;
  const uint64_t hash = Fnv1a(input);
  const std::string spec = PickPipeline(input, hash);
  absl::StatusOr<Pipeline> pipeline = Pipeline::Parse(spec);
  if (!pipeline.ok()) FuzzFailure("hlo_passes", pipeline.status().message());
  for (const auto& module : *modules) {
    const std::string written = PrintModule(*module);
    PipelineOptions options;
    options.verify_each = true;
    absl::StatusOr<bool> changed = pipeline->Run(*module, options);
    if (!changed.ok()) {
      // A pass may refuse a module it cannot handle, but never leave it invalid.
      if (absl::StrContains(changed.status().message(), "is invalid after pass")) {
        FuzzFailure("hlo_passes",
                    absl::StrCat(spec, ": ", changed.status().message(), "\n", written));
      }
      continue;
    }
    if (!*changed) continue;
    // The passes keep the module's meaning: compare on small modules.
    absl::StatusOr<std::unique_ptr<Module>> original = ParseHloModule(written, "<written>");
    if (!original.ok()) FuzzFailure("hlo_passes", original.status().message());
    if (!SmallEnoughToInterpret(**original) || !SmallEnoughToInterpret(*module) ||
        !CheckInterpretable(**original).ok() || !CheckInterpretable(*module).ok()) {
      continue;
    }
    const std::vector<Literal> arguments = RandomArguments(*(*original)->entry(), hash);
    absl::StatusOr<Literal> want = Interpret(**original, arguments);
    if (!want.ok()) continue;
    absl::StatusOr<Literal> got = Interpret(*module, arguments);
    if (!got.ok()) {
      if (HitLimit(got.status())) continue;
      FuzzFailure("hlo_passes",
                  absl::StrCat(spec, ": the module runs as written but not after the passes: ",
                               got.status().message(), "\n", written, "\n-- after --\n",
                               PrintModule(*module)));
    }
    const std::string differences = DescribeDifferences(*got, *want, RewriteTolerance, "result");
    if (!differences.empty()) {
      FuzzFailure("hlo_passes", absl::StrCat(spec, " changed the result:\n", differences, "\n",
                                             written, "\n-- after --\n", PrintModule(*module)));
    }
  }
}

// The first byte picks the reader (and whether .npz members are checked
// against their CRC-32, which mutations nearly always break).
void FuzzNpz(absl::string_view input) {
  if (input.empty()) return;
  const uint8_t mode = static_cast<uint8_t>(input[0]);
  input.remove_prefix(1);
  std::vector<Literal> arrays;
  if (mode % 3 == 0) {
    absl::StatusOr<Literal> array = ParseNpy(input, "<fuzz.npy>");
    if (!array.ok()) return;
    arrays.push_back(std::move(*array));
  } else {
    absl::StatusOr<NamedArrays> read = ParseNpz(
        input, "<fuzz.npz>", mode % 3 == 1 ? NpzChecks::kCrc32 : NpzChecks::kSkipCrc32ForFuzzing);
    if (!read.ok()) return;
    for (auto& [name, array] : *read) arrays.push_back(std::move(array));
  }
  for (const Literal& array : arrays) {
    absl::StatusOr<Literal> again = ParseNpy(SerializeNpy(array), "<serialized>");
    if (!again.ok()) {
      FuzzFailure("npz", absl::StrCat("an array read does not read back after writing: ",
                                      again.status().message()));
    }
    // Compared as bytes: NaN payloads must survive too.
    if (again->shape() != array.shape() || SerializeNpy(*again) != SerializeNpy(array)) {
      FuzzFailure("npz", "an array read reads back different after writing");
    }
  }
}

}  // namespace

const std::vector<Harness>& Harnesses() {
  static const std::vector<Harness> harnesses = {
      {"hlo_parse", "the parser and verifier; accepted modules print and parse back", true,
       FuzzHloParse},
      {"hlo_interpret", "the verifier and interpreter on small modules", true, FuzzHloInterpret},
      {"hlo_passes", "pass pipelines, verified after each pass and checked by the interpreter",
       true, FuzzHloPasses},
      {"npz", "the .npy and .npz readers; what they read writes and reads back", false, FuzzNpz},
  };
  return harnesses;
}

const Harness* FindHarness(absl::string_view name) {
  for (const Harness& harness : Harnesses()) {
    if (harness.name == name) return &harness;
  }
  return nullptr;
}

void FuzzFailure(absl::string_view harness, absl::string_view what) {
  std::fprintf(stderr, "fuzz harness %.*s: %.*s\n", static_cast<int>(harness.size()),
               harness.data(), static_cast<int>(what.size()), what.data());
  std::abort();
}

}  // namespace seam::fuzz
