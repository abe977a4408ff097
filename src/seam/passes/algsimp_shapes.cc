// algsimp rules on data movement: broadcast, reshape, transpose, slice,
// concatenate, pad and reverse (indexing ops have a family of their own).
// They only move
// values, so every rewrite here is exact for every element type; shapes are
// logical (row-major), and the driver refuses a replacement whose layout
// differs from the instruction it replaces.
#include <algorithm>
#include <numeric>

#include "seam/passes/algsimp_rules.h"

namespace seam::algsimp {
namespace {

const std::vector<int64_t>& Dims(const Instruction* i) { return i->shape().dims(); }
bool IsArrayOp(const Instruction* i) {
  return i->shape().IsArray() && i->operand_count() > 0 && i->operand(0)->shape().IsArray();
}

// ---- reshape ----

bool ReshapeIdentity(Instruction* i, RewriteContext& ctx) {
  return IsArrayOp(i) && Dims(i) == Dims(i->operand(0)) && ctx.Replace(i, i->operand(0));
}

bool ReshapeReshape(Instruction* i, RewriteContext& ctx) {
  Instruction* inner = i->operand(0);
  if (!IsArrayOp(i) || inner->opcode() != Opcode::kReshape) return false;
  Instruction* x = inner->operand(0);
  if (Dims(x) == Dims(i)) return ctx.Replace(i, x);
  return ctx.Replace(i, ctx.b().Reshape(x, Dims(i)));
}

bool IsScalarBroadcast(const Instruction* i) {
  return i->opcode() == Opcode::kBroadcast && i->operand(0)->shape().rank() == 0;
}

bool ReshapeOfBroadcastScalar(Instruction* i, RewriteContext& ctx) {
  Instruction* bcast = i->operand(0);
  if (!IsArrayOp(i) || !IsScalarBroadcast(bcast)) return false;
  return ctx.Replace(i, ctx.b().Broadcast(bcast->operand(0), Dims(i), {}));
}

// The dimensions of size > 1, in order.
std::vector<int64_t> NonUnitDims(const std::vector<int64_t>& dims) {
  std::vector<int64_t> out;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] != 1) out.push_back(static_cast<int64_t>(d));
  }
  return out;
}

// reshape(broadcast(x)) that only adds or drops size-1 dimensions, where x
// has none: one broadcast of x, its dimensions renumbered.
bool ReshapeOfBroadcast(Instruction* i, RewriteContext& ctx) {
  Instruction* bcast = i->operand(0);
  if (!IsArrayOp(i) || bcast->opcode() != Opcode::kBroadcast) return false;
  Instruction* x = bcast->operand(0);
  std::vector<int64_t> in = NonUnitDims(Dims(bcast)), out = NonUnitDims(Dims(i));
  if (in.size() != out.size() || NonUnitDims(Dims(x)).size() != Dims(x).size()) return false;
  for (size_t k = 0; k < in.size(); ++k) {
    if (bcast->shape().dim(static_cast<int>(in[k])) != i->shape().dim(static_cast<int>(out[k]))) {
      return false;
    }
  }
  IntList dims;
  for (int64_t d : BroadcastDims(bcast)) {
    dims.push_back(out[std::find(in.begin(), in.end(), d) - in.begin()]);
  }
  return ctx.Replace(i, ctx.b().Broadcast(x, Dims(i), std::move(dims)));
}

// ---- transpose ----

bool TransposeIdentity(Instruction* i, RewriteContext& ctx) {
  return IsArrayOp(i) && IsIdentityPermutation(*i->attrs().dimensions) &&
         ctx.Replace(i, i->operand(0));
}

