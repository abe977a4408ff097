// Fusion planning for a whole module: every computation that runs as a
// sequence of kernels (the entry, loop bodies and conditions, branches) is
// planned with one strategy for one device.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "seam/fusion/fusion_plan.h"
#include "seam/ir/module.h"
#include "seam/target/device_spec.h"

namespace seam::fusion {

struct PlanOptions {
  Strategy strategy = Strategy::kStitch;
  // Stitch only: "astitch" (AStitch's planner) or "beam" (FusionStitching's
  // explorer).
  std::string explorer = "astitch";
  target::DeviceSpec device = target::HostCpuSpec();
  // Whether the planned kernels may keep bf16/f16 arithmetic in float until
  // a value is stored (XLA's xla_allow_excess_precision, on by default
  // there too); see KernelIr.
  bool excess_precision = true;
  // Whether a variance's sum of squared deviations may fold in the pass of
  // the earlier reduction its centre comes from (AnalysisOptions).
  bool one_pass_statistics = true;
  // Whether a softmax's sum may fold in its max's pass as a running max
  // and a rescaled sum, the exps recomputed where read (AnalysisOptions).
  bool online_softmax = true;
  // Whether library calls take the elementwise consumers of their results
  // as epilogues (epilogue attachment); on CPU devices only, whose backend runs them.
  bool library_epilogues = true;
  // Calls whose result is at most this many bytes take no epilogue: the
  // kernel reading it back finds it in cache. Also what counts as small
  // for an epilogue's other inputs (see AttachEpilogues).
  int64_t epilogue_min_result_bytes = int64_t{256} << 10;
};

absl::StatusOr<Strategy> StrategyByName(absl::string_view name);

// Plans `module`, which should have been through the default pipeline
// (row-major layouts, flat call graph). The plan points into the module.
absl::StatusOr<FusionPlan> PlanModule(const Module& module, const PlanOptions& options);

}  // namespace seam::fusion
