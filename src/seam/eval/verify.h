// `seam run --verify`'s judgement of a compiled run: each output against
// the interpreter's on the module as written, with a second look at those
// over their bounds (compare.h: DescribeVerifyDifferences, WithinSensitivity).
// Shared by the command and the differential tests of the default
// (excess-precision) numerics.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "seam/eval/arguments.h"
#include "seam/eval/compare.h"
#include "seam/ir/module.h"

namespace seam {

struct OutputVerdict {
  std::string name;                 // "output 3 (add.12)"
  std::optional<ArrayError> error;  // float outputs of the oracle's shape
  // Why it fails ("" when it passes), one line per differing array.
  std::string failure;
  // The second look's finding, where an output over its bounds had one:
  // its error beside how far one-ulp nudges move the oracle.
  std::string second_look;
};

// The interpreter's results of `original` on `arguments`, one per output,
// accumulating reductions wide when `wide` (as compiled kernels do); with
// `rounding_nudge`, every rounded result moved by one ulp at random from
// that seed (Evaluator::set_rounding_nudge).
absl::StatusOr<std::vector<NamedResult>> RunOracle(const Module& original,
                                                   const std::vector<Literal>& arguments, bool wide,
                                                   std::optional<uint64_t> rounding_nudge);

// Judges `outputs` (one per output of `original`, as NameResults splits
// them) against the oracle on `arguments`. An output over its bounds gets a
// second look: the oracle runs again with its inputs and every rounded
// result nudged by one ulp (seeded by `seed`), and the output passes when
// it is within kSensitivityFactor times as far as that run moved. Errors:
// the oracle fails, or the output count differs.
absl::StatusOr<std::vector<OutputVerdict>> JudgeOutputs(const Module& original,
                                                        const std::vector<Literal>& arguments,
                                                        const std::vector<NamedResult>& outputs,
                                                        bool wide, uint64_t seed);

}  // namespace seam