bool TransposeTranspose(Instruction* i, RewriteContext& ctx) {
  Instruction* inner = i->operand(0);
  if (!IsArrayOp(i) || inner->opcode() != Opcode::kTranspose) return false;
  const IntList& outer = *i->attrs().dimensions;
  const IntList& first = *inner->attrs().dimensions;
  IntList composed;
  for (int64_t p : outer) composed.push_back(first[p]);
  Instruction* x = inner->operand(0);
  if (IsIdentityPermutation(composed)) return ctx.Replace(i, x);
  return ctx.Replace(i, ctx.b().Transpose(x, std::move(composed)));
}

// A transpose that keeps the dimensions of size > 1 in order moves only
// size-1 dimensions: the row-major element order is unchanged.
bool TransposeToReshape(Instruction* i, RewriteContext& ctx) {
  if (!IsArrayOp(i)) return false;
  const IntList& p = *i->attrs().dimensions;
  const Shape& x = i->operand(0)->shape();
  int64_t last = -1;
  for (int64_t d : p) {
    if (x.dim(static_cast<int>(d)) == 1) continue;
    if (d < last) return false;
    last = d;
  }
  return ctx.Replace(i, ctx.b().Reshape(i->operand(0), Dims(i)));
}

// reshape(transpose(x)) that only adds or drops size-1 dimensions ->
// transpose(reshape(x)): the reshape of x is a view, and the transpose next
// to its consumer can fold into it (a dot reads K^T through PyTorch/XLA's
// squeeze of attention's keys). Size-1 dimensions keep their places.
bool ReshapeOfTranspose(Instruction* i, RewriteContext& ctx) {
  Instruction* t = i->operand(0);
  if (!IsArrayOp(i) || t->opcode() != Opcode::kTranspose || !IsArrayOp(t)) return false;
  Instruction* x = t->operand(0);
  const std::vector<int64_t>& r = Dims(i);
  const std::vector<int64_t>& td = Dims(t);
  const std::vector<int64_t>& xd = Dims(x);
  const IntList& p = *t->attrs().dimensions;
  const std::vector<int64_t> rn = NonUnitDims(r), tn = NonUnitDims(td), xn = NonUnitDims(xd);
  if (rn.size() != tn.size()) return false;
  for (size_t k = 0; k < rn.size(); ++k) {
    if (r[rn[k]] != td[tn[k]]) return false;
  }
  std::vector<int64_t> rank(xd.size(), -1);  // of each of x's dims among its non-unit ones
  for (size_t k = 0; k < xn.size(); ++k) rank[xn[k]] = static_cast<int64_t>(k);
  std::vector<int64_t> y(r.size(), 1);
  IntList q(r.size());
  std::iota(q.begin(), q.end(), 0);
  for (size_t k = 0; k < rn.size(); ++k) {
    y[rn[k]] = xd[xn[k]];
    q[rn[k]] = rn[rank[p[tn[k]]]];
  }
  return ctx.Replace(i, ctx.b().Transpose(ctx.b().Reshape(x, y), std::move(q)));
}

// transpose(broadcast(x)) -> broadcast(x) when x's dimensions stay in order.
bool TransposeOfBroadcast(Instruction* i, RewriteContext& ctx) {
  Instruction* bcast = i->operand(0);
  if (!IsArrayOp(i) || bcast->opcode() != Opcode::kBroadcast) return false;
  const IntList& p = *i->attrs().dimensions;
  IntList inverse(p.size());
  for (size_t j = 0; j < p.size(); ++j) inverse[p[j]] = static_cast<int64_t>(j);
  IntList dims;
  for (int64_t d : BroadcastDims(bcast)) dims.push_back(inverse[d]);
  if (!std::is_sorted(dims.begin(), dims.end())) return false;
  return ctx.Replace(i, ctx.b().Broadcast(bcast->operand(0), Dims(i), std::move(dims)));
}

// ---- broadcast ----

bool BroadcastIdentity(Instruction* i, RewriteContext& ctx) {
  return IsArrayOp(i) && Dims(i) == Dims(i->operand(0)) &&
         IsIdentityPermutation(BroadcastDims(i)) && ctx.Replace(i, i->operand(0));
}

