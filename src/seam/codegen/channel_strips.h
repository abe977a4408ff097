// Channel strips (a CPU schedule): a kernel whose sums fold the dimensions
// before and after the kept ones (an NCHW batch norm's statistics: kept C,
// folded N and H x W) and whose other passes run over the same positions
// or over the kept elements runs as one parallel loop over the kept
// positions (channels) instead of phases over the whole input. A task
// folds its channel's runs, combines them at once, computes the kept
// passes at its channel, then the passes over the channel's runs while
// they are still in its core's L2: the input is read from memory once,
// not once for the statistics and again for the output, and no grid
// barrier waits for the other threads' partials.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "seam/codegen/kernel_ir.h"
#include "seam/codegen/loop_nest.h"
#include "seam/target/device_spec.h"

namespace seam::codegen {

struct ChannelStrips {
  // A position of the folds' space: `o` over the outer (folded) dims, `p`
  // over the kept ones, a run over the inner (folded) ones, in that order.
  IndexPart outer_part{{}, "o"}, kept_part{{}, "p"};
  std::vector<int> inner_dims;
  int64_t outer = 1, kept = 1, run = 1;
};

// The channel strips `ir` runs in on `device`, or none: unless every fold
// sums a block of outer dimensions, then kept ones, then inner ones of one
// space (a sum of squared deviations may fold in another's pass), and
// every other stage is a pass over that whole space or over the kept
// elements alone; unless each reads what other stages write only at its
// own kept position (through elementwise ops, and reshapes and
// broadcasts that carry the kept position); when a fold only, or no pass
// over the space, follows; when the inputs read again fit half the
// last-level cache (a second read from there costs little); or when a
// channel's runs of the inputs do not fit 7/8 of a core's L2.
std::optional<ChannelStrips> ChannelStripsOf(const KernelIr& ir, const target::DeviceSpec& device);

}  // namespace seam::codegen
