// What a state of the gym costs: its arithmetic (as XLA's cost analysis
// counts it: flops and transcendentals, the paper's shaping potential) and
// the cost model's estimate once the stitch strategy has planned it.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "seam/ir/module.h"
#include "seam/target/device_spec.h"

namespace seam::gym {

struct ArithmeticCounts {
  double flops = 0;            // one per elementwise result element; 2 per multiply-add
  double transcendentals = 0;  // exp, log, tanh, pow, sqrt, trig... per element
};

// Counts the computations that run as sequences (the entry, loop bodies
// and conditions, branches, calls) once each; reducers and other applied
// computations through the ops that apply them.
ArithmeticCounts CountArithmetic(const Module& module);

// The paper's potential for reward shaping: -FLOPs - 2 * transcendentals.
inline double Potential(const ArithmeticCounts& counts) {
  return -counts.flops - 2 * counts.transcendentals;
}

// The canonical forms the fusion planner needs: row-major
// layouts, no calls, batch norms and GELU custom-calls expanded. Not optimisations.
extern const char kPlanningPrerequisites[];

struct StitchEstimate {
  double time_us = 0;  // kernels, standalone ops, library calls and the interpreter
  // What the interpreter takes beyond the plan's price for the ops it runs
  // (included in time_us).
  double interpreted_us = 0;
  double dram_bytes = 0;  // memory-intensive kernels only
  int64_t kernels = 0;    // memory-intensive kernels
  int64_t planned_ops = 0;  // instructions the planner saw (composites expanded)
};

// Plans a copy of `module` with the stitch strategy for `device`, after the
// canonical forms the planner needs (row-major layouts, no calls, expanded
// batch norms), and sums the cost model's estimates, with the interpreter's
// time for what the executable leaves to it.
absl::StatusOr<StitchEstimate> EstimateAfterStitch(const Module& module,
                                                   const target::DeviceSpec& device);

}  // namespace seam::gym
