// algsimp rules on compare, select, convert, reduce and dot, and the folding
// of small constant expressions.
//
// Reductions: the interpreter (and XLA, for the rewrites kept here) combines
// each output's elements starting from init; a rewrite that changes which
// elements meet in which order is only kept when that order is unchanged
// (reduce of a reshape or transpose that keeps the reduced elements in
// row-major order) or does not matter (idempotent reducers, integer add).
// Dots accumulate from +0, so a one-term dot is a product plus +0 for floats
// (which turns a -0 product into +0, as the dot does).
#include <algorithm>

#include "absl/algorithm/container.h"
#include "seam/eval/ops.h"
#include "seam/passes/algsimp_rules.h"

namespace seam::algsimp {
namespace {

DType TypeOf(const Instruction* i) { return i->shape().dtype(); }
bool IsNumber(DType t) { return IsInteger(t) || IsFloat(t); }

bool TotalOrder(const Instruction* compare) {
  return compare->attrs().type.has_value() && compare->attrs().type->text == "TOTALORDER";
}

// ---- compare ----

bool CompareSelf(Instruction* i, RewriteContext& ctx) {
  // Floats: NaN == NaN is false, except in a total order.
  if (!i->shape().IsArray() || i->operand(0) != i->operand(1) || !i->attrs().direction) {
    return false;
  }
  DType t = TypeOf(i->operand(0));
  if (!IsIntegral(t) && !(IsFloat(t) && TotalOrder(i))) return false;
  ComparisonDirection d = *i->attrs().direction;
  bool value = d == ComparisonDirection::kEq || d == ComparisonDirection::kGe ||
               d == ComparisonDirection::kLe;
  return ctx.Replace(i, SplatBits(ctx.b(), i->shape(), value ? 1 : 0));
}

ComparisonDirection Mirror(ComparisonDirection d) {
  switch (d) {
    case ComparisonDirection::kLt: return ComparisonDirection::kGt;
    case ComparisonDirection::kGt: return ComparisonDirection::kLt;
    case ComparisonDirection::kLe: return ComparisonDirection::kGe;
    case ComparisonDirection::kGe: return ComparisonDirection::kLe;
    default: return d;
  }
}

bool CompareConstantLhs(Instruction* i, RewriteContext& ctx) {
  // a < b is b > a for every pair, NaN included.
  if (!i->attrs().direction || !IsConstantLike(i->operand(0)) ||
      IsConstantLike(i->operand(1))) {
    return false;
  }
  Attributes attrs = i->attrs();
  attrs.direction = Mirror(*attrs.direction);
  Instruction* swapped = ctx.b().Add(Opcode::kCompare, i->shape(),
                                     {i->operand(1), i->operand(0)}, std::move(attrs));
  return ctx.Replace(i, swapped);
}

// ---- select ----

bool SelectConstantPred(Instruction* i, RewriteContext& ctx) {
  std::optional<Splat> p = GetSplat(i->operand(0));
  if (!p || !IsPred(p->dtype)) return false;
  return ctx.Replace(i, i->operand(p->bits != 0 ? 1 : 2));
}

bool SelectSameBranches(Instruction* i, RewriteContext& ctx) {
  return i->operand(1) == i->operand(2) && ctx.Replace(i, i->operand(1));
}

bool SelectNotPred(Instruction* i, RewriteContext& ctx) {
  Instruction* n = i->operand(0);
  if (n->opcode() != Opcode::kNot) return false;
  return ctx.ReplaceWithClone(i, {n->operand(0), i->operand(2), i->operand(1)});
}

bool SelectOfBools(Instruction* i, RewriteContext& ctx) {
  Instruction* p = i->operand(0);
  if (!i->shape().IsArray() || !IsPred(TypeOf(i)) || p->shape().dims() != i->shape().dims()) {
    return false;
  }
  std::optional<Splat> t = GetSplat(i->operand(1));
  std::optional<Splat> f = GetSplat(i->operand(2));
  if (!t || !f || t->bits == f->bits) return false;
  if (t->bits != 0) return ctx.Replace(i, p);
  return ctx.Replace(i, ctx.b().Unary(Opcode::kNot, p));
}

// ---- convert ----

bool ConvertSameType(Instruction* i, RewriteContext& ctx) {
  return i->shape().IsArray() && TypeOf(i) == TypeOf(i->operand(0)) &&
         ctx.Replace(i, i->operand(0));
}

bool ConvertConvert(Instruction* i, RewriteContext& ctx) {
  Instruction* mid = i->operand(0);
  if (!i->shape().IsArray() || mid->opcode() != Opcode::kConvert) return false;
  Instruction* x = mid->operand(0);
  DType a = TypeOf(x), b = TypeOf(mid), c = TypeOf(i);
  // Every conversion is a function of the value, so an exact first step
  // changes nothing...
  if (!IsIntegralOrFloat(c) || !ConvertsExactly(a, b)) return false;
  // ...except that float -> int saturates where int -> int wraps: through a
  // float between integers only when the target holds every value of x.
  if (IsInteger(a) && IsFloat(b) && IsInteger(c) && !ConvertsExactly(a, c)) return false;
  if (a == c) return ctx.Replace(i, x);
  return ctx.Replace(i, ctx.b().Convert(x, c));
}

// ---- folding small constant expressions ----

// Results up to this many elements become constants; larger ones stay ops
// (the constant-folding pass handles those with its own limits).
constexpr int64_t kMaxFoldElements = 64;
constexpr int64_t kMaxFoldOperandElements = 1 << 16;

bool FoldSmallConstant(Instruction* i, RewriteContext& ctx) {
  if (!IsStaticArray(i->shape()) || ElementCount(i->shape()) > kMaxFoldElements ||
      i->operand_count() == 0 || !IsInterpretable(i->opcode())) {
    return false;
  }
  std::vector<const Literal*> operands;
  for (const Instruction* operand : i->operands()) {
    const Literal* literal = KnownLiteral(operand);
    if (literal == nullptr || literal->element_count() > kMaxFoldOperandElements) return false;
    operands.push_back(literal);
  }
  absl::StatusOr<Literal> value = EvalInstruction(*i, operands, ctx.evaluator());
  if (!value.ok()) return false;  // left for whoever runs the module to report
  Instruction* constant = ctx.b().Constant(std::move(*value));
  constant->mutable_shape() = i->shape();
  return ctx.Replace(i, constant);
}

// Compares and conversions of constants fold under rules of their own.
constexpr Opcode kCompareOps[] = {Opcode::kCompare};
constexpr Opcode kConversionOps[] = {Opcode::kConvert, Opcode::kBitcastConvert,
                                     Opcode::kReducePrecision};

// Every elementwise op the interpreter evaluates on its operands alone (map
// applies a computation), but `except`: what folds on known constants.
std::vector<Opcode> FoldableElementwise(std::vector<Opcode> except) {
  except.push_back(Opcode::kMap);
  std::vector<Opcode> ops;
  for (int k = 0; k < kOpcodeCount; ++k) {
    auto op = static_cast<Opcode>(k);
    if (IsElementwise(op) && IsInterpretable(op) && !absl::c_linear_search(except, op)) {
      ops.push_back(op);
    }
  }
  return ops;
}

std::vector<Opcode> ElementwiseToFold() {
  std::vector<Opcode> own_rules(std::begin(kCompareOps), std::end(kCompareOps));
  own_rules.insert(own_rules.end(), std::begin(kConversionOps), std::end(kConversionOps));
  return FoldableElementwise(own_rules);
}

// A splat keeps its result's dimensions, which a bitcast-convert between
// widths does not.
std::vector<Opcode> SplatFoldable() { return FoldableElementwise({Opcode::kBitcastConvert}); }

// op(broadcast(c1), c2, ...) on scalar constants: every element is the same
// op(c1, c2, ...), computed once on the scalars.
bool FoldSplatElementwise(Instruction* i, RewriteContext& ctx) {
  if (!IsStaticArray(i->shape()) || i->shape().rank() == 0 || !IsInterpretable(i->opcode())) {
    return false;
  }
  bool any_broadcast = false;
  std::vector<const Literal*> scalars;
  for (const Instruction* operand : i->operands()) {
    if (operand->opcode() == Opcode::kBroadcast) {
      operand = operand->operand(0);
      any_broadcast = true;
    }
    const Literal* literal = KnownLiteral(operand);
    if (literal == nullptr || literal->shape().rank() != 0) return false;
    scalars.push_back(literal);
  }
  if (!any_broadcast) return false;
  // The same op on scalars, outside any computation: the interpreter reads
  // only its opcode, attributes and shape.
  Instruction scalar_op(i->name(), i->opcode(), Shape::Scalar(i->shape().dtype()));
  scalar_op.mutable_attrs() = i->attrs();
  absl::StatusOr<Literal> value = EvalInstruction(scalar_op, scalars, ctx.evaluator());
  if (!value.ok()) return false;
  Instruction* constant = ctx.b().Constant(std::move(*value));
  return ctx.Replace(i, ctx.b().Broadcast(constant, i->shape().dims(), {}));
}

// ---- reduce ----

// Input and output of a reduce hold the same number of elements: each output
// is op(init, its one element).
bool ReduceUnitDims(Instruction* i, RewriteContext& ctx) {
  std::optional<Opcode> op = ReducerOp(*i);
  Instruction* x = i->operand(0);
  Instruction* init = i->operand(1);
  if (!op || !IsStaticArray(x->shape()) || ElementCount(x->shape()) == 0 ||
      ElementCount(x->shape()) != ElementCount(i->shape())) {
    return false;
  }
  Instruction* y = x->shape().dims() == i->shape().dims() ? x : ctx.b().Reshape(x, i->shape().dims());
  if (!IsReducerIdentity(*op, init)) {
    Instruction* bcast = ctx.b().Broadcast(init, i->shape().dims(), {});
    y = ctx.b().Binary(*op, y, bcast);
  }
  return ctx.Replace(i, y);
}

bool ReduceEmpty(Instruction* i, RewriteContext& ctx) {
  Instruction* x = i->operand(0);
  if (i->operand_count() != 2 || !IsStaticArray(x->shape()) || !IsStaticArray(i->shape()) ||
      ElementCount(x->shape()) != 0 || ElementCount(i->shape()) == 0 ||
      TypeOf(i->operand(1)) != TypeOf(i)) {
    return false;
  }
  return ctx.Replace(i, ctx.b().Broadcast(i->operand(1), i->shape().dims(), {}));
}

// Consecutive input and output dimensions of a reshape with equal products:
// the reshape only regroups dimensions within each group.
struct DimGroup {
  std::vector<int64_t> in, out;
};

std::optional<std::vector<DimGroup>> ReshapeGroups(const std::vector<int64_t>& in,
                                                   const std::vector<int64_t>& out) {
  std::vector<DimGroup> groups;
  size_t i = 0, j = 0;
  while (i < in.size() || j < out.size()) {
    DimGroup g;
    int64_t pi = 1, po = 1;
    if (i < in.size()) g.in.push_back(i), pi *= in[i++];
    if (j < out.size()) g.out.push_back(j), po *= out[j++];
    while (pi != po) {
      if (pi < po) {
        if (i >= in.size()) return std::nullopt;
        g.in.push_back(i), pi *= in[i++];
      } else {
        if (j >= out.size()) return std::nullopt;
        g.out.push_back(j), po *= out[j++];
      }
    }
    groups.push_back(std::move(g));
  }
  return groups;
}

// reduce(reshape(x)) -> reduce(x) when the reshape only regroups reduced
// dimensions among themselves and kept ones among themselves: each output
// then sees the same elements in the same row-major order.
bool ReduceOfReshape(Instruction* i, RewriteContext& ctx) {
  Instruction* r = i->operand(0);
  if (i->operand_count() != 2 || r->opcode() != Opcode::kReshape || !i->shape().IsArray()) {
    return false;
  }
  Instruction* x = r->operand(0);
  if (!IsStaticArray(x->shape()) || ElementCount(x->shape()) == 0) return false;
  std::optional<std::vector<DimGroup>> groups = ReshapeGroups(x->shape().dims(), r->shape().dims());
  if (!groups) return false;
  const IntList& reduced = *i->attrs().dimensions;
  auto is_reduced = [&](int64_t d) {
    return std::find(reduced.begin(), reduced.end(), d) != reduced.end();
  };
  IntList x_reduced;
  std::vector<int64_t> kept_dims;
  for (const DimGroup& g : *groups) {
    int reduced_count = 0, kept_count = 0;
    for (int64_t d : g.out) {
      if (r->shape().dim(static_cast<int>(d)) == 1) continue;  // either way
      (is_reduced(d) ? reduced_count : kept_count)++;
    }
    if (reduced_count > 0 && kept_count > 0) return false;
    for (int64_t d : g.in) {
      if (reduced_count > 0) {
        x_reduced.push_back(d);
      } else {
        kept_dims.push_back(x->shape().dim(static_cast<int>(d)));
      }
    }
  }
  Instruction* reduce = ctx.b().Reduce(x, i->operand(1), std::move(x_reduced),
                                       *i->attrs().to_apply);
  if (kept_dims != i->shape().dims()) reduce = ctx.b().Reshape(reduce, i->shape().dims());
  return ctx.Replace(i, reduce);
}

// reduce(transpose(x)) -> reduce(x) when the transpose keeps the reduced
// dimensions, and the kept ones, in their relative order.
bool ReduceOfTranspose(Instruction* i, RewriteContext& ctx) {
  Instruction* t = i->operand(0);
  if (i->operand_count() != 2 || t->opcode() != Opcode::kTranspose || !i->shape().IsArray()) {
    return false;
  }
  const IntList& p = *t->attrs().dimensions;
  const IntList& reduced = *i->attrs().dimensions;
  IntList x_reduced, x_kept;
  for (size_t j = 0; j < p.size(); ++j) {
    bool r = std::find(reduced.begin(), reduced.end(), static_cast<int64_t>(j)) != reduced.end();
    (r ? x_reduced : x_kept).push_back(p[j]);
  }
  if (!std::is_sorted(x_reduced.begin(), x_reduced.end()) ||
      !std::is_sorted(x_kept.begin(), x_kept.end())) {
    return false;
  }
  return ctx.Replace(i, ctx.b().Reduce(t->operand(0), i->operand(1), std::move(x_reduced),
                                       *i->attrs().to_apply));
}

// reduce(broadcast(x)) over dimensions the broadcast added: for max, min,
// and, or the repeats do not matter; an integer sum is x times the count
// (wrapping alike). Float sums would round differently: left alone.
bool ReduceOfBroadcast(Instruction* i, RewriteContext& ctx) {
  std::optional<Opcode> op = ReducerOp(*i);
  Instruction* bcast = i->operand(0);
  if (!op || bcast->opcode() != Opcode::kBroadcast || !IsStaticArray(bcast->shape())) return false;
  Instruction* x = bcast->operand(0);
  Instruction* init = i->operand(1);
  DType t = TypeOf(i);
  bool idempotent = IsPred(t) || *op == Opcode::kMaximum || *op == Opcode::kMinimum ||
                    *op == Opcode::kAnd || *op == Opcode::kOr;
  bool integer_sum = IsInteger(t) && *op == Opcode::kAdd;
  if (!idempotent && !integer_sum) return false;
  const IntList& d = BroadcastDims(bcast);
  const IntList& reduced = *i->attrs().dimensions;
  if (!std::is_sorted(d.begin(), d.end())) return false;
  uint64_t count = 1;
  for (int64_t r : reduced) {
    if (std::find(d.begin(), d.end(), r) != d.end()) return false;
    count *= static_cast<uint64_t>(bcast->shape().dim(static_cast<int>(r)));
  }
  if (count <= 1) return false;  // empty: reduce-empty; one element: reduce-unit-dims
  Instruction* y = x;
  if (integer_sum) y = ctx.b().Binary(Opcode::kMultiply, x, SplatBits(ctx.b(), x->shape(), count));
  if (!IsReducerIdentity(*op, init)) {
    y = ctx.b().Binary(*op, y, ctx.b().Broadcast(init, x->shape().dims(), {}));
  }
  // Where x's dimensions land among the kept ones.
  IntList kept_positions;
  int64_t position = 0;
  for (int k = 0; k < bcast->shape().rank(); ++k) {
    if (std::find(reduced.begin(), reduced.end(), k) != reduced.end()) continue;
    if (std::find(d.begin(), d.end(), k) != d.end()) kept_positions.push_back(position);
    ++position;
  }
  if (y->shape().dims() != i->shape().dims()) {
    y = ctx.b().Broadcast(y, i->shape().dims(), std::move(kept_positions));
  }
  return ctx.Replace(i, y);
}

// ---- dot ----

IntList FreeDims(int rank, const IntList& batch, const IntList& contracting) {
  IntList free;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
        std::find(contracting.begin(), contracting.end(), d) == contracting.end()) {
      free.push_back(d);
    }
  }
  return free;
}

