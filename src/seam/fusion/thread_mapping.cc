#include "seam/fusion/thread_mapping.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace seam::fusion {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t NextPowerOfTwo(int64_t n) {
  int64_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

// The widest vector (a power of two up to the device's vector bytes) that
// divides the row, so every row starts aligned.
int64_t VectorWidth(int64_t row_length, int64_t element_bytes, const target::DeviceSpec& device) {
  int64_t width = std::max<int64_t>(1, device.vector_bytes / std::max<int64_t>(1, element_bytes));
  while (width > 1 && row_length % width != 0) width /= 2;
  return width;
}

// AStitch's rule: split rows when there are too few to fill one wave and
// each is long enough to share (more than 1024 elements on a GPU; on a CPU,
// more than 16 KiB). Split reductions need a stage combining the partials;
// split elementwise rows need nothing.
int64_t BlocksPerRow(const MappingRequest& r, const target::DeviceSpec& device,
                     int64_t split_above) {
  if (r.rows >= device.BlocksPerWave() || r.row_length <= split_above) return 1;
  return std::max<int64_t>(1, std::min(CeilDiv(device.BlocksPerWave(), r.rows),
                                       CeilDiv(r.row_length, split_above)));
}

ThreadMapping GpuRowMapping(const MappingRequest& r, const target::DeviceSpec& device) {
  ThreadMapping m;
  m.reduces = r.reduces;
  m.kind = MappingKind::kRow;
  m.rows = r.rows;
  m.row_length = r.row_length;
  m.vector_width = VectorWidth(r.row_length, r.element_bytes, device);
  m.blocks_per_row = BlocksPerRow(r, device, 1024);
  int64_t part = CeilDiv(r.row_length, m.blocks_per_row);
  // About four vectors per thread; a warp or more per row when rows are long.
  int64_t threads = NextPowerOfTwo(CeilDiv(part, m.vector_width * 4));
  m.threads_per_row = std::clamp<int64_t>(threads, 1, device.max_threads_per_block);
  if (m.threads_per_row < 32) {
    // Horizontal packing: 256-thread blocks of several short rows.
    m.rows_per_block = std::min(NextPowerOfTwo(r.rows), 256 / m.threads_per_row);
  }
  m.threads_per_block = m.threads_per_row * m.rows_per_block;
  m.blocks = CeilDiv(r.rows, m.rows_per_block) * m.blocks_per_row;
  return m;
}

// Column reductions: a warp spans 32 adjacent columns (coalesced loads),
// the block's other warps take other rows; when the columns alone give too
// few blocks, the rows are split and a global stage adds the partials.
ThreadMapping GpuColumnMapping(const MappingRequest& r, const target::DeviceSpec& device) {
  ThreadMapping m;
  m.reduces = r.reduces;
  m.kind = MappingKind::kColumn;
  m.rows = r.rows;
  m.row_length = r.row_length;
  m.vector_width = 1;
  m.threads_per_row = std::min<int64_t>(32, NextPowerOfTwo(r.row_length));
  m.rows_per_block = 256 / m.threads_per_row;
  m.threads_per_block = 256;
  int64_t column_blocks = CeilDiv(r.row_length, m.threads_per_row);
  if (column_blocks < device.BlocksPerWave() && r.rows > 64 * m.rows_per_block) {
    m.blocks_per_row = std::min(CeilDiv(device.BlocksPerWave(), column_blocks),
                                CeilDiv(r.rows, 64 * m.rows_per_block));
  }
  m.blocks = column_blocks * m.blocks_per_row;
  return m;
}

// CPU: a block is a tile of whole rows sized to about 64 KiB of input, run
// by one pool thread with SIMD lanes along the row. Rows that reduce are
// read by several passes (statistics, then the output), with a row tile
// of a softmax's exponentials and a second input beside them: 16 KiB each
// stay in a 48 KiB L1 across the passes where 64 KiB went to L2 (2-core
// Xeon, seam bench, 3 alternated rounds: dien_rows 9.32 -> 8.79 ms,
// attention_softmax 7.66 -> 7.04, rms_norm 5.34 -> 4.84). Not beside
// column folds: their partials, one per tile, grow as tiles shrink
// (layernorm_backward 3.37 -> 3.53 ms), nor for elementwise rows, which
// each pass reads once (batchnorm's output 7.86 -> 8.28 ms).
constexpr int64_t kRowTileBytes = 64 << 10;
constexpr int64_t kReducingRowTileBytes = 16 << 10;

