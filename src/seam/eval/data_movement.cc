// Ops that move elements without computing on them. All arrays are in
// logical row-major order, so reshape and copy are byte copies and the rest
// map each output index to an input index. bitcast reinterprets the physical
// buffer: a byte copy too unless a layout makes memory order differ from
// row-major.
#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "seam/eval/element_traits.h"
#include "seam/eval/index_util.h"
#include "seam/eval/ops.h"
#include "seam/util/status_macros.h"

namespace seam {
namespace {

// Copies one element of `size` bytes.
inline void CopyElement(uint8_t* dst, const uint8_t* src, int64_t size) {
  switch (size) {
    case 1: *dst = *src; return;
    case 2: std::memcpy(dst, src, 2); return;
    case 4: std::memcpy(dst, src, 4); return;
    case 8: std::memcpy(dst, src, 8); return;
    default: std::memcpy(dst, src, size); return;
  }
}

// out[index] = in[source(index)], or `fill` (one element) where source gives -1.
template <typename SourceFn>
Literal Remap(const Shape& shape, const Literal& in, SourceFn source,
              const Literal* fill = nullptr) {
  Literal out(shape);
  int64_t size = DTypeByteSize(shape.dtype());
  uint8_t* dst = out.mutable_bytes().data();
  const uint8_t* src = in.bytes().data();
  ForEachIndex(shape.dims(), [&](absl::Span<const int64_t> index, int64_t linear) {
    int64_t from = source(index);
    const uint8_t* element = from >= 0 ? src + from * size : fill->bytes().data();
    CopyElement(dst + linear * size, element, size);
  });
  return out;
}

Literal ByteCopy(const Shape& shape, const Literal& in) {
  Literal out(shape);
  size_t bytes = std::min(out.bytes().size(), in.bytes().size());
  // An empty vector's data() may be null, and memcpy from null is undefined.
  if (bytes > 0) std::memcpy(out.mutable_bytes().data(), in.bytes().data(), bytes);
  return out;
}

// The dimensions of `shape` from minor to major in memory: its layout's, or
// row-major when it has none. Tiling is not modelled.
std::vector<int64_t> MinorToMajor(const Shape& shape) {
  if (shape.layout().has_value() &&
      shape.layout()->minor_to_major.size() == static_cast<size_t>(shape.rank())) {
    return shape.layout()->minor_to_major;
  }
  std::vector<int64_t> order;
  for (int64_t d = shape.rank() - 1; d >= 0; --d) order.push_back(d);
  return order;
}

// bitcast: each output element is the operand element at the same memory
// offset, each side placed by its own layout (XLA copies the layout-ordered
// buffer). When both layouts are row-major this is a byte copy.
Literal Bitcast(const Instruction& instruction, const Literal& in) {
  const Shape& to = instruction.shape();
  const Shape& from = instruction.operand(0)->shape();
  std::vector<int64_t> to_order = MinorToMajor(to), from_order = MinorToMajor(from);
  auto row_major = [](const std::vector<int64_t>& order) {
    for (size_t k = 0; k < order.size(); ++k) {
      if (order[k] != static_cast<int64_t>(order.size() - 1 - k)) return false;
    }
    return true;
  };
  if ((row_major(to_order) && row_major(from_order)) ||
      DTypeByteSize(to.dtype()) != DTypeByteSize(from.dtype()) ||
      to.ElementCount() != from.ElementCount()) {
    return ByteCopy(to, in);
  }
  std::vector<int64_t> to_strides(to.rank());
  int64_t stride = 1;
  for (int64_t d : to_order) {
    to_strides[d] = stride;
    stride *= to.dim(static_cast<int>(d));
  }
  std::vector<int64_t> from_strides = RowMajorStrides(from.dims());
  return Remap(to, in, [&](absl::Span<const int64_t> index) {
    int64_t offset = LinearIndex(index, to_strides);
    int64_t from_linear = 0;
    for (int64_t d : from_order) {  // the offset's digits, minor first
      int64_t size = from.dim(static_cast<int>(d));
      from_linear += (offset % size) * from_strides[d];
      offset /= size;
    }
    return from_linear;
  });
}

Literal Broadcast(const Instruction& instruction, const Literal& in) {
  const IntList& dims = instruction.attrs().dimensions.value_or(IntList{});
  std::vector<int64_t> strides = RowMajorStrides(in.shape().dims());
  return Remap(instruction.shape(), in, [&](absl::Span<const int64_t> index) {
    int64_t from = 0;
    for (size_t k = 0; k < dims.size(); ++k) from += index[dims[k]] * strides[k];
    return from;
  });
}

Literal Transpose(const Instruction& instruction, const Literal& in) {
  const IntList& perm = *instruction.attrs().dimensions;
  std::vector<int64_t> strides = RowMajorStrides(in.shape().dims());
  return Remap(instruction.shape(), in, [&](absl::Span<const int64_t> index) {
    int64_t from = 0;
    for (size_t k = 0; k < perm.size(); ++k) from += index[k] * strides[perm[k]];
    return from;
  });
}

Literal Slice(const Instruction& instruction, const Literal& in) {
  const SliceRanges& ranges = *instruction.attrs().slice;
  std::vector<int64_t> strides = RowMajorStrides(in.shape().dims());
  return Remap(instruction.shape(), in, [&](absl::Span<const int64_t> index) {
    int64_t from = 0;
    for (size_t k = 0; k < ranges.size(); ++k) {
      from += (ranges[k].start + index[k] * ranges[k].stride) * strides[k];
    }
    return from;
  });
}

Literal Reverse(const Instruction& instruction, const Literal& in) {
  const IntList& reversed = *instruction.attrs().dimensions;
  const auto& dims = in.shape().dims();
  std::vector<bool> flip(dims.size(), false);
  for (int64_t d : reversed) flip[d] = true;
  std::vector<int64_t> strides = RowMajorStrides(dims);
  return Remap(instruction.shape(), in, [&](absl::Span<const int64_t> index) {
    int64_t from = 0;
    for (size_t k = 0; k < dims.size(); ++k) {
      from += (flip[k] ? dims[k] - 1 - index[k] : index[k]) * strides[k];
    }
    return from;
  });
}

Literal Pad(const Instruction& instruction, const Literal& in, const Literal& value) {
  const PaddingConfig& config = *instruction.attrs().padding;
  const auto& dims = in.shape().dims();
  std::vector<int64_t> strides = RowMajorStrides(dims);
  return Remap(
      instruction.shape(), in,
      [&](absl::Span<const int64_t> index) -> int64_t {
        int64_t from = 0;
        for (size_t k = 0; k < dims.size(); ++k) {
          int64_t t = index[k] - config[k].low;
          int64_t step = config[k].interior + 1;
          if (t < 0 || t % step != 0 || t / step >= dims[k]) return -1;
          from += (t / step) * strides[k];
        }
        return from;
      },
      &value);
}

Literal Concatenate(const Instruction& instruction, OperandValues operands) {
  int64_t axis = instruction.attrs().dimensions->at(0);
  const Shape& shape = instruction.shape();
  Literal out(shape);
  int64_t size = DTypeByteSize(shape.dtype());
  // Row-major: each operand contributes contiguous runs per outer index.
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape.dim(static_cast<int>(d));
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < shape.rank(); ++d) inner *= shape.dim(static_cast<int>(d));
  int64_t out_run = shape.dim(static_cast<int>(axis)) * inner * size;
  int64_t offset = 0;
  for (const Literal* operand : operands) {
    int64_t run = operand->shape().dim(static_cast<int>(axis)) * inner * size;
    for (int64_t o = 0; run > 0 && o < outer; ++o) {  // an empty operand may have no buffer
      std::memcpy(out.mutable_bytes().data() + o * out_run + offset,
                  operand->bytes().data() + o * run, run);
    }
    offset += run;
  }
  return out;
}

// Start indices of dynamic-(update-)slice: one scalar operand per dimension
// (or, in the old form, one index vector), each clamped so the slice stays in
// bounds, as XLA defines it.
std::vector<int64_t> ClampedStarts(OperandValues index_operands, const Shape& operand,
                                   absl::Span<const int64_t> slice_dims) {
  bool vector_form = index_operands.size() == 1 && index_operands[0]->shape().rank() == 1;
  std::vector<int64_t> starts(operand.rank(), 0);
  for (int d = 0; d < operand.rank(); ++d) {
    const Literal& index = *index_operands[vector_form ? 0 : d];
    int64_t i = vector_form ? d : 0;
    int64_t start = IsUnsigned(index.shape().dtype())
                        ? static_cast<int64_t>(std::min<uint64_t>(index.GetBits(i), INT64_MAX))
                        : index.GetInt(i);
    starts[d] = std::clamp<int64_t>(start, 0, operand.dim(d) - slice_dims[d]);
  }
  return starts;
}

Literal DynamicSlice(const Instruction& instruction, OperandValues operands) {
  const Literal& in = *operands[0];
  std::vector<int64_t> starts =
      ClampedStarts(operands.subspan(1), in.shape(), instruction.shape().dims());
  std::vector<int64_t> strides = RowMajorStrides(in.shape().dims());
  return Remap(instruction.shape(), in, [&](absl::Span<const int64_t> index) {
    int64_t from = 0;
    for (size_t k = 0; k < index.size(); ++k) from += (starts[k] + index[k]) * strides[k];
    return from;
  });
}

Literal DynamicUpdateSlice(OperandValues operands) {
  Literal out = *operands[0];
  UpdateSliceInPlace(out, *operands[1], operands.subspan(2));
  return out;
}

absl::StatusOr<Literal> Iota(const Instruction& instruction) {
  int64_t axis = instruction.attrs().iota_dimension.value_or(0);
  const Shape& shape = instruction.shape();
  return DispatchDType(shape.dtype(), [&](auto traits) -> absl::StatusOr<Literal> {
    using T = decltype(traits);
    using C = typename T::Compute;
    Literal out(shape);
    auto* dst = out.mutable_data<typename T::Storage>();
    ForEachIndex(shape.dims(), [&](absl::Span<const int64_t> index, int64_t linear) {
      dst[linear] = T::Store(static_cast<C>(index[axis]));
    });
    return out;
  });
}

}  // namespace

