// Epilogue attachment: the elementwise ops that alone consume a dot's or a
// convolution's result (bias add, activation, residual add, scale, a
// convert) leave the stitched kernels and run as the library call's
// epilogue, on each piece of the result while it is still in cache. What
// XLA's CPU backend and PyTorch hand oneDNN as post-ops, and what a planner
// that stops at every library call (AStitch, FusionStitching) leaves to a
// kernel reading the result back from memory.
#pragma once

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "seam/fusion/fusion_plan.h"
#include "seam/fusion/strategies.h"

namespace seam::fusion {

// Attaches to each library call of `computation` its chain (by call) and
// takes the chain out of the partition's kernels. A chain runs while the
// value reached has one reader, an elementwise op of the call's
// dimensions that reads nothing large a kernel would otherwise never
// write (a bias, a scale, a residual the library or the root needs
// anyway). A kernel holding both an epilogue's input and a reader of an
// attached call is split in two; a chain whose attachment would pass a
// large value between those parts, or make kernels and calls depend on
// each other in a cycle, stays where it was. Values of at most `cached`
// bytes count as small: they stay in cache between a writer and its
// reader, and a call with a result that small takes no epilogue.
absl::flat_hash_map<const Instruction*, Epilogue> AttachEpilogues(const Computation& computation,
                                                                  int64_t cached,
                                                                  Partition& partition);

}  // namespace seam::fusion
