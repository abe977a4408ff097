// Recomputing cheap producers in every kernel that reads them (see the
// .cc for when that pays).
#pragma once

#include "seam/fusion/strategies.h"

namespace seam::fusion {

// Adds each cheap fusible producer to the kernels of its readers and removes
// it from kernels none of its readers runs in. Kernels left empty go.
void DuplicateCheapProducers(const Computation& computation, Partition& partition);

}  // namespace seam::fusion
