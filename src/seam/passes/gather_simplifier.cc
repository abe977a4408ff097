// gather-simplifier: a gather that reads one slice (its indices hold a
// single index vector) is a dynamic-slice plus a reshape, or a slice when
// the indices are a known constant; XLA's GatherExpander does the same for
// such "simple" gathers. Slices are cheaper to code-generate and algsimp
// knows how to move and merge them; gathers block most other rewrites.
// Start indices are clamped alike by gather and dynamic-slice (so that the
// slice lies in the operand), and for a constant the pass clamps them itself.
//
// Left alone: gathers of more than one slice (or none), gathers of a scalar
// operand, elided constant indices (their values are unknown: they become a
// dynamic-slice), and bounded dynamic shapes.
#include <algorithm>

#include "seam/passes/expander_util.h"
#include "seam/passes/pass.h"

namespace seam {
namespace {

struct GatherInfo {
  IntList start_map;
  IntList slice_sizes;
  int64_t vector_length = 0;
};

std::optional<GatherInfo> SingleSliceGather(const Instruction& g) {
  if (g.opcode() != Opcode::kGather || g.operand_count() != 2) return std::nullopt;
  const Shape& operand = g.operand(0)->shape();
  const Shape& indices = g.operand(1)->shape();
  const Attributes& a = g.attrs();
  if (!expand::IsStaticArray(operand) || !expand::IsStaticArray(indices) ||
      !expand::IsStaticArray(g.shape()) || operand.rank() == 0 || !a.start_index_map ||
      !a.slice_sizes || a.slice_sizes->size() != static_cast<size_t>(operand.rank())) {
    return std::nullopt;
  }
  int64_t vector_dim = a.index_vector_dim.value_or(indices.rank());
  GatherInfo info{*a.start_index_map, *a.slice_sizes, 1};
  int64_t batch = 1;
  for (int d = 0; d < indices.rank(); ++d) {
    if (d == vector_dim) {
      info.vector_length = indices.dim(d);
    } else {
      batch *= indices.dim(d);
    }
  }
  if (batch != 1 || info.vector_length != static_cast<int64_t>(info.start_map.size())) {
    return std::nullopt;
  }
  // One slice, reshaped: it must hold the result's elements (a collapsed
  // dimension of size 0, which XLA allows, leaves it empty).
  int64_t slice_elements = 1;
  for (int64_t size : info.slice_sizes) slice_elements *= size;
  if (slice_elements != g.shape().ElementCount()) return std::nullopt;
  return info;
}

bool IsKnownConstant(const Instruction& i) {
  return i.opcode() == Opcode::kConstant && i.literal() != nullptr && !i.literal()->is_elided() &&
         !i.literal()->is_opaque();
}

// Slice of `operand` at the clamped starts a constant index vector gives.
Instruction* ConstantSlice(HloBuilder& b, Instruction* operand, const Literal& indices,
                           const GatherInfo& info) {
  SliceRanges ranges;
  for (int d = 0; d < operand->shape().rank(); ++d) {
    int64_t start = 0;
    auto k = std::find(info.start_map.begin(), info.start_map.end(), d);
    if (k != info.start_map.end()) {
      int64_t at = k - info.start_map.begin();
      start = IsUnsigned(indices.shape().dtype())
                  ? static_cast<int64_t>(std::min<uint64_t>(indices.GetBits(at), INT64_MAX))
                  : indices.GetInt(at);
    }
    int64_t size = info.slice_sizes[d];
    start = std::clamp<int64_t>(start, 0, operand->shape().dim(d) - size);
    ranges.push_back({start, start + size, 1});
  }
  return b.Slice(operand, std::move(ranges));
}

Instruction* DynamicSlice(HloBuilder& b, Instruction* operand, Instruction* indices,
                          const GatherInfo& info) {
  DType index_type = indices->shape().dtype();
  Instruction* vector = nullptr;
  if (info.vector_length > 1) {
    vector = indices->shape().dims() == std::vector<int64_t>{info.vector_length}
                 ? indices
                 : b.Reshape(indices, {info.vector_length});
  }
  std::vector<Instruction*> operands{operand};
  Instruction* zero = nullptr;
  for (int d = 0; d < operand->shape().rank(); ++d) {
    auto k = std::find(info.start_map.begin(), info.start_map.end(), d);
    if (k == info.start_map.end()) {
      if (zero == nullptr) zero = expand::BitsConstant(b, index_type, 0);
      operands.push_back(zero);
    } else if (vector == nullptr) {
      operands.push_back(b.Reshape(indices, {}));
    } else {
      int64_t at = k - info.start_map.begin();
      operands.push_back(b.Reshape(b.Slice(vector, {{at, at + 1, 1}}), {}));
    }
  }
  Attributes attrs;
  attrs.dynamic_slice_sizes = info.slice_sizes;
  return b.Add(Opcode::kDynamicSlice, WithDims(operand->shape(), info.slice_sizes),
               std::move(operands), std::move(attrs));
}

class GatherSimplifierPass : public Pass {
 public:
  absl::StatusOr<bool> Run(Module& module) override {
    expand::Rewriter rewriter(module);
    bool changed = false;
    for (Instruction* g : rewriter.Instructions(Opcode::kGather)) {
      std::optional<GatherInfo> info = SingleSliceGather(*g);
      if (!info.has_value()) continue;
      HloBuilder b = rewriter.Builder(*g->parent());
      Instruction* operand = g->operand(0);
      Instruction* indices = g->operand(1);
      Instruction* slice = IsKnownConstant(*indices)
                               ? ConstantSlice(b, operand, *indices->literal(), *info)
                               : DynamicSlice(b, operand, indices, *info);
      // Dropping the collapsed (size-1) dimensions and adding the size-1
      // batch dimensions keeps the row-major order: a reshape.
      Instruction* result = slice->shape().dims() == g->shape().dims()
                                ? slice
                                : b.Reshape(slice, g->shape().dims());
      rewriter.ReplaceWithNew(g, result);
      changed = true;
    }
    rewriter.Flush();
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeGatherSimplifierPass() {
  return std::make_unique<GatherSimplifierPass>();
}

}  // namespace seam
