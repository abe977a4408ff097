// algsimp rules on elementwise arithmetic and bitwise ops. Exactness notes:
// float identities hold bit for bit except for NaN payloads (NaN stays NaN);
// x + 0 is only x when the zero is -0.0 (+0.0 + -0.0 is +0.0), x - 0 only
// when it is +0.0; x * 0, x - x and x % 1 fold only for integers (NaN, inf).
// Integer identities hold under wrap-around. pred arithmetic is or/and/xor.
#include <cmath>

#include "seam/passes/algsimp_rules.h"

namespace seam::algsimp {
namespace {

DType TypeOf(const Instruction* i) { return i->shape().dtype(); }

// Integers and floats, not pred: ops like negate have no pred semantics.
bool IsNumber(DType t) { return IsInteger(t) || IsFloat(t); }

bool Arithmetic(const Instruction* i) {
  return i->shape().IsArray() && IsIntegralOrFloat(TypeOf(i));
}

bool ToOperand(Instruction* i, int k, RewriteContext& ctx) { return ctx.Replace(i, i->operand(k)); }

bool CanonicalizeConstantRhs(Instruction* i, RewriteContext& ctx) {
  if (!IsConstantLike(i->operand(0)) || IsConstantLike(i->operand(1))) return false;
  return ctx.ReplaceWithClone(i, {i->operand(1), i->operand(0)});
}

bool AddZero(Instruction* i, RewriteContext& ctx) {
  if (!Arithmetic(i)) return false;
  // x + (+0.0) would turn x = -0.0 into +0.0.
  return IsSplatNegativeZero(i->operand(1)) && ToOperand(i, 0, ctx);
}

bool AddNegate(Instruction* i, RewriteContext& ctx) {
  if (!Arithmetic(i) || !IsNumber(TypeOf(i))) return false;
  // IEEE defines a - b as a + (-b); integers wrap the same either way.
  for (int k : {1, 0}) {
    Instruction* n = i->operand(k);
    if (n->opcode() != Opcode::kNegate) continue;
    Instruction* sub = ctx.b().Binary(Opcode::kSubtract, i->operand(1 - k), n->operand(0));
    return ctx.Replace(i, sub);
  }
  return false;
}

bool SubtractZero(Instruction* i, RewriteContext& ctx) {
  if (!Arithmetic(i)) return false;
  // x - (-0.0) = x + 0.0 would turn x = -0.0 into +0.0.
  return IsSplatPositiveZero(i->operand(1)) && ToOperand(i, 0, ctx);
}

bool SubtractSelf(Instruction* i, RewriteContext& ctx) {
  // Floats: inf - inf and NaN - NaN are NaN.
  if (!Arithmetic(i) || !IsIntegral(TypeOf(i)) || i->operand(0) != i->operand(1)) return false;
  return ctx.Replace(i, SplatZero(ctx.b(), i->shape()));
}

bool SubtractFromZero(Instruction* i, RewriteContext& ctx) {
  // -0.0 - x == -x for every x (-0 - -0 = +0 = -(-0)); +0.0 - +0.0 is +0.0.
  if (!Arithmetic(i) || !IsNumber(TypeOf(i)) || !IsSplatNegativeZero(i->operand(0))) return false;
  return ctx.Replace(i, ctx.b().Unary(Opcode::kNegate, i->operand(1)));
}

bool SubtractNegate(Instruction* i, RewriteContext& ctx) {
  if (!Arithmetic(i) || !IsNumber(TypeOf(i)) || i->operand(1)->opcode() != Opcode::kNegate) {
    return false;
  }
  Instruction* add = ctx.b().Binary(Opcode::kAdd, i->operand(0), i->operand(1)->operand(0));
  return ctx.Replace(i, add);
}

bool MultiplyOne(Instruction* i, RewriteContext& ctx) {
  return Arithmetic(i) && IsSplatOne(i->operand(1)) && ToOperand(i, 0, ctx);
}

bool MultiplyZero(Instruction* i, RewriteContext& ctx) {
  // Floats: NaN * 0 and inf * 0 are NaN, -x * 0 is -0.
  if (!Arithmetic(i) || !IsIntegral(TypeOf(i)) || !IsSplatZero(i->operand(1))) return false;
  return ctx.Replace(i, SplatZero(ctx.b(), i->shape()));
}

bool MultiplyMinusOne(Instruction* i, RewriteContext& ctx) {
  if (!Arithmetic(i) || !IsSplatMinusOne(i->operand(1))) return false;
  return ctx.Replace(i, ctx.b().Unary(Opcode::kNegate, i->operand(0)));
}

bool MultiplyNegateNegate(Instruction* i, RewriteContext& ctx) {
  // Rounding is sign-symmetric, so (-a)*(-b) == a*b; integers wrap alike.
  Instruction* a = i->operand(0);
  Instruction* b = i->operand(1);
  if (!Arithmetic(i) || !IsNumber(TypeOf(i)) || a->opcode() != Opcode::kNegate ||
      b->opcode() != Opcode::kNegate) {
    return false;
  }
  return ctx.ReplaceWithClone(i, {a->operand(0), b->operand(0)});
}

bool DivideOne(Instruction* i, RewriteContext& ctx) {
  return Arithmetic(i) && IsNumber(TypeOf(i)) && IsSplatOne(i->operand(1)) &&
         ToOperand(i, 0, ctx);
}

// x / 2^k == x * 2^-k exactly (both round the same real number) when 2^-k
// is a normal number of the type.
bool DivideByPowerOfTwo(Instruction* i, RewriteContext& ctx) {
  if (!Arithmetic(i) || !IsFloat(TypeOf(i))) return false;
  std::optional<Splat> c = GetSplat(i->operand(1));
  if (!c || !std::isfinite(c->value) || c->value == 0) return false;
  int exponent;
  if (std::abs(std::frexp(c->value, &exponent)) != 0.5) return false;  // not +-2^k
  double reciprocal = 1 / c->value;
  if (reciprocal == 1 || reciprocal == -1) return false;  // divide-one, divide-minus-one
  Literal r(Shape::Scalar(TypeOf(i)));
  r.SetDouble(0, reciprocal);
  if (r.GetDouble(0) != reciprocal || std::fpclassify(reciprocal) != FP_NORMAL) return false;
  // Normal in double is not enough: the type's own range decides.
  int min_exponent = TypeOf(i) == DType::kF16 ? -14 : TypeOf(i) == DType::kF64 ? -1022 : -126;
  if (std::ilogb(reciprocal) < min_exponent) return false;
  Instruction* scale = SplatDouble(ctx.b(), i->shape(), reciprocal);
  return ctx.Replace(i, ctx.b().Binary(Opcode::kMultiply, i->operand(0), scale));
}

bool DivideMinusOne(Instruction* i, RewriteContext& ctx) {
  // Integers: INT_MIN / -1 is INT_MIN, as is -INT_MIN under wrap-around.
  if (!Arithmetic(i) || !IsNumber(TypeOf(i)) || !IsSplatMinusOne(i->operand(1))) return false;
  return ctx.Replace(i, ctx.b().Unary(Opcode::kNegate, i->operand(0)));
}

bool DivideNegateNegate(Instruction* i, RewriteContext& ctx) {
  // Floats only: integer division of a wrapped -INT_MIN is not symmetric.
  Instruction* a = i->operand(0);
  Instruction* b = i->operand(1);
  if (!Arithmetic(i) || !IsFloat(TypeOf(i)) || a->opcode() != Opcode::kNegate ||
      b->opcode() != Opcode::kNegate) {
    return false;
  }
  return ctx.ReplaceWithClone(i, {a->operand(0), b->operand(0)});
}

bool RemainderOne(Instruction* i, RewriteContext& ctx) {
  // Floats: fmod(x, 1) keeps the fraction.
  if (!Arithmetic(i) || !IsInteger(TypeOf(i)) || !IsSplatOne(i->operand(1))) return false;
  return ctx.Replace(i, SplatZero(ctx.b(), i->shape()));
}

// op(op(x)) -> x for involutions.
bool Involution(Instruction* i, RewriteContext& ctx) {
  Instruction* inner = i->operand(0);
  if (!Arithmetic(i) || inner->opcode() != i->opcode()) return false;
  if (i->opcode() == Opcode::kNegate && !IsNumber(TypeOf(i))) return false;
  return ctx.Replace(i, inner->operand(0));
}

// op(op(x)) -> op(x) for idempotent unary ops.
bool Idempotent(Instruction* i, RewriteContext& ctx) {
  Instruction* inner = i->operand(0);
  if (!Arithmetic(i) || !IsNumber(TypeOf(i)) || inner->opcode() != i->opcode()) return false;
  return ctx.Replace(i, inner);
}

bool AbsNegate(Instruction* i, RewriteContext& ctx) {
  // Not unsigned: there abs is the identity and -x is not x.
  Instruction* n = i->operand(0);
  DType t = TypeOf(i);
  if (!Arithmetic(i) || !(IsFloat(t) || IsSigned(t)) || n->opcode() != Opcode::kNegate) {
    return false;
  }
  return ctx.ReplaceWithClone(i, {n->operand(0)});
}

bool AbsUnsigned(Instruction* i, RewriteContext& ctx) {
  return Arithmetic(i) && IsUnsigned(TypeOf(i)) && ToOperand(i, 0, ctx);
}

std::optional<ComparisonDirection> Inverse(ComparisonDirection d) {
  switch (d) {
    case ComparisonDirection::kEq: return ComparisonDirection::kNe;
    case ComparisonDirection::kNe: return ComparisonDirection::kEq;
    case ComparisonDirection::kLt: return ComparisonDirection::kGe;
    case ComparisonDirection::kGe: return ComparisonDirection::kLt;
    case ComparisonDirection::kGt: return ComparisonDirection::kLe;
    case ComparisonDirection::kLe: return ComparisonDirection::kGt;
  }
  return std::nullopt;
}

bool NotCompare(Instruction* i, RewriteContext& ctx) {
  // Floats: NaN makes both a < b and a >= b false, unless the comparison is
  // a total order.
  Instruction* c = i->operand(0);
  if (!Arithmetic(i) || !IsPred(TypeOf(i)) || c->opcode() != Opcode::kCompare ||
      !c->attrs().direction.has_value()) {
    return false;
  }
  DType t = TypeOf(c->operand(0));
  bool total = c->attrs().type.has_value() && c->attrs().type->text == "TOTALORDER";
  if (!IsIntegral(t) && !(IsFloat(t) && total)) return false;
  Attributes attrs = c->attrs();
  attrs.direction = Inverse(*attrs.direction);
  Instruction* inverse =
      ctx.b().Add(Opcode::kCompare, c->shape(), {c->operand(0), c->operand(1)}, std::move(attrs));
  return ctx.Replace(i, inverse);
}

// and/or/xor with an all-zeros or all-ones constant, or with itself.
bool AndAllOnes(Instruction* i, RewriteContext& ctx) {
  return Arithmetic(i) && IsSplatAllOnes(i->operand(1)) && ToOperand(i, 0, ctx);
}
bool AndZero(Instruction* i, RewriteContext& ctx) {
  if (!Arithmetic(i) || !IsIntegral(TypeOf(i)) || !IsSplatZero(i->operand(1))) return false;
  return ctx.Replace(i, SplatZero(ctx.b(), i->shape()));
}
bool OrZero(Instruction* i, RewriteContext& ctx) {
  return Arithmetic(i) && IsIntegral(TypeOf(i)) && IsSplatZero(i->operand(1)) &&
         ToOperand(i, 0, ctx);
}
bool OrAllOnes(Instruction* i, RewriteContext& ctx) {
  return Arithmetic(i) && IsSplatAllOnes(i->operand(1)) && ToOperand(i, 1, ctx);
}
bool XorZero(Instruction* i, RewriteContext& ctx) {
  return Arithmetic(i) && IsIntegral(TypeOf(i)) && IsSplatZero(i->operand(1)) &&
         ToOperand(i, 0, ctx);
}
// x & x, x | x, max(x, x), min(x, x): max/min keep NaN and -0 as they are.
bool SelfIdempotent(Instruction* i, RewriteContext& ctx) {
  return Arithmetic(i) && i->operand(0) == i->operand(1) && ToOperand(i, 0, ctx);
}
bool XorSelf(Instruction* i, RewriteContext& ctx) {
  if (!Arithmetic(i) || !IsIntegral(TypeOf(i)) || i->operand(0) != i->operand(1)) return false;
  return ctx.Replace(i, SplatZero(ctx.b(), i->shape()));
}

// max(x, -inf) = x also for NaN (max propagates it) and -inf itself.
bool MaxLowest(Instruction* i, RewriteContext& ctx) {
  return Arithmetic(i) && IsSplatLowest(i->operand(1)) && ToOperand(i, 0, ctx);
}
bool MinHighest(Instruction* i, RewriteContext& ctx) {
  return Arithmetic(i) && IsSplatHighest(i->operand(1)) && ToOperand(i, 0, ctx);
}

// pow(x, +-0) is 1 for every x, NaN included (IEEE 754 pown/pow); integers
// too.
bool PowerZero(Instruction* i, RewriteContext& ctx) {
  if (!Arithmetic(i) || !IsNumber(TypeOf(i)) || !IsSplatZero(i->operand(1))) return false;
  return ctx.Replace(i, SplatOne(ctx.b(), i->shape()));
}
bool PowerOne(Instruction* i, RewriteContext& ctx) {
  return Arithmetic(i) && IsNumber(TypeOf(i)) && IsSplatOne(i->operand(1)) &&
         ToOperand(i, 0, ctx);
}
bool PowerTwo(Instruction* i, RewriteContext& ctx) {
  if (!Arithmetic(i) || !IsNumber(TypeOf(i)) || !IsSplatValue(i->operand(1), 2)) return false;
  Instruction* x = i->operand(0);
  return ctx.Replace(i, ctx.b().Binary(Opcode::kMultiply, x, x));
}
bool PowerMinusOne(Instruction* i, RewriteContext& ctx) {
  // Integers: pow(0, -1) is 0 but 1 / 0 is -1.
  if (!Arithmetic(i) || !IsFloat(TypeOf(i)) || !IsSplatMinusOne(i->operand(1))) return false;
  Instruction* one = SplatOne(ctx.b(), i->shape());
  return ctx.Replace(i, ctx.b().Binary(Opcode::kDivide, one, i->operand(0)));
}

bool ShiftByZero(Instruction* i, RewriteContext& ctx) {
  return Arithmetic(i) && IsInteger(TypeOf(i)) && IsSplatZero(i->operand(1)) &&
         ToOperand(i, 0, ctx);
}

// floor/ceil/round of a value that is already integral (rounded, or
// converted from an integer) is that value; -0, inf and NaN stay.
bool RoundOfIntegral(Instruction* i, RewriteContext& ctx) {
  Instruction* x = i->operand(0);
  if (!Arithmetic(i) || !IsFloat(TypeOf(i))) return false;
  switch (x->opcode()) {
    case Opcode::kFloor:
    case Opcode::kCeil:
    case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven:
      break;
    case Opcode::kConvert:
      if (!IsIntegral(TypeOf(x->operand(0)))) return false;
      break;
    default:
      return false;
  }
  return ctx.Replace(i, x);
}

bool ClampUnbounded(Instruction* i, RewriteContext& ctx) {
  return Arithmetic(i) && IsNumber(TypeOf(i)) && IsSplatLowest(i->operand(0)) &&
         IsSplatHighest(i->operand(2)) && ToOperand(i, 1, ctx);
}

bool ReducePrecisionNoop(Instruction* i, RewriteContext& ctx) {
  if (!Arithmetic(i)) return false;
  int exponent = 0, mantissa = 0;
  switch (TypeOf(i)) {
    case DType::kF16: exponent = 5, mantissa = 10; break;
    case DType::kBF16: exponent = 8, mantissa = 7; break;
    case DType::kF32: exponent = 8, mantissa = 23; break;
    case DType::kF64: exponent = 11, mantissa = 52; break;
    default: return false;
  }
  const Attributes& a = i->attrs();
  if (a.exponent_bits.value_or(8) < exponent || a.mantissa_bits.value_or(23) < mantissa) {
    return false;
  }
  return ToOperand(i, 0, ctx);
}

// copy and bitcast to the same shape and layout (Replace refuses a layout
// change) are no-ops.
bool CopySameLayout(Instruction* i, RewriteContext& ctx) { return ToOperand(i, 0, ctx); }
bool BitcastIdentity(Instruction* i, RewriteContext& ctx) {
  return i->shape().IsArray() && ToOperand(i, 0, ctx);
}

}  // namespace

void AppendArithmeticRules(std::vector<RewriteRule>& rules) {
  using O = Opcode;
  std::vector<RewriteRule> mine = {
      {"canonicalize-constant-rhs",
       {O::kAdd, O::kMultiply, O::kAnd, O::kOr, O::kXor, O::kMaximum, O::kMinimum},
       "commutative op(constant, x) -> op(x, constant)", &CanonicalizeConstantRhs},
      {"add-zero", {O::kAdd}, "x + 0 -> x (integers; floats only for -0.0)", &AddZero},
      {"add-negate", {O::kAdd}, "a + (-b) -> a - b", &AddNegate},
      {"subtract-zero", {O::kSubtract}, "x - 0 -> x (floats only for +0.0)", &SubtractZero},
      {"subtract-self", {O::kSubtract}, "x - x -> 0 (integers)", &SubtractSelf},
      {"subtract-from-zero", {O::kSubtract}, "0 - x -> -x (floats only for -0.0)",
       &SubtractFromZero},
      {"subtract-negate", {O::kSubtract}, "a - (-b) -> a + b", &SubtractNegate},
      {"multiply-one", {O::kMultiply}, "x * 1 -> x", &MultiplyOne},
      {"multiply-zero", {O::kMultiply}, "x * 0 -> 0 (integers)", &MultiplyZero},
      {"multiply-minus-one", {O::kMultiply}, "x * -1 -> -x", &MultiplyMinusOne},
      {"multiply-negate-negate", {O::kMultiply}, "(-a) * (-b) -> a * b", &MultiplyNegateNegate},
      {"divide-one", {O::kDivide}, "x / 1 -> x", &DivideOne},
      {"divide-minus-one", {O::kDivide}, "x / -1 -> -x", &DivideMinusOne},
      {"divide-by-power-of-two", {O::kDivide}, "x / 2^k -> x * 2^-k (floats, exact)",
       &DivideByPowerOfTwo},
      {"divide-negate-negate", {O::kDivide}, "(-a) / (-b) -> a / b (floats)",
       &DivideNegateNegate},
      {"remainder-one", {O::kRemainder}, "x % 1 -> 0 (integers)", &RemainderOne},
      {"negate-negate", {O::kNegate}, "-(-x) -> x", &Involution},
      {"not-not", {O::kNot}, "not(not(x)) -> x", &Involution},
      {"not-compare", {O::kNot}, "not(a < b) -> a >= b (integers, total-order floats)",
       &NotCompare},
      {"abs-abs", {O::kAbs}, "abs(abs(x)) -> abs(x)", &Idempotent},
      {"abs-negate", {O::kAbs}, "abs(-x) -> abs(x)", &AbsNegate},
      {"abs-unsigned", {O::kAbs}, "abs(x) -> x for unsigned x", &AbsUnsigned},
      {"sign-sign", {O::kSign}, "sign(sign(x)) -> sign(x)", &Idempotent},
      {"and-all-ones", {O::kAnd}, "x & ~0 -> x", &AndAllOnes},
      {"and-zero", {O::kAnd}, "x & 0 -> 0", &AndZero},
      {"or-zero", {O::kOr}, "x | 0 -> x", &OrZero},
      {"or-all-ones", {O::kOr}, "x | ~0 -> ~0", &OrAllOnes},
      {"xor-zero", {O::kXor}, "x ^ 0 -> x", &XorZero},
      {"and-self", {O::kAnd}, "x & x -> x", &SelfIdempotent},
      {"or-self", {O::kOr}, "x | x -> x", &SelfIdempotent},
      {"xor-self", {O::kXor}, "x ^ x -> 0", &XorSelf},
      {"max-self", {O::kMaximum}, "max(x, x) -> x", &SelfIdempotent},
      {"min-self", {O::kMinimum}, "min(x, x) -> x", &SelfIdempotent},
      {"max-lowest", {O::kMaximum}, "max(x, -inf or INT_MIN) -> x", &MaxLowest},
      {"min-highest", {O::kMinimum}, "min(x, +inf or INT_MAX) -> x", &MinHighest},
      {"power-zero", {O::kPower}, "pow(x, 0) -> 1 (NaN too)", &PowerZero},
      {"power-one", {O::kPower}, "pow(x, 1) -> x", &PowerOne},
      {"power-two", {O::kPower}, "pow(x, 2) -> x * x", &PowerTwo},
      {"power-minus-one", {O::kPower}, "pow(x, -1) -> 1 / x (floats)", &PowerMinusOne},
      {"shift-by-zero",
       {O::kShiftLeft, O::kShiftRightArithmetic, O::kShiftRightLogical},
       "x << 0, x >> 0 -> x", &ShiftByZero},
      {"round-of-integral",
       {O::kFloor, O::kCeil, O::kRoundNearestAfz, O::kRoundNearestEven},
       "floor/ceil/round of a rounded or integer-converted value -> that value",
       &RoundOfIntegral},
      {"clamp-unbounded", {O::kClamp}, "clamp(-inf, x, +inf) -> x", &ClampUnbounded},
      {"reduce-precision-noop", {O::kReducePrecision},
       "reduce-precision to at least the type's own bits -> x", &ReducePrecisionNoop},
      {"copy-same-layout", {O::kCopy}, "copy keeping the layout -> x", &CopySameLayout},
      {"bitcast-identity", {O::kBitcast}, "bitcast to the same shape and layout -> x",
       &BitcastIdentity},
  };
  rules.insert(rules.end(), mine.begin(), mine.end());
}

}  // namespace seam::algsimp