// A dot whose contracting dimensions all have size 1 (or that has none)
// multiplies single pairs: broadcast both operands to the output and
// multiply. Operands are first converted to the result type, exactly.
bool DotToMultiply(Instruction* i, RewriteContext& ctx) {
  Instruction* l = i->operand(0);
  Instruction* r = i->operand(1);
  DType t = TypeOf(i);
  if (!i->shape().IsArray() || !IsNumber(t) || !IsNumber(TypeOf(l)) || !IsNumber(TypeOf(r)) ||
      !ConvertsExactly(TypeOf(l), t) || !ConvertsExactly(TypeOf(r), t)) {
    return false;
  }
  const Attributes& a = i->attrs();
  IntList lb = a.lhs_batch_dims.value_or(IntList{}), lc = a.lhs_contracting_dims.value_or(IntList{});
  IntList rb = a.rhs_batch_dims.value_or(IntList{}), rc = a.rhs_contracting_dims.value_or(IntList{});
  for (int64_t d : lc) {
    if (l->shape().dim(static_cast<int>(d)) != 1) return false;
  }
  for (int64_t d : rc) {
    if (r->shape().dim(static_cast<int>(d)) != 1) return false;
  }
  IntList lf = FreeDims(l->shape().rank(), lb, lc);
  IntList rf = FreeDims(r->shape().rank(), rb, rc);
  std::vector<int64_t> lkeep = lb, rkeep = rb;
  lkeep.insert(lkeep.end(), lf.begin(), lf.end());
  rkeep.insert(rkeep.end(), rf.begin(), rf.end());
  HloBuilder& b = ctx.b();
  Instruction* lk = KeepDims(b, l, lkeep);
  Instruction* rk = KeepDims(b, r, rkeep);
  if (TypeOf(lk) != t) lk = b.Convert(lk, t);
  if (TypeOf(rk) != t) rk = b.Convert(rk, t);
  // Output: batch dims, then lhs free, then rhs free.
  int64_t nb = static_cast<int64_t>(lb.size()), nl = static_cast<int64_t>(lf.size());
  IntList ldims, rdims;
  for (int64_t k = 0; k < nb + nl; ++k) ldims.push_back(k);
  for (int64_t k = 0; k < nb; ++k) rdims.push_back(k);
  for (size_t k = 0; k < rf.size(); ++k) rdims.push_back(nb + nl + static_cast<int64_t>(k));
  const std::vector<int64_t>& out = i->shape().dims();
  if (lk->shape().dims() != out) lk = b.Broadcast(lk, out, std::move(ldims));
  if (rk->shape().dims() != out) rk = b.Broadcast(rk, out, std::move(rdims));
  Instruction* product = b.Binary(Opcode::kMultiply, lk, rk);
  if (IsFloat(t)) product = b.Binary(Opcode::kAdd, product, SplatZero(b, i->shape()));
  return ctx.Replace(i, product);
}

