// Column strips (a CPU schedule): a kernel whose column reductions feed
// passes over the same rows (x / colsum(|x|), a batch norm over NHWC) runs
// as one parallel loop over strips of columns, every row of a few columns,
// instead of phases over rows. A task folds its columns over every row,
// then runs the later passes on the same columns while the strip is still
// in its core's L2: the input is read from memory once, not once per
// phase, and no grid barrier waits for the other threads' partials (each
// task owns whole columns).
#pragma once

#include <cstdint>
#include <optional>

#include "seam/codegen/kernel_ir.h"
#include "seam/target/device_spec.h"

namespace seam::codegen {

struct ColumnStrips {
  int64_t rows = 1;     // R: the folded positions, every stage's rows
  int64_t columns = 1;  // K: the kept elements, every stage's columns
  int64_t width = 1;    // columns a task takes
  int64_t tasks = 1;
};

// The column strips `ir` runs in on `device`, or none when a stage is not a
// column reduction over its leading dimensions, a pass over the R x K
// rows or over the K kept elements; when a value one stage writes is read
// by another at any column but its own (through a transpose, a slice...);
// when no pass over the rows follows a fold, or the inputs read again fit
// half the last-level cache (a second read from there costs little); or
// when a strip of R rows cannot fit L2 at a cache line's width.
std::optional<ColumnStrips> ColumnStripsOf(const KernelIr& ir, const target::DeviceSpec& device);

}  // namespace seam::codegen
