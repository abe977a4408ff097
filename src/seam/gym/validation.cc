#include "seam/gym/validation.h"

#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "seam/eval/arguments.h"
#include "seam/eval/compare.h"
#include "seam/eval/evaluator.h"
#include "seam/gym/benchmarks.h"
#include "seam/gym/cost_analysis.h"
#include "seam/ir/module_clone.h"
#include "seam/passes/pipeline.h"
#include "seam/util/status_macros.h"

namespace seam::gym {

absl::StatusOr<Validation> ValidatePassOrder(absl::string_view benchmark, absl::string_view spec,
                                             bool interpret, uint64_t seed) {
  SEAM_ASSIGN_OR_RETURN(std::unique_ptr<Module> original, LoadBenchmark(benchmark));
  std::unique_ptr<Module> optimised = CloneModule(*original);
  if (!spec.empty()) {
    SEAM_ASSIGN_OR_RETURN(Pipeline pipeline, Pipeline::Parse(spec));
    PipelineOptions options;
    options.verify_each = true;
    SEAM_RETURN_IF_ERROR(pipeline.Run(*optimised, options).status());
  }
  Validation validation;
  validation.ops = optimised->InstructionCount();
  SEAM_ASSIGN_OR_RETURN(StitchEstimate estimate,
                        EstimateAfterStitch(*optimised, target::HostCpuSpec()));
  validation.cost_us = estimate.time_us;
  validation.planned_ops = estimate.planned_ops;
  if (!interpret || !CheckInterpretable(*original).ok()) return validation;
  std::vector<Literal> arguments = RandomArguments(*original->entry(), seed);
  Evaluator before;
  absl::StatusOr<Literal> want = before.Run(*original, arguments);
  if (!want.ok()) return validation;  // too big or unsupported here: not a verdict on the order
  Evaluator after;
  absl::StatusOr<Literal> got = after.Run(*optimised, arguments);
  if (!got.ok()) {
    return absl::InternalError(absl::StrCat(benchmark, ": the original runs but the module after '", spec,
                                            "' does not: ", got.status().message()));
  }
  validation.interpreted = true;
  validation.differences = DescribeDifferences(*got, *want, &RewriteTolerance, "result");
  return validation;
}

}  // namespace seam::gym
