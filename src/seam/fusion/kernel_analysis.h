// Everything about a kernel that follows from which instructions it holds
// (AStitch sections 3 to 5): its inputs; its dominant ops (reductions,
// outputs, expensive ops whose elements are reused) and the groups they
// compute through local edges; sibling groups merged under one dominant;
// per group a thread mapping, chosen for block locality first; the scheme
// of every edge (local, regional, global) with regional values demoted to
// global when they overflow on-chip memory; grid barriers; and the cost.
#pragma once

#include "seam/fusion/fusion_plan.h"
#include "seam/target/device_spec.h"

namespace seam::fusion {

struct AnalysisOptions {
  // XLA's way: expensive ops whose elements are reused are recomputed per
  // use in registers instead of being computed once and passed on as
  // dominants (AStitch's way).
  bool recompute_expensive = false;
  // Sums of squared deviations fold beside an earlier reduction of the
  // same elements where the cost model says it saves a read (see
  // one_pass_statistics.h).
  bool one_pass_statistics = true;
  // Whether half-typed chains compute in float (PlanOptions::excess_precision):
  // then a bf16 variance's squares fold in one pass too.
  bool excess_precision = false;
  // A softmax's sum of shifted exps folds in its max's pass, the exps
  // recomputed where read, where the cost model says that saves reads
  // (see online_softmax.h).
  bool online_softmax = true;
};

// Fills in everything but `id`, `instructions` and `outputs`, which the
// strategy decided.
void AnalyzeKernel(Kernel& kernel, const target::DeviceSpec& device,
                   const AnalysisOptions& options);

}  // namespace seam::fusion