bool BroadcastBroadcast(Instruction* i, RewriteContext& ctx) {
  Instruction* inner = i->operand(0);
  if (!IsArrayOp(i) || inner->opcode() != Opcode::kBroadcast) return false;
  const IntList& outer = BroadcastDims(i);
  IntList dims;
  for (int64_t d : BroadcastDims(inner)) dims.push_back(outer[d]);
  return ctx.Replace(i, ctx.b().Broadcast(inner->operand(0), Dims(i), std::move(dims)));
}

// ---- slice ----

bool SliceFull(Instruction* i, RewriteContext& ctx) {
  if (!IsArrayOp(i) || Dims(i) != Dims(i->operand(0))) return false;
  for (const SliceRange& r : *i->attrs().slice) {
    if (r.start != 0) return false;
  }
  return ctx.Replace(i, i->operand(0));
}

bool SliceSlice(Instruction* i, RewriteContext& ctx) {
  Instruction* inner = i->operand(0);
  if (!IsArrayOp(i) || inner->opcode() != Opcode::kSlice) return false;
  const SliceRanges& outer = *i->attrs().slice;
  const SliceRanges& first = *inner->attrs().slice;
  SliceRanges combined;
  for (size_t d = 0; d < outer.size(); ++d) {
    int64_t n = i->shape().dim(static_cast<int>(d));
    SliceRange r;
    r.stride = first[d].stride * outer[d].stride;
    r.start = n == 0 ? 0 : first[d].start + outer[d].start * first[d].stride;
    r.limit = n == 0 ? 0 : r.start + (n - 1) * r.stride + 1;
    combined.push_back(r);
  }
  return ctx.Replace(i, ctx.b().Slice(inner->operand(0), std::move(combined)));
}

// slice(concatenate(a, b, ...)) reading from one operand only -> slice of it.
bool SliceOfConcat(Instruction* i, RewriteContext& ctx) {
  Instruction* concat = i->operand(0);
  if (!IsArrayOp(i) || concat->opcode() != Opcode::kConcatenate) return false;
  int64_t c = (*concat->attrs().dimensions)[0];
  int64_t n = i->shape().dim(static_cast<int>(c));
  if (n == 0) return false;
  SliceRanges ranges = *i->attrs().slice;
  SliceRange& r = ranges[c];
  int64_t last = r.start + (n - 1) * r.stride;
  int64_t offset = 0;
  for (Instruction* part : concat->operands()) {
    int64_t size = part->shape().dim(static_cast<int>(c));
    if (r.start >= offset && last < offset + size) {
      r.start -= offset;
      r.limit = r.start + (n - 1) * r.stride + 1;
      return ctx.Replace(i, ctx.b().Slice(part, std::move(ranges)));
    }
    offset += size;
  }
  return false;
}

// slice(broadcast(x)) -> broadcast(slice(x)): slice the smaller array.
bool SliceOfBroadcast(Instruction* i, RewriteContext& ctx) {
  Instruction* bcast = i->operand(0);
  if (!IsArrayOp(i) || bcast->opcode() != Opcode::kBroadcast) return false;
  Instruction* x = bcast->operand(0);
  const IntList& dims = BroadcastDims(bcast);
  const SliceRanges& ranges = *i->attrs().slice;
  SliceRanges x_ranges;
  bool full = true;
  for (size_t k = 0; k < dims.size(); ++k) {
    x_ranges.push_back(ranges[dims[k]]);
    full &= ranges[dims[k]].start == 0 &&
            i->shape().dim(static_cast<int>(dims[k])) == x->shape().dim(static_cast<int>(k));
  }
  if (!full) x = ctx.b().Slice(x, std::move(x_ranges));
  return ctx.Replace(i, ctx.b().Broadcast(x, Dims(i), dims));
}

