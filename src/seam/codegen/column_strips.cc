#include "seam/codegen/column_strips.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "seam/codegen/render_common.h"
#include "seam/ir/dtype.h"

namespace seam::codegen {
namespace {

// Columns a strip's width is a multiple of: a cache line of f32.
constexpr int64_t kWidthStep = 16;

// A strip's rows of the inputs take at most this share of a core's L2: the
// later passes' reads find them there beside the lines they write.
constexpr int64_t kL2ShareOfStrip = 4;

// Tasks per core at least, where the columns allow, so that a thread
// slowed by another process leaves little to wait for.
constexpr int64_t kTasksPerUnit = 4;

// The first of the trailing dimensions of `dims` whose product is exactly
// `columns`, if there is one: a row-major index's position among them is
// its column.
std::optional<size_t> ColumnSuffix(const std::vector<int64_t>& dims, int64_t columns) {
  int64_t product = 1;
  for (size_t d = dims.size(); d > 0; --d) {
    if (product == columns) return d;
    product *= dims[d - 1];
  }
  if (product == columns) return 0;
  return std::nullopt;
}

enum class Pass : uint8_t { kFold, kRows, kKept };

// Walks what a stage computes from where it is evaluated down to the
// values it loads: `aligned` while the index of the value reached has the
// stage's column as its column (ColumnSuffix). A value another stage
// writes must be loaded aligned, so the task owning the column wrote it.
class ColumnReads {
 public:
  ColumnReads(const KernelIr& ir, const Stage& s, int64_t columns)
      : ir_(ir), members_(Computed(s)), columns_(columns) {}

  bool Check(const Instruction* v, bool aligned) {
    if (!visited_.insert({v, aligned}).second) return true;
    if (!members_.contains(v)) {
      auto storage = ir_.storage.find(v);
      return aligned || storage == ir_.storage.end() || storage->second == Storage::kInput;
    }
    for (int k = 0; k < static_cast<int>(v->operands().size()); ++k) {
      if (!Check(v->operand(k), aligned && KeepsColumn(*v, k))) return false;
    }
    return true;
  }

  bool HasColumns(const Instruction& v) const {
    return v.shape().IsArray() && ColumnSuffix(v.shape().dims(), columns_).has_value();
  }

 private:
  // Whether operand k of `v`, where `v` is read at its column c, is read
  // at column c of its own.
  bool KeepsColumn(const Instruction& v, int k) const {
    const Instruction& operand = *v.operand(k);
    if (!HasColumns(v) || !HasColumns(operand)) return false;
    const std::vector<int64_t>& out = v.shape().dims();
    const std::vector<int64_t>& in = operand.shape().dims();
    switch (v.opcode()) {
      case Opcode::kReshape:
      case Opcode::kBitcast:  // row major: the linear index, and so the column, stays
        return true;
      case Opcode::kCopy:
        return in == out;
      case Opcode::kBroadcast: {
        // The operand's column dimensions go to the result's, in order.
        const IntList& dims = v.attrs().dimensions.value_or(IntList{});
        const size_t from = *ColumnSuffix(in, columns_), to = *ColumnSuffix(out, columns_);
        if (in.size() - from != out.size() - to) return false;
        for (size_t d = from; d < in.size(); ++d) {
          if (dims[d] != static_cast<int64_t>(to + (d - from))) return false;
        }
        return true;
      }
      default:
        return IsElementwise(v.opcode()) && in == out;
    }
  }

  const KernelIr& ir_;
  absl::flat_hash_set<const Instruction*> members_;
  int64_t columns_;
  absl::flat_hash_set<std::pair<const Instruction*, bool>> visited_;
};

// Whether partial reduction `s` folds its leading dimensions and keeps the
// rest (at least one of each).
bool FoldsLeadingDims(const Stage& s) {
  auto first_kept = std::find(s.folded.begin(), s.folded.end(), false);
  return first_kept != s.folded.begin() && first_kept != s.folded.end() &&
         std::find(first_kept, s.folded.end(), true) == s.folded.end();
}

std::optional<Pass> PassOf(const Stage& s, int64_t rows, int64_t columns) {
  if (s.kind == LoopKind::kPartialReduce) {
    if (s.one_pass || !FoldsLeadingDims(s)) return std::nullopt;
    const FoldSplit split = SplitFolded(s);
    if (split.folded != rows || split.kept != columns) return std::nullopt;
    return Pass::kFold;
  }
  if (s.kind != LoopKind::kElementwise || s.RowLength() != columns) return std::nullopt;
  if (s.Rows() == rows) return Pass::kRows;
  if (s.Rows() == 1) return Pass::kKept;
  return std::nullopt;
}

// Whether stage `s` reads what other stages write only at its own columns.
bool ReadsOwnColumns(const KernelIr& ir, const Stage& s, int64_t columns) {
  ColumnReads reads(ir, s, columns);
  for (const Instruction* root : s.roots) {
    if (root->opcode() == Opcode::kReduce) {
      if (!reads.Check(root->operand(0), true) || !reads.Check(root->operand(1), false))
        return false;
    } else if (!reads.Check(root, reads.HasColumns(*root))) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::optional<ColumnStrips> ColumnStripsOf(const KernelIr& ir, const target::DeviceSpec& device) {
  if (!ir.tile_stage.empty()) return std::nullopt;  // tiles of rows
  auto fold = std::find_if(ir.stages.begin(), ir.stages.end(),
                           [](const Stage& s) { return s.kind == LoopKind::kPartialReduce; });
  if (fold == ir.stages.end() || !FoldsLeadingDims(*fold)) return std::nullopt;
  const FoldSplit split = SplitFolded(*fold);
  ColumnStrips strips;
  strips.rows = split.folded;
  strips.columns = split.kept;
  if (strips.columns < 2 * kWidthStep) return std::nullopt;
  bool rows_after_fold = false;
  for (auto s = ir.stages.begin(); s != ir.stages.end(); ++s) {
    std::optional<Pass> pass = PassOf(*s, strips.rows, strips.columns);
    if (!pass || !ReadsOwnColumns(ir, *s, strips.columns)) return std::nullopt;
    rows_after_fold |= *pass == Pass::kRows && s > fold;
  }
  if (!rows_after_fold) return std::nullopt;
  // A column of the strip: the inputs' elements of every row.
  int64_t column_bytes = 0;
  for (const KernelBuffer& b : ir.buffers) {
    if (b.storage == Storage::kInput && b.elements == strips.rows * strips.columns) {
      column_bytes += strips.rows * DTypeByteSize(b.dtype);
    }
  }
  if (column_bytes == 0) return std::nullopt;  // no input read again
  // Inputs the last-level cache holds between the phases cost little to
  // read again, and their rows stream better whole (x / colsum(|x|) over
  // 15 MB, 32 MB of L3: 1.0-1.2 ms both ways; over 205 MB 17-20 -> 10-12).
  if (column_bytes * strips.columns <= device.last_level_cache_bytes / 2) return std::nullopt;
  const int64_t fits = device.onchip_bytes_per_unit / kL2ShareOfStrip / column_bytes;
  const int64_t balanced = CeilDiv(strips.columns, kTasksPerUnit * std::max<int64_t>(1, device.units));
  strips.width = std::min(fits, CeilDiv(balanced, kWidthStep) * kWidthStep) / kWidthStep * kWidthStep;
  if (strips.width < kWidthStep) return std::nullopt;
  strips.tasks = CeilDiv(strips.columns, strips.width);
  return strips;
}

}  // namespace seam::codegen
