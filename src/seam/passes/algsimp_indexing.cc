// algsimp rules on indexing ops: dynamic-slice and dynamic-update-slice at
// known or irrelevant indices, iota along a size-1 dimension, and tuples
// taken apart and put back together. Like the other data-movement rules
// they only move values, so they are exact for every element type.
#include <algorithm>

#include "seam/passes/algsimp_rules.h"

namespace seam::algsimp {
namespace {

const std::vector<int64_t>& Dims(const Instruction* i) { return i->shape().dims(); }
bool IsArrayOp(const Instruction* i) {
  return i->shape().IsArray() && i->operand_count() > 0 && i->operand(0)->shape().IsArray();
}

// ---- dynamic slices ----

// dynamic-slice with known start indices -> slice. Starts are clamped to
// [0, dim - size], as XLA defines it.
bool DynamicSliceConstantIndices(Instruction* i, RewriteContext& ctx) {
  Instruction* x = i->operand(0);
  if (!IsArrayOp(i) || i->operand_count() != x->shape().rank() + 1) return false;
  SliceRanges ranges;
  for (int d = 0; d < x->shape().rank(); ++d) {
    const Literal* index = KnownLiteral(i->operand(d + 1));
    if (index == nullptr || index->element_count() != 1 || !IsInteger(index->shape().dtype())) {
      return false;
    }
    int64_t size = i->shape().dim(d);
    int64_t max_start = x->shape().dim(d) - size;
    int64_t start;
    if (IsUnsigned(index->shape().dtype())) {
      uint64_t u = index->GetBits(0);
      start = u > static_cast<uint64_t>(max_start) ? max_start : static_cast<int64_t>(u);
    } else {
      start = std::clamp<int64_t>(index->GetInt(0), 0, max_start);
    }
    ranges.push_back({start, start + size, 1});
  }
  return ctx.Replace(i, ctx.b().Slice(x, std::move(ranges)));
}

bool DynamicSliceFull(Instruction* i, RewriteContext& ctx) {
  return IsArrayOp(i) && Dims(i) == Dims(i->operand(0)) && ctx.Replace(i, i->operand(0));
}

// A full-size update overwrites everything (its start clamps to 0).
bool DynamicUpdateSliceFull(Instruction* i, RewriteContext& ctx) {
  return IsArrayOp(i) && Dims(i->operand(1)) == Dims(i) && ctx.Replace(i, i->operand(1));
}

bool DynamicUpdateSliceEmpty(Instruction* i, RewriteContext& ctx) {
  return IsArrayOp(i) && ElementCount(i->operand(1)->shape()) == 0 &&
         ctx.Replace(i, i->operand(0));
}

// ---- iota and tuples ----

bool IotaUnitDim(Instruction* i, RewriteContext& ctx) {
  if (!IsStaticArray(i->shape()) || !i->attrs().iota_dimension.has_value()) return false;
  DType t = i->shape().dtype();
  if (!IsInteger(t) && !IsFloat(t)) return false;
  if (i->shape().dim(static_cast<int>(*i->attrs().iota_dimension)) != 1) return false;
  return ctx.Replace(i, SplatZero(ctx.b(), i->shape()));
}

bool GetTupleElementOfTuple(Instruction* i, RewriteContext& ctx) {
  Instruction* tuple = i->operand(0);
  if (tuple->opcode() != Opcode::kTuple || !i->attrs().index.has_value()) return false;
  return ctx.Replace(i, tuple->operand(static_cast<int>(*i->attrs().index)));
}

// tuple(gte(t, 0), ..., gte(t, n-1)) of all of t's n elements -> t.
bool TupleOfGetTupleElements(Instruction* i, RewriteContext& ctx) {
  if (i->operand_count() == 0) return false;
  Instruction* source = nullptr;
  for (int k = 0; k < i->operand_count(); ++k) {
    Instruction* e = i->operand(k);
    if (e->opcode() != Opcode::kGetTupleElement || e->attrs().index != k) return false;
    if (source == nullptr) source = e->operand(0);
    if (e->operand(0) != source) return false;
  }
  if (source->shape().tuple_shapes().size() != static_cast<size_t>(i->operand_count())) {
    return false;
  }
  return ctx.Replace(i, source);
}

}  // namespace

void AppendIndexingRules(std::vector<RewriteRule>& rules) {
  using O = Opcode;
  std::vector<RewriteRule> mine = {
      {"dynamic-slice-constant-indices", {O::kDynamicSlice},
       "dynamic-slice at known (clamped) indices -> slice", &DynamicSliceConstantIndices},
      {"dynamic-slice-full", {O::kDynamicSlice}, "dynamic-slice of the whole operand -> x",
       &DynamicSliceFull},
      {"dynamic-update-slice-full", {O::kDynamicUpdateSlice},
       "dynamic-update-slice with a full-size update -> update", &DynamicUpdateSliceFull},
      {"dynamic-update-slice-empty", {O::kDynamicUpdateSlice},
       "dynamic-update-slice with an empty update -> operand", &DynamicUpdateSliceEmpty},
      {"iota-unit-dim", {O::kIota}, "iota along a size-1 dim -> zeros", &IotaUnitDim},
      {"gte-of-tuple", {O::kGetTupleElement}, "get-tuple-element(tuple(...), k) -> operand k",
       &GetTupleElementOfTuple},
      {"tuple-of-gtes", {O::kTuple}, "tuple(gte(t, 0), ..., gte(t, n-1)) -> t",
       &TupleOfGetTupleElements},
  };
  rules.insert(rules.end(), mine.begin(), mine.end());
}

}  // namespace seam::algsimp