// slice(pad(x, v)) inside x -> slice(x); entirely in the padding -> v.
bool SliceOfPad(Instruction* i, RewriteContext& ctx) {
  Instruction* pad = i->operand(0);
  if (!IsArrayOp(i) || pad->opcode() != Opcode::kPad || ElementCount(i->shape()) == 0) {
    return false;
  }
  Instruction* x = pad->operand(0);
  const PaddingConfig& config = *pad->attrs().padding;
  const SliceRanges& ranges = *i->attrs().slice;
  SliceRanges inside;
  bool all_inside = true, some_dim_outside = false;
  for (size_t d = 0; d < ranges.size(); ++d) {
    if (config[d].interior != 0) return false;
    int64_t n = i->shape().dim(static_cast<int>(d));
    int64_t first = ranges[d].start, last = first + (n - 1) * ranges[d].stride;
    int64_t lo = config[d].low, hi = config[d].low + x->shape().dim(static_cast<int>(d));
    if (first >= lo && last < hi) {
      inside.push_back({first - lo, last - lo + 1, ranges[d].stride});
    } else {
      all_inside = false;
      some_dim_outside |= last < lo || first >= hi;
    }
  }
  if (all_inside) return ctx.Replace(i, ctx.b().Slice(x, std::move(inside)));
  if (some_dim_outside) return ctx.Replace(i, ctx.b().Broadcast(pad->operand(1), Dims(i), {}));
  return false;
}

// ---- concatenate ----

int64_t ConcatDim(const Instruction* i) { return (*i->attrs().dimensions)[0]; }

bool ConcatSingle(Instruction* i, RewriteContext& ctx) {
  return IsArrayOp(i) && i->operand_count() == 1 && ctx.Replace(i, i->operand(0));
}

bool ConcatDropEmpty(Instruction* i, RewriteContext& ctx) {
  if (!IsArrayOp(i)) return false;
  int c = static_cast<int>(ConcatDim(i));
  std::vector<Instruction*> parts;
  for (Instruction* part : i->operands()) {
    if (part->shape().dim(c) != 0) parts.push_back(part);
  }
  if (parts.empty() || parts.size() == i->operands().size()) return false;
  if (parts.size() == 1) return ctx.Replace(i, parts[0]);
  return ctx.Replace(i, ctx.b().Concatenate(std::move(parts), c));
}

// concat(..., slice(x)[a:b], slice(x)[b:c], ...) -> concat(..., slice(x)[a:c], ...).
bool ConcatAdjacentSlices(Instruction* i, RewriteContext& ctx) {
  if (!IsArrayOp(i)) return false;
  int64_t c = ConcatDim(i);
  std::vector<Instruction*> parts;
  bool merged = false;
  for (Instruction* part : i->operands()) {
    Instruction* prev = parts.empty() ? nullptr : parts.back();
    if (prev != nullptr && prev->opcode() == Opcode::kSlice && part->opcode() == Opcode::kSlice &&
        prev->operand(0) == part->operand(0)) {
      SliceRanges a = *prev->attrs().slice;
      const SliceRanges& b = *part->attrs().slice;
      bool adjacent = true;
      for (size_t d = 0; d < a.size(); ++d) {
        if (static_cast<int64_t>(d) == c) {
          adjacent &= a[d].stride == 1 && b[d].stride == 1 && a[d].limit == b[d].start;
        } else {
          adjacent &= a[d] == b[d];
        }
      }
      if (adjacent) {
        a[c].limit = b[c].limit;
        parts.back() = ctx.b().Slice(prev->operand(0), std::move(a));
        merged = true;
        continue;
      }
    }
    parts.push_back(part);
  }
  if (!merged) return false;
  if (parts.size() == 1) return ctx.Replace(i, parts[0]);
  return ctx.Replace(i, ctx.b().Concatenate(std::move(parts), c));
}

