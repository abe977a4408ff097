#include "seam/eval/verify.h"

#include "absl/strings/str_cat.h"
#include "seam/eval/evaluator.h"
#include "seam/eval/random_fill.h"
#include "seam/util/status_macros.h"

namespace seam {
namespace {

bool SameFloatArrays(const Literal& a, const Literal& b) {
  return a.shape().IsArray() && b.shape().IsArray() && IsFloat(a.shape().dtype()) &&
         a.shape().dtype() == b.shape().dtype() && a.shape().dims() == b.shape().dims();
}

}  // namespace

absl::StatusOr<std::vector<NamedResult>> RunOracle(const Module& original,
                                                   const std::vector<Literal>& arguments, bool wide,
                                                   std::optional<uint64_t> rounding_nudge) {
  Evaluator evaluator;
  evaluator.set_wide_accumulation(wide);
  evaluator.set_rounding_nudge(rounding_nudge);
  SEAM_ASSIGN_OR_RETURN(Literal expected, evaluator.Run(original, arguments));
  return NameResults(*original.entry(), std::move(expected));
}

absl::StatusOr<std::vector<OutputVerdict>> JudgeOutputs(const Module& original,
                                                        const std::vector<Literal>& arguments,
                                                        const std::vector<NamedResult>& outputs,
                                                        bool wide, uint64_t seed) {
  SEAM_ASSIGN_OR_RETURN(std::vector<NamedResult> want,
                        RunOracle(original, arguments, wide, std::nullopt));
  if (want.size() != outputs.size()) {
    return absl::FailedPreconditionError(
        absl::StrCat(outputs.size(), " outputs after the passes, ", want.size(), " before"));
  }
  std::vector<OutputVerdict> verdicts(want.size());
  bool any_differ = false;
  for (size_t i = 0; i < want.size(); ++i) {
    OutputVerdict& v = verdicts[i];
    v.name = absl::StrCat("output ", i, " (", want[i].name, ")");
    if (SameFloatArrays(outputs[i].value, want[i].value)) {
      v.error = MeasureArrayError(outputs[i].value, want[i].value);
    }
    v.failure = DescribeVerifyDifferences(outputs[i].value, want[i].value, v.name);
    any_differ |= !v.failure.empty();
  }
  if (!any_differ) return verdicts;
  std::vector<Literal> nudged = arguments;
  for (size_t i = 0; i < nudged.size(); ++i) NudgeByOneUlp(nudged[i], seed + i);
  SEAM_ASSIGN_OR_RETURN(std::vector<NamedResult> moved, RunOracle(original, nudged, wide, seed));
  for (size_t i = 0; i < want.size(); ++i) {
    OutputVerdict& v = verdicts[i];
    if (v.failure.empty() || !v.error.has_value()) continue;
    const Literal& expected = want[i].value;
    const ArrayError sensitivity = MeasureArrayError(moved[i].value, expected);
    v.second_look = absl::StrCat(v.name, ": ", FormatArrayError(*v.error),
                                 "; one ulp on its inputs and rounded results moves the module as "
                                 "written by ",
                                 FormatArrayError(sensitivity));
    if (WithinSensitivity(*v.error, sensitivity, expected.shape().dtype())) {
      v.failure.clear();
    } else {
      absl::StrAppend(&v.failure, "  ", v.second_look, "\n");
    }
  }
  return verdicts;
}

}  // namespace seam
