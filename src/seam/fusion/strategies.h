// The strategies: each decides which instructions of a computation run
// together in one kernel; the planner derives the rest (outputs, groups,
// schemes, mappings, cost) the same way for all of them, so they compare on
// equal terms.
#pragma once

#include <vector>

#include "absl/container/flat_hash_map.h"

#include "seam/fusion/fusion_plan.h"
#include "seam/ir/computation.h"
#include "seam/target/device_spec.h"

namespace seam::fusion {

struct Partition {
  // Members of each kernel, any order. An instruction may sit in several
  // kernels when a strategy recomputes it (XLA duplicates cheap producers).
  std::vector<std::vector<const Instruction*>> kernels;
  // For a value computed in several kernels and read outside them: the
  // index of the kernel that writes it (by default the first holding it).
  // It must be one whose inputs do not depend on that outside reader.
  absl::flat_hash_map<const Instruction*, int> writer;
  std::vector<Refusal> refusals;
};

// One kernel per fusible op.
Partition PartitionNone(const Computation& computation);

// XLA's classic GPU fusion: producer-consumer loop and input fusion with
// duplication of cheap producers, then sibling and producer-consumer
// multi-output fusion.
Partition PartitionXla(const Computation& computation);

// AStitch: every memory-intensive op between the same compute-intensive ops
// in one kernel (no cycles by construction); the kernel analysis then
// stitches it with local, regional and global schemes.
Partition PartitionStitch(const Computation& computation);

// FusionStitching's explorer: candidate patterns per op (top 3), a beam
// search of width 3 over whole plans scored by a delta evaluator, then
// remote fusion of unconnected kernels.
Partition ExploreStitchBeam(const Computation& computation, const target::DeviceSpec& device);

}  // namespace seam::fusion
