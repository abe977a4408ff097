// Loops rendered for the CPU call the vector-ABI twins of the prelude's
// transcendental functions (seam_exp_simd...) where GCC would otherwise
// leave an `omp simd` loop scalar around a call it cannot vectorize.
#pragma once

#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"

namespace seam::codegen {

// Whether loop-body `lines` may call the vector-ABI twins: no select, no
// branch, no && or || (all of which GCC 12 would meet beside the call and
// then leave the loop scalar), and every call to an arithmetic helper, a
// function with a twin (when `twinned` ones are allowed), or one of
// `also_allowed`.
bool CanUseSimdTwins(const std::vector<std::string>& lines,
                     const absl::flat_hash_set<std::string>& also_allowed, bool twinned = true);

// Bodies of vectorized loops that may call the twins call them; scalar
// loops keep the inline functions.
void UseSimdTwins(std::vector<std::string>& body, bool vectorized,
                  const absl::flat_hash_set<std::string>& branch_free_reducers);

}  // namespace seam::codegen
