// One-pass statistics: a variance's numerator, the sum of squared
// deviations sum((x - m)^2) over some dimensions, where the centre m comes
// from an earlier reduction of the same kernel (the two-pass form batch
// norm and jnp.var are written in, and batch-norm-training expands to),
// needs m before it can read x, so a kernel folding columns reads x from
// memory twice. Folded instead beside the earlier reduction, in its pass
// over x, as each chunk's count, mean and centred sum of squares of x, it
// is combined with m once m is known (Chan, Golub and LeVeque's parallel
// form): sum((x - m)^2) = sum over chunks of M2_c + n_c (mean_c - m)^2,
// exact for any m. One read of x fewer; the extra pass per chunk runs
// over a contiguous run still in cache.
#pragma once

#include <optional>
#include <vector>

#include "seam/fusion/fusion_plan.h"
#include "seam/target/device_spec.h"

namespace seam::fusion {

// reduce(add, (x - c) * (x - c)) (or (c - x)), with `center` c a broadcast
// constant along the reduced dimensions. `half_chains`: also a square of a
// half type converted to the reduction's float type (JAX's bf16 variance),
// which equals the float form only where the chain computes in float
// (excess precision; rounded at each op, the terms would differ).
struct CenteredSquares {
  const Instruction* value = nullptr;   // x
  const Instruction* center = nullptr;  // c
};
std::optional<CenteredSquares> MatchCenteredSquares(const Instruction& reduce,
                                                    bool half_chains = false);

// The groups of `kernel` (its groups and mappings chosen) whose sum of
// squared deviations can fold beside an earlier group's reduction: same
// reduce input dimensions, same reduced dimensions folding contiguous runs
// that stay in a CPU thread's cache, and an x computed from the kernel's
// inputs alone. CPU devices only (the CPU schedule folds them).
// `half_chains` as MatchCenteredSquares takes it.
std::vector<OnePassStatistic> ChooseOnePassStatistics(const Kernel& kernel,
                                                      const target::DeviceSpec& device,
                                                      bool half_chains = false);

}  // namespace seam::fusion
