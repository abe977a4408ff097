// Fuzz harnesses: each takes arbitrary bytes and drives one of Seam's
// input paths, failing loudly (FuzzFailure) when a property that must hold
// for every input does not, beyond the sanitizers' own checks. The same
// harnesses run under libFuzzer (fuzz_<name>), replay the stored corpus in
// the unit tests, and are what the mutation campaign's tool mutates for.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace seam::fuzz {

struct Harness {
  absl::string_view name;
  absl::string_view purpose;
  // Whether inputs are HLO text, which the structure-aware mutator
  // understands; otherwise they are bytes (an .npy or .npz file).
  bool hlo_text;
  void (*run)(absl::string_view input);
};

// hlo_parse: the parser and verifier; a module they accept prints, parses
//   back and prints the same text again.
// hlo_interpret: the verifier and interpreter on small modules (arrays of
//   at most kMaxArrayElements, windows of at most kMaxWindowElements, one
//   second of interpretation): a verified module runs or fails cleanly.
// hlo_passes: graph pass pipelines (one named on the first line as
//   `// passes: SPEC`, else the default or passes picked from the input's
//   hash) verified after every pass; on small modules the interpreter checks
//   the result against the module as written.
// npz: the .npy and .npz readers; what they read serializes and reads back
//   equal.
const std::vector<Harness>& Harnesses();
const Harness* FindHarness(absl::string_view name);

inline constexpr int64_t kMaxArrayElements = 4096;
inline constexpr int64_t kMaxWindowElements = 4096;
inline constexpr int kMaxInstructions = 2000;

// Prints `what` and the input's description to stderr and aborts: the
// harness found a defect (a fuzzer then stores the input as a crash).
[[noreturn]] void FuzzFailure(absl::string_view harness, absl::string_view what);

}  // namespace seam::fuzz