ThreadMapping CpuRowMapping(const MappingRequest& r, const target::DeviceSpec& device) {
  ThreadMapping m;
  m.reduces = r.reduces;
  m.kind = MappingKind::kRow;
  m.rows = r.rows;
  m.row_length = r.row_length;
  m.vector_width = VectorWidth(r.row_length, r.element_bytes, device);
  m.threads_per_row = m.vector_width;
  m.threads_per_block = m.vector_width;
  int64_t row_bytes = std::max<int64_t>(1, r.row_length * r.element_bytes);
  m.blocks_per_row = BlocksPerRow(r, device, std::max<int64_t>(1, 16384 / r.element_bytes));
  int64_t per_core = CeilDiv(r.rows, device.units);
  const int64_t tile_bytes =
      r.reduces && !r.beside_column_folds ? kReducingRowTileBytes : kRowTileBytes;
  m.rows_per_block = std::clamp<int64_t>(tile_bytes / row_bytes, 1, std::max<int64_t>(1, per_core));
  m.blocks = CeilDiv(r.rows, m.rows_per_block) * m.blocks_per_row;
  return m;
}

// A thread folds at most this many rows of a column reduction into one
// partial result: a float sum run down a million rows in one accumulator
// loses precision with its length (batch-norm statistics of a
// channels-last [96,112,112,32] activation: 1.9e-5 relative error against
// 3e-7 for the same sum channel-major, compounding to 1e-2 over
// MobileNetV2's layers); partials of 4096 rows keep it near the other's.
constexpr int64_t kMaxRowsPerPartial = 4096;

// CPU column reductions: each thread folds chunks of rows into partial
// column sums (SIMD across columns); a global stage adds the partials.
ThreadMapping CpuColumnMapping(const MappingRequest& r, const target::DeviceSpec& device) {
  ThreadMapping m;
  m.reduces = r.reduces;
  m.kind = MappingKind::kColumn;
  m.rows = r.rows;
  m.row_length = r.row_length;
  m.vector_width = VectorWidth(r.row_length, r.element_bytes, device);
  m.threads_per_row = m.vector_width;
  m.threads_per_block = m.vector_width;
  m.rows_per_block = std::clamp<int64_t>(CeilDiv(r.rows, device.units), 1, kMaxRowsPerPartial);
  m.blocks_per_row = CeilDiv(r.rows, m.rows_per_block);
  m.blocks = m.blocks_per_row;
  return m;
}

}  // namespace

std::string ThreadMapping::ToString() const {
  std::string s = absl::StrCat(kind == MappingKind::kRow ? "row " : "column ", rows, "x",
                               row_length, " blocks=", blocks, " threads=", threads_per_block);
  if (rows_per_block > 1) absl::StrAppend(&s, " pack=", rows_per_block, "rows/block");
  if (blocks_per_row > 1) absl::StrAppend(&s, " split=", blocks_per_row, "blocks/row");
  if (reduces) absl::StrAppend(&s, " folds rows");
  if (row_tiled) absl::StrAppend(&s, " in row tiles");
  if (tasks_per_block > 1) absl::StrAppend(&s, " vpack=", tasks_per_block, "tasks/block");
  if (vector_width > 1) absl::StrAppend(&s, " vec=", vector_width);
  return s;
}

ThreadMapping ChooseMapping(const MappingRequest& request, const target::DeviceSpec& device) {
  MappingRequest r = request;
  r.rows = std::max<int64_t>(1, r.rows);
  r.row_length = std::max<int64_t>(1, r.row_length);
  if (device.is_gpu()) {
    return r.kind == MappingKind::kRow ? GpuRowMapping(r, device) : GpuColumnMapping(r, device);
  }
  return r.kind == MappingKind::kRow ? CpuRowMapping(r, device) : CpuColumnMapping(r, device);
}

void PackVertically(ThreadMapping& mapping, const target::DeviceSpec& device) {
  int64_t resident = device.BlocksPerWave();
  if (mapping.blocks <= resident) return;
  mapping.tasks_per_block = CeilDiv(mapping.blocks, resident);
  mapping.blocks = CeilDiv(mapping.blocks, mapping.tasks_per_block);
}

bool AlignRows(ThreadMapping& mapping, const ThreadMapping& producer,
               const target::DeviceSpec& device) {
  if (mapping.kind != MappingKind::kRow || producer.kind != MappingKind::kRow ||
      (producer.reduces && producer.blocks_per_row != 1) || mapping.rows != producer.rows ||
      (mapping.reduces && producer.blocks_per_row != 1)) {
    return false;
  }
  if (mapping.rows_per_block == producer.rows_per_block &&
      mapping.blocks_per_row == producer.blocks_per_row) {
    return true;
  }
  mapping.blocks_per_row = producer.blocks_per_row;
  mapping.rows_per_block = producer.rows_per_block;
  if (device.is_gpu()) {
    mapping.threads_per_row = std::min(
        mapping.threads_per_row, std::max<int64_t>(1, device.max_threads_per_block / mapping.rows_per_block));
    mapping.threads_per_block = mapping.threads_per_row * mapping.rows_per_block;
  }
  mapping.blocks = CeilDiv(mapping.rows, mapping.rows_per_block) * mapping.blocks_per_row;
  return true;
}

}  // namespace seam::fusion