void UpdateSliceInPlace(Literal& target, const Literal& update, OperandValues start_indices) {
  const Shape& shape = target.shape();
  absl::Span<const int64_t> dims = update.shape().dims();
  std::vector<int64_t> starts = ClampedStarts(start_indices, shape, dims);
  std::vector<int64_t> strides = RowMajorStrides(shape.dims());
  int64_t size = DTypeByteSize(shape.dtype());
  if (update.shape().ElementCount().value_or(0) == 0) return;
  // Whole innermost runs at a time: the update's rows are contiguous in both.
  int64_t run = dims.empty() ? 1 : dims.back();
  absl::Span<const int64_t> outer = dims.empty() ? dims : dims.first(dims.size() - 1);
  uint8_t* dst = target.mutable_bytes().data();
  const uint8_t* src = update.bytes().data();
  ForEachIndex(outer, [&](absl::Span<const int64_t> index, int64_t linear) {
    int64_t to = dims.empty() ? 0 : starts.back();
    for (size_t k = 0; k < index.size(); ++k) to += (starts[k] + index[k]) * strides[k];
    std::memcpy(dst + to * size, src + linear * run * size, run * size);
  });
}

absl::StatusOr<Literal> EvalDataMovement(const Instruction& instruction, OperandValues operands) {
  switch (instruction.opcode()) {
    case Opcode::kBroadcast: return Broadcast(instruction, *operands[0]);
    case Opcode::kReshape:
    case Opcode::kCopy: return ByteCopy(instruction.shape(), *operands[0]);
    case Opcode::kBitcast: return Bitcast(instruction, *operands[0]);
    case Opcode::kTranspose: return Transpose(instruction, *operands[0]);
    case Opcode::kSlice: return Slice(instruction, *operands[0]);
    case Opcode::kReverse: return Reverse(instruction, *operands[0]);
    case Opcode::kPad: return Pad(instruction, *operands[0], *operands[1]);
    case Opcode::kConcatenate: return Concatenate(instruction, operands);
    case Opcode::kDynamicSlice: return DynamicSlice(instruction, operands);
    case Opcode::kDynamicUpdateSlice: return DynamicUpdateSlice(operands);
    case Opcode::kIota: return Iota(instruction);
    default:
      return absl::UnimplementedError(absl::StrCat("the interpreter does not support '",
                                                   OpcodeName(instruction.opcode()), "'"));
  }
}

}  // namespace seam
