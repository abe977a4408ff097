// Matchers and small builders shared by algsimp's rule families: splat
// constants and the identities they stand for, exact conversions, reducers.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "seam/passes/algsimp_rules.h"

namespace seam::algsimp {
namespace {

// Constants larger than this are not scanned for a repeated value: a rule
// would pay for it on every sweep and such constants are rarely splats.
constexpr int64_t kMaxSplatScan = 1 << 16;

std::optional<Splat> SplatOfLiteral(const Literal& literal) {
  DType t = literal.shape().dtype();
  if (!literal.shape().IsArray() || !IsIntegralOrFloat(t)) return std::nullopt;
  int64_t n = literal.element_count();
  if (n == 0 || n > kMaxSplatScan) return std::nullopt;
  int size = DTypeByteSize(t);
  const uint8_t* data = literal.bytes().data();
  // Compared as bytes: -0.0 and +0.0, or NaNs with different payloads, are
  // different values here.
  for (int64_t i = 1; i < n; ++i) {
    if (std::memcmp(data, data + i * size, size) != 0) return std::nullopt;
  }
  Splat splat{t};
  if (IsFloat(t)) {
    splat.value = literal.GetDouble(0);
  } else {
    splat.bits = literal.GetInt(0);
    splat.value = static_cast<double>(splat.bits);
  }
  return splat;
}

uint64_t Mask(DType t) {
  int bits = DTypeBits(t);
  return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
}

int64_t SignedMin(DType t) { return -(int64_t{1} << (DTypeBits(t) - 1)); }
int64_t SignedMax(DType t) {
  return static_cast<int64_t>((uint64_t{1} << (DTypeBits(t) - 1)) - 1);
}

// Bits of precision (significand with the implicit bit) of a float type.
int Significand(DType t) {
  switch (t) {
    case DType::kF16: return 11;
    case DType::kBF16: return 8;
    case DType::kF32: return 24;
    case DType::kF64: return 53;
    default: return 0;
  }
}

// Largest finite exponent, to compare float ranges.
int MaxExponent(DType t) {
  switch (t) {
    case DType::kF16: return 15;
    case DType::kBF16: return 127;
    case DType::kF32: return 127;
    case DType::kF64: return 1023;
    default: return 0;
  }
}

}  // namespace

const Literal* KnownLiteral(const Instruction* i) {
  if (i->opcode() != Opcode::kConstant || i->literal() == nullptr) return nullptr;
  const Literal* literal = i->literal();
  if (literal->is_elided() || literal->is_opaque()) return nullptr;
  return literal;
}

std::optional<Splat> GetSplat(const Instruction* i) {
  if (i->opcode() == Opcode::kBroadcast) i = i->operand(0);
  const Literal* literal = KnownLiteral(i);
  if (literal == nullptr) return std::nullopt;
  return SplatOfLiteral(*literal);
}

bool IsIntegral(DType t) { return IsInteger(t) || IsPred(t); }
bool IsIntegralOrFloat(DType t) { return IsIntegral(t) || IsFloat(t); }

bool IsSplatZero(const Instruction* i) {
  std::optional<Splat> s = GetSplat(i);
  return s && (IsFloat(s->dtype) ? s->value == 0 : s->bits == 0);
}

bool IsSplatNegativeZero(const Instruction* i) {
  std::optional<Splat> s = GetSplat(i);
  return s && (IsFloat(s->dtype) ? s->value == 0 && std::signbit(s->value) : s->bits == 0);
}

bool IsSplatPositiveZero(const Instruction* i) {
  std::optional<Splat> s = GetSplat(i);
  return s && (IsFloat(s->dtype) ? s->value == 0 && !std::signbit(s->value) : s->bits == 0);
}

bool IsSplatOne(const Instruction* i) {
  std::optional<Splat> s = GetSplat(i);
  return s && (IsFloat(s->dtype) ? s->value == 1 : s->bits == 1);
}

bool IsSplatMinusOne(const Instruction* i) {
  std::optional<Splat> s = GetSplat(i);
  if (!s) return false;
  if (IsFloat(s->dtype)) return s->value == -1;
  return IsSigned(s->dtype) && s->bits == -1;
}

bool IsSplatAllOnes(const Instruction* i) {
  std::optional<Splat> s = GetSplat(i);
  if (!s || IsFloat(s->dtype)) return false;
  if (IsPred(s->dtype)) return s->bits == 1;
  if (IsSigned(s->dtype)) return s->bits == -1;
  return static_cast<uint64_t>(s->bits) == Mask(s->dtype);
}

bool IsSplatValue(const Instruction* i, double v) {
  std::optional<Splat> s = GetSplat(i);
  return s && (IsFloat(s->dtype) ? s->value == v : s->bits == static_cast<int64_t>(v));
}

bool IsSplatLowest(const Instruction* i) {
  std::optional<Splat> s = GetSplat(i);
  if (!s) return false;
  if (IsFloat(s->dtype)) return s->value == -std::numeric_limits<double>::infinity();
  if (IsSigned(s->dtype)) return s->bits == SignedMin(s->dtype);
  return s->bits == 0;  // unsigned and pred
}

bool IsSplatHighest(const Instruction* i) {
  std::optional<Splat> s = GetSplat(i);
  if (!s) return false;
  if (IsFloat(s->dtype)) return s->value == std::numeric_limits<double>::infinity();
  if (IsSigned(s->dtype)) return s->bits == SignedMax(s->dtype);
  if (IsPred(s->dtype)) return s->bits == 1;
  return static_cast<uint64_t>(s->bits) == Mask(s->dtype);
}

bool IsConstantLike(const Instruction* i) {
  if (i->opcode() == Opcode::kBroadcast) i = i->operand(0);
  return i->opcode() == Opcode::kConstant;
}

bool IsStaticArray(const Shape& shape) {
  return shape.IsArray() && !shape.HasDynamicDims() && shape.ElementCount().has_value();
}

int64_t ElementCount(const Shape& shape) { return shape.ElementCount().value_or(-1); }

bool ConvertsExactly(DType from, DType to) {
  if (from == to) return true;
  if (!IsIntegralOrFloat(from) || !IsIntegralOrFloat(to)) return false;
  if (IsPred(from)) return !IsPred(to);  // 0 and 1
  if (IsPred(to)) return false;
  int from_bits = DTypeBits(from), to_bits = DTypeBits(to);
  if (IsSigned(from)) {
    if (IsSigned(to)) return to_bits >= from_bits;
    if (IsFloat(to)) return Significand(to) >= from_bits - 1;
    return false;  // negative values
  }
  if (IsUnsigned(from)) {
    if (IsUnsigned(to)) return to_bits >= from_bits;
    if (IsSigned(to)) return to_bits > from_bits;
    return Significand(to) >= from_bits;
  }
  // Floats: only into a float with at least the precision and the range.
  return IsFloat(to) && Significand(to) >= Significand(from) &&
         MaxExponent(to) >= MaxExponent(from);
}

Instruction* SplatBits(HloBuilder& b, const Shape& shape, uint64_t bits) {
  Literal literal(Shape::Scalar(shape.dtype()));
  literal.SetBits(0, bits);
  Instruction* scalar = b.Constant(std::move(literal));
  if (shape.rank() == 0) return scalar;
  return b.Broadcast(scalar, shape.dims(), {});
}

Instruction* SplatDouble(HloBuilder& b, const Shape& shape, double value) {
  return b.Splat(shape, value);
}

Instruction* SplatZero(HloBuilder& b, const Shape& shape) { return SplatBits(b, shape, 0); }

Instruction* SplatOne(HloBuilder& b, const Shape& shape) {
  if (IsFloat(shape.dtype())) return SplatDouble(b, shape, 1.0);
  return SplatBits(b, shape, 1);
}

std::optional<Opcode> ReducerOp(const Instruction& reduce) {
  if (reduce.opcode() != Opcode::kReduce || reduce.operand_count() != 2) return std::nullopt;
  if (!reduce.attrs().to_apply.has_value() || *reduce.attrs().to_apply == nullptr) {
    return std::nullopt;
  }
  std::optional<Opcode> op = AsBinaryReducer(**reduce.attrs().to_apply);
  DType t = reduce.operand(0)->shape().dtype();
  // One type throughout: a mixed-precision reduce (init or reducer of
  // another float type) converts as it goes, which these rules do not.
  if (!op || (*reduce.attrs().to_apply)->root()->shape().dtype() != t ||
      reduce.operand(1)->shape().dtype() != t || !reduce.shape().IsArray() ||
      reduce.shape().dtype() != t || !IsIntegralOrFloat(t)) {
    return std::nullopt;
  }
  if (IsFloat(t) && (*op == Opcode::kAnd || *op == Opcode::kOr)) return std::nullopt;
  return op;
}

bool IsReducerIdentity(Opcode op, const Instruction* init) {
  std::optional<Splat> s = GetSplat(init);
  if (!s) return false;
  if (IsPred(s->dtype)) {
    bool true_identity = op == Opcode::kMultiply || op == Opcode::kAnd || op == Opcode::kMinimum;
    return s->bits == (true_identity ? 1 : 0);
  }
  switch (op) {
    case Opcode::kAdd: return IsSplatNegativeZero(init);  // x + -0 == x, also for x = -0
    case Opcode::kOr: return IsSplatZero(init);
    case Opcode::kMultiply: return IsSplatOne(init);
    case Opcode::kMaximum: return IsSplatLowest(init);
    case Opcode::kMinimum: return IsSplatHighest(init);
    case Opcode::kAnd: return IsSplatAllOnes(init);
    default: return false;
  }
}

const IntList& BroadcastDims(const Instruction* broadcast) {
  static const IntList* const kNone = new IntList();
  return broadcast->attrs().dimensions.has_value() ? *broadcast->attrs().dimensions : *kNone;
}

bool IsIdentityPermutation(const IntList& permutation) {
  for (size_t k = 0; k < permutation.size(); ++k) {
    if (permutation[k] != static_cast<int64_t>(k)) return false;
  }
  return true;
}

}  // namespace seam::algsimp
