// Adaptive thread mapping (AStitch section 4): how a group's rows are
// spread over blocks and threads, chosen from its shape and the device.
//  - short rows: horizontal packing, several rows per block;
//  - few long rows: task splitting, a row over several blocks whose
//    partial results a global stage combines;
//  - a grid too large to be resident at once in a kernel with grid
//    barriers: vertical packing, each block loops over several tasks.
#pragma once

#include <cstdint>

#include "seam/fusion/fusion_plan.h"
#include "seam/target/device_spec.h"

namespace seam::fusion {

struct MappingRequest {
  MappingKind kind = MappingKind::kRow;
  int64_t rows = 1;
  int64_t row_length = 1;
  int64_t element_bytes = 4;
  // Whether rows are folded (reductions): only those are split, since
  // splitting an elementwise row needs no combining and is just more blocks.
  bool reduces = false;
  // Whether the kernel also folds columns over these rows' tiles (its
  // partials come one per tile, so a tile is not made smaller).
  bool beside_column_folds = false;
};

ThreadMapping ChooseMapping(const MappingRequest& request, const target::DeviceSpec& device);

// Vertical packing: shrinks the grid to what is resident at once.
void PackVertically(ThreadMapping& mapping, const target::DeviceSpec& device);

// Aligns `mapping`'s blocks on `producer`'s (same rows per block and no
// splitting), so each block consumes the rows it produced: AStitch's
// proactive locality. False when the mappings cannot agree.
bool AlignRows(ThreadMapping& mapping, const ThreadMapping& producer,
               const target::DeviceSpec& device);

}  // namespace seam::fusion
