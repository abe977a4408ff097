// Online softmax: a softmax's row max m = reduce(max, x) and its sum of
// shifted exps s = reduce(add, exp(x - m)) need m before the sum's pass can
// start, so a kernel reads x once for m and again for s, and passes
// exp(x - m) on to the output. Where a row does not fit a tile (a
// vocabulary of 256K words in f32 is 1 MB a row), exp(x - m) goes to
// global memory and x is read three times. Folded instead in one pass
// over blocks of the row, as a running max with the sum rescaled by
// exp(m_old - m_new) whenever the max grows (Milakov and Gimelshein's
// online normalizer), and with exp(x - m) recomputed by the output's
// pass, x is read twice and exp(x - m) is neither written nor read back.
#pragma once

#include <optional>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "seam/fusion/fusion_plan.h"
#include "seam/target/device_spec.h"

namespace seam::fusion {

// reduce(add, exp(x - broadcast(m))) with m = reduce(max, x) over the same
// dimensions of the same x (f32 or f64).
struct ShiftedExpSum {
  const Instruction* exp = nullptr;  // exp(x - m)
  const Instruction* max = nullptr;  // m
};
std::optional<ShiftedExpSum> MatchShiftedExpSum(const Instruction& reduce);

// The exps of `kernel` (its groups and mappings chosen) that could be
// recomputed where read instead of passed on, so that their sums fold in
// the pass of their max: sums and maxes row-mapped over the same whole
// rows, no kernel output. Whether that saves reads is the cost model's
// to say. CPU devices only (the CPU schedule folds them).
absl::flat_hash_set<const Instruction*> OnlineSoftmaxExps(const Kernel& kernel,
                                                          const target::DeviceSpec& device);

// The sum groups of `kernel` (analyzed with those exps recomputed) that
// fold in the pass of their max's group, and which.
std::vector<OnlineSoftmax> ChooseOnlineSoftmax(const Kernel& kernel,
                                               const target::DeviceSpec& device);

}  // namespace seam::fusion