// concat(a, concat(b, c), d) on one dimension -> concat(a, b, c, d), when
// the inner one has no other user (else both would be computed).
bool ConcatFlatten(Instruction* i, RewriteContext& ctx) {
  if (!IsArrayOp(i)) return false;
  int64_t c = ConcatDim(i);
  std::vector<Instruction*> parts;
  bool flattened = false;
  for (Instruction* part : i->operands()) {
    if (part->opcode() == Opcode::kConcatenate && ConcatDim(part) == c &&
        part->users().size() == 1) {
      parts.insert(parts.end(), part->operands().begin(), part->operands().end());
      flattened = true;
    } else {
      parts.push_back(part);
    }
  }
  return flattened && ctx.Replace(i, ctx.b().Concatenate(std::move(parts), c));
}

// Concatenated broadcasts of one scalar are one broadcast of it.
bool ConcatSameSplat(Instruction* i, RewriteContext& ctx) {
  if (!IsArrayOp(i) || !IsScalarBroadcast(i->operand(0))) return false;
  const Instruction* scalar = i->operand(0)->operand(0);
  for (const Instruction* part : i->operands()) {
    if (!IsScalarBroadcast(part) || part->operand(0) != scalar) return false;
  }
  return ctx.Replace(i, ctx.b().Broadcast(i->operand(0)->operand(0), Dims(i), {}));
}

// ---- pad ----

bool PadZeroConfig(Instruction* i, RewriteContext& ctx) {
  if (!IsArrayOp(i)) return false;
  for (const PadDim& p : *i->attrs().padding) {
    if (p.low != 0 || p.high != 0 || p.interior != 0) return false;
  }
  return ctx.Replace(i, i->operand(0));
}

// Negative low/high padding only removes elements: a slice.
bool PadNegativeToSlice(Instruction* i, RewriteContext& ctx) {
  if (!IsArrayOp(i)) return false;
  Instruction* x = i->operand(0);
  SliceRanges ranges;
  bool negative = false;
  const PaddingConfig& config = *i->attrs().padding;
  for (size_t d = 0; d < config.size(); ++d) {
    const PadDim& p = config[d];
    if (p.low > 0 || p.high > 0 || p.interior != 0) return false;
    negative |= p.low < 0 || p.high < 0;
    int64_t size = x->shape().dim(static_cast<int>(d));
    ranges.push_back({-p.low, std::max(-p.low, size + p.high), 1});
  }
  return negative && ctx.Replace(i, ctx.b().Slice(x, std::move(ranges)));
}

// ---- reverse ----

bool ReverseUnitDims(Instruction* i, RewriteContext& ctx) {
  if (!IsArrayOp(i)) return false;
  const IntList& dims = *i->attrs().dimensions;
  IntList kept;
  for (int64_t d : dims) {
    if (i->shape().dim(static_cast<int>(d)) > 1) kept.push_back(d);
  }
  if (kept.size() == dims.size()) return false;
  if (kept.empty()) return ctx.Replace(i, i->operand(0));
  Attributes attrs = i->attrs();
  attrs.dimensions = std::move(kept);
  return ctx.Replace(i, ctx.b().Add(Opcode::kReverse, i->shape(), {i->operand(0)}, attrs));
}

bool ReverseReverse(Instruction* i, RewriteContext& ctx) {
  Instruction* inner = i->operand(0);
  if (!IsArrayOp(i) || inner->opcode() != Opcode::kReverse) return false;
  const IntList& a = *i->attrs().dimensions;
  const IntList& b = *inner->attrs().dimensions;
  IntList remaining;  // reversed an odd number of times
  for (int64_t d : a) {
    if (!Contains(b, d)) remaining.push_back(d);
  }
  for (int64_t d : b) {
    if (!Contains(a, d)) remaining.push_back(d);
  }
  std::sort(remaining.begin(), remaining.end());
  Instruction* x = inner->operand(0);
  if (remaining.empty()) return ctx.Replace(i, x);
  Attributes attrs;
  attrs.dimensions = std::move(remaining);
  return ctx.Replace(i, ctx.b().Add(Opcode::kReverse, i->shape(), {x}, std::move(attrs)));
}

}  // namespace