bool DotScalars(Instruction* i, RewriteContext& ctx) {
  return i->operand(0)->shape().rank() == 0 && i->operand(1)->shape().rank() == 0 &&
         DotToMultiply(i, ctx);
}

bool DotUnitContracting(Instruction* i, RewriteContext& ctx) {
  return (i->operand(0)->shape().rank() > 0 || i->operand(1)->shape().rank() > 0) &&
         DotToMultiply(i, ctx);
}

bool DotEmptyContracting(Instruction* i, RewriteContext& ctx) {
  if (!IsStaticArray(i->shape()) || !IsNumber(TypeOf(i))) return false;
  const Instruction* l = i->operand(0);
  bool empty = false;
  for (int64_t d : i->attrs().lhs_contracting_dims.value_or(IntList{})) {
    empty |= l->shape().dim(static_cast<int>(d)) == 0;
  }
  return empty && ctx.Replace(i, SplatZero(ctx.b(), i->shape()));
}

}  // namespace

void AppendReductionRules(std::vector<RewriteRule>& rules) {
  using O = Opcode;
  std::vector<RewriteRule> mine = {
      {"fold-constant-compare",
       {std::begin(kCompareOps), std::end(kCompareOps)},
       "compare of small known constants -> constant",
       &FoldSmallConstant},
      {"fold-constant-convert",
       {std::begin(kConversionOps), std::end(kConversionOps)},
       "conversion of a small known constant -> constant",
       &FoldSmallConstant},
      {"fold-constant-elementwise", ElementwiseToFold(),
       "elementwise op on small known constants -> constant", &FoldSmallConstant},
      {"fold-splat-elementwise", SplatFoldable(),
       "elementwise op on broadcasts of scalar constants -> broadcast of the folded scalar",
       &FoldSplatElementwise},
      {"fold-constant-data-movement",
       {O::kReshape, O::kTranspose, O::kSlice, O::kConcatenate, O::kPad, O::kReverse},
       "reshape/transpose/slice/concat/pad/reverse of small known constants -> constant",
       &FoldSmallConstant},
      {"compare-self",
       {O::kCompare},
       "x == x -> true, x < x -> false (integers, total order)",
       &CompareSelf},
      {"compare-constant-lhs",
       {O::kCompare},
       "compare(constant, x) -> mirrored compare(x, constant)",
       &CompareConstantLhs},
      {"select-constant-pred",
       {O::kSelect},
       "select(true, a, b) -> a, select(false, a, b) -> b",
       &SelectConstantPred},
      {"select-same-branches", {O::kSelect}, "select(p, a, a) -> a", &SelectSameBranches},
      {"select-not-pred", {O::kSelect}, "select(not(p), a, b) -> select(p, b, a)", &SelectNotPred},
      {"select-of-bools",
       {O::kSelect},
       "select(p, true, false) -> p; (p, false, true) -> not(p)",
       &SelectOfBools},
      {"convert-same-type",
       {O::kConvert},
       "convert to the operand's own type -> x",
       &ConvertSameType},
      {"convert-convert",
       {O::kConvert},
       "convert(convert(x)) -> convert(x) when the middle type holds every value of x",
       &ConvertConvert},
      {"reduce-unit-dims",
       {O::kReduce},
       "reduce keeping the element count -> reshape (op with init unless it is the identity)",
       &ReduceUnitDims},
      {"reduce-empty", {O::kReduce}, "reduce of an empty array -> broadcast(init)", &ReduceEmpty},
      {"reduce-of-reshape",
       {O::kReduce},
       "reduce(reshape(x)) -> reduce(x) when the reshape only regroups reduced or kept dims",
       &ReduceOfReshape},
      {"reduce-of-transpose",
       {O::kReduce},
       "reduce(transpose(x)) -> reduce(x) when the transpose keeps reduced and kept dims in order",
       &ReduceOfTranspose},
      {"reduce-of-broadcast",
       {O::kReduce},
       "reduce over broadcast dims -> x (max/min/and/or) or x * count (integer add)",
       &ReduceOfBroadcast},
      {"dot-scalars", {O::kDot}, "dot of scalars -> multiply", &DotScalars},
      {"dot-unit-contracting",
       {O::kDot},
       "dot with size-1 (or no) contracting dims -> multiply of broadcasts",
       &DotUnitContracting},
      {"dot-empty-contracting",
       {O::kDot},
       "dot with a size-0 contracting dim -> zeros",
       &DotEmptyContracting},
  };
  rules.insert(rules.end(), mine.begin(), mine.end());
}

}  // namespace seam::algsimp