void AppendShapeRules(std::vector<RewriteRule>& rules) {
  using O = Opcode;
  std::vector<RewriteRule> mine = {
      {"reshape-identity", {O::kReshape}, "reshape to the operand's dims -> x", &ReshapeIdentity},
      {"reshape-reshape", {O::kReshape}, "reshape(reshape(x)) -> reshape(x)", &ReshapeReshape},
      {"reshape-of-broadcast-scalar", {O::kReshape},
       "reshape(broadcast(scalar)) -> broadcast(scalar)", &ReshapeOfBroadcastScalar},
      {"reshape-of-broadcast", {O::kReshape},
       "reshape(broadcast(x)) adding or dropping size-1 dims -> broadcast(x)",
       &ReshapeOfBroadcast},
      {"transpose-identity", {O::kTranspose}, "transpose by the identity -> x",
       &TransposeIdentity},
      {"transpose-transpose", {O::kTranspose}, "transpose(transpose(x)) -> one transpose",
       &TransposeTranspose},
      {"transpose-to-reshape", {O::kTranspose},
       "transpose moving only size-1 dims -> reshape", &TransposeToReshape},
      {"reshape-of-transpose", {O::kReshape},
       "reshape(transpose(x)) adding or dropping size-1 dims -> transpose(reshape(x))",
       &ReshapeOfTranspose},
      {"transpose-of-broadcast", {O::kTranspose},
       "transpose(broadcast(x)) -> broadcast(x) when x's dims stay in order",
       &TransposeOfBroadcast},
      {"broadcast-identity", {O::kBroadcast}, "broadcast to the operand's own shape -> x",
       &BroadcastIdentity},
      {"broadcast-broadcast", {O::kBroadcast}, "broadcast(broadcast(x)) -> one broadcast",
       &BroadcastBroadcast},
      {"slice-full", {O::kSlice}, "slice of the whole operand -> x", &SliceFull},
      {"slice-slice", {O::kSlice}, "slice(slice(x)) -> one slice", &SliceSlice},
      {"slice-of-concat", {O::kSlice},
       "slice(concat) within one operand -> slice of that operand", &SliceOfConcat},
      {"slice-of-broadcast", {O::kSlice}, "slice(broadcast(x)) -> broadcast(slice(x))",
       &SliceOfBroadcast},
      {"slice-of-pad", {O::kSlice},
       "slice(pad(x, v)) inside x -> slice(x); inside the padding -> broadcast(v)", &SliceOfPad},
      {"concat-single", {O::kConcatenate}, "concatenate of one operand -> x", &ConcatSingle},
      {"concat-drop-empty", {O::kConcatenate}, "drops zero-sized operands of concatenate",
       &ConcatDropEmpty},
      {"concat-adjacent-slices", {O::kConcatenate},
       "concat of adjacent slices of one array -> one slice", &ConcatAdjacentSlices},
      {"concat-flatten", {O::kConcatenate},
       "concat(a, concat(b, c)) on one dim -> concat(a, b, c)", &ConcatFlatten},
      {"concat-same-splat", {O::kConcatenate},
       "concat of broadcasts of one scalar -> broadcast", &ConcatSameSplat},
      {"pad-zero-config", {O::kPad}, "pad by nothing -> x", &PadZeroConfig},
      {"pad-negative-to-slice", {O::kPad}, "pad with only negative edges -> slice",
       &PadNegativeToSlice},
      {"reverse-unit-dims", {O::kReverse}, "reverse drops dims of size <= 1; none left -> x",
       &ReverseUnitDims},
      {"reverse-reverse", {O::kReverse}, "reverse(reverse(x)) -> x (or one reverse)",
       &ReverseReverse},
  };
  rules.insert(rules.end(), mine.begin(), mine.end());
}

}  // namespace seam::algsimp
