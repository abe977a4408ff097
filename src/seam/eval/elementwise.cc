// Elementwise ops: unary and binary arithmetic, compare, select, clamp, map.
// Conversions live in convert.cc. bf16/f16 compute in f32 and round each
// result (element_traits.h); integer semantics are in scalar_ops.h.
#include <bit>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "seam/eval/element_traits.h"
#include "seam/eval/ops.h"
#include "seam/eval/scalar_ops.h"
#include "seam/util/status_macros.h"

namespace seam {

// Defined in convert.cc.
absl::StatusOr<Literal> EvalConversion(const Instruction& instruction, OperandValues operands);

namespace {

absl::Status Unsupported(Opcode op, DType dtype) {
  return absl::UnimplementedError(
      absl::StrCat("'", OpcodeName(op), "' is not defined on ", DTypeName(dtype)));
}

template <typename T, typename Fn>
Literal UnaryLoop(const Shape& shape, const Literal& x, Fn fn) {
  Literal out(shape);
  using S = typename T::Storage;
  const S* src = x.data<S>();
  S* dst = out.mutable_data<S>();
  for (int64_t i = 0; i < out.element_count(); ++i) dst[i] = T::Store(fn(T::Load(src[i])));
  return out;
}

template <typename T, typename Fn>
Literal BinaryLoop(const Shape& shape, const Literal& x, const Literal& y, Fn fn) {
  Literal out(shape);
  using S = typename T::Storage;
  const S* a = x.data<S>();
  const S* b = y.data<S>();
  S* dst = out.mutable_data<S>();
  for (int64_t i = 0; i < out.element_count(); ++i) {
    dst[i] = T::Store(fn(T::Load(a[i]), T::Load(b[i])));
  }
  return out;
}

template <typename T>
absl::StatusOr<Literal> UnaryFloat(Opcode op, const Shape& shape, const Literal& x) {
  using C = typename T::Compute;
  auto run = [&](auto fn) -> absl::StatusOr<Literal> { return UnaryLoop<T>(shape, x, fn); };
  switch (op) {
    case Opcode::kAbs: return run([](C v) { return std::abs(v); });
    case Opcode::kNegate: return run([](C v) { return -v; });
    case Opcode::kSign: return run([](C v) { return scalar::Sign(v); });
    case Opcode::kCeil: return run([](C v) { return std::ceil(v); });
    case Opcode::kFloor: return run([](C v) { return std::floor(v); });
    case Opcode::kRoundNearestAfz: return run([](C v) { return std::round(v); });
    case Opcode::kRoundNearestEven: return run([](C v) { return std::nearbyint(v); });
    case Opcode::kExp: return run([](C v) { return std::exp(v); });
    case Opcode::kExpm1: return run([](C v) { return std::expm1(v); });
    case Opcode::kLog: return run([](C v) { return std::log(v); });
    case Opcode::kLog1p: return run([](C v) { return std::log1p(v); });
    case Opcode::kLogistic: return run([](C v) { return scalar::Logistic(v); });
    case Opcode::kSqrt: return run([](C v) { return std::sqrt(v); });
    case Opcode::kRsqrt: return run([](C v) { return C{1} / std::sqrt(v); });
    case Opcode::kCbrt: return run([](C v) { return std::cbrt(v); });
    case Opcode::kTanh: return run([](C v) { return std::tanh(v); });
    case Opcode::kSin: return run([](C v) { return std::sin(v); });
    case Opcode::kCos: return run([](C v) { return std::cos(v); });
    case Opcode::kTan: return run([](C v) { return std::tan(v); });
    case Opcode::kErf: return run([](C v) { return std::erf(v); });
    case Opcode::kReal: return run([](C v) { return v; });
    case Opcode::kImag: return run([](C) { return C{0}; });
    default: return Unsupported(op, T::kDType);
  }
}

template <typename T>
absl::StatusOr<Literal> UnaryComplex(Opcode op, const Shape& shape, const Literal& x) {
  using C = typename T::Compute;
  using R = typename C::value_type;
  auto run = [&](auto fn) -> absl::StatusOr<Literal> { return UnaryLoop<T>(shape, x, fn); };
  switch (op) {
    case Opcode::kNegate: return run([](C v) { return -v; });
    case Opcode::kSign: return run([](C v) { return v == C{} ? v : v / std::abs(v); });
    case Opcode::kExp: return run([](C v) { return std::exp(v); });
    case Opcode::kExpm1: return run([](C v) { return std::exp(v) - R{1}; });
    case Opcode::kLog: return run([](C v) { return std::log(v); });
    case Opcode::kLog1p: return run([](C v) { return std::log(v + R{1}); });
    case Opcode::kLogistic: return run([](C v) { return R{1} / (R{1} + std::exp(-v)); });
    case Opcode::kSqrt: return run([](C v) { return std::sqrt(v); });
    case Opcode::kRsqrt: return run([](C v) { return R{1} / std::sqrt(v); });
    case Opcode::kTanh: return run([](C v) { return std::tanh(v); });
    case Opcode::kSin: return run([](C v) { return std::sin(v); });
    case Opcode::kCos: return run([](C v) { return std::cos(v); });
    case Opcode::kTan: return run([](C v) { return std::tan(v); });
    default: return Unsupported(op, T::kDType);
  }
}

template <typename T>
absl::StatusOr<Literal> UnaryInteger(Opcode op, const Shape& shape, const Literal& x) {
  using C = typename T::Compute;
  auto run = [&](auto fn) -> absl::StatusOr<Literal> { return UnaryLoop<T>(shape, x, fn); };
  if constexpr (T::kDType == DType::kPred) {
    if (op == Opcode::kNot) return run([](C v) { return !v; });
    return Unsupported(op, T::kDType);
  } else {
    switch (op) {
      case Opcode::kAbs: return run([](C v) { return v < 0 ? scalar::WrapNeg(v) : v; });
      case Opcode::kNegate: return run([](C v) { return scalar::WrapNeg(v); });
      case Opcode::kSign: return run([](C v) { return scalar::Sign(v); });
      case Opcode::kNot: return run([](C v) { return static_cast<C>(~v); });
      case Opcode::kPopcnt: return run([](C v) { return static_cast<C>(scalar::PopCount(v)); });
      case Opcode::kClz:
        return run([](C v) { return static_cast<C>(scalar::CountLeadingZeros(v)); });
      default: return Unsupported(op, T::kDType);
    }
  }
}

template <typename T>
absl::StatusOr<Literal> BinaryFloat(Opcode op, const Shape& shape, const Literal& x,
                                    const Literal& y) {
  using C = typename T::Compute;
  auto run = [&](auto fn) -> absl::StatusOr<Literal> { return BinaryLoop<T>(shape, x, y, fn); };
  switch (op) {
    case Opcode::kAdd: return run([](C a, C b) { return a + b; });
    case Opcode::kSubtract: return run([](C a, C b) { return a - b; });
    case Opcode::kMultiply: return run([](C a, C b) { return a * b; });
    case Opcode::kDivide: return run([](C a, C b) { return a / b; });
    case Opcode::kRemainder: return run([](C a, C b) { return std::fmod(a, b); });
    case Opcode::kMaximum: return run([](C a, C b) { return scalar::FloatMax(a, b); });
    case Opcode::kMinimum: return run([](C a, C b) { return scalar::FloatMin(a, b); });
    case Opcode::kPower: return run([](C a, C b) { return std::pow(a, b); });
    case Opcode::kAtan2: return run([](C a, C b) { return std::atan2(a, b); });
    default: return Unsupported(op, T::kDType);
  }
}

template <typename T>
absl::StatusOr<Literal> BinaryComplex(Opcode op, const Shape& shape, const Literal& x,
                                      const Literal& y) {
  using C = typename T::Compute;
  auto run = [&](auto fn) -> absl::StatusOr<Literal> { return BinaryLoop<T>(shape, x, y, fn); };
  switch (op) {
    case Opcode::kAdd: return run([](C a, C b) { return a + b; });
    case Opcode::kSubtract: return run([](C a, C b) { return a - b; });
    case Opcode::kMultiply: return run([](C a, C b) { return a * b; });
    case Opcode::kDivide: return run([](C a, C b) { return a / b; });
    case Opcode::kPower: return run([](C a, C b) { return std::pow(a, b); });
    default: return Unsupported(op, T::kDType);
  }
}

template <typename T>
absl::StatusOr<Literal> BinaryInteger(Opcode op, const Shape& shape, const Literal& x,
                                      const Literal& y) {
  using C = typename T::Compute;
  auto run = [&](auto fn) -> absl::StatusOr<Literal> { return BinaryLoop<T>(shape, x, y, fn); };
  if constexpr (T::kDType == DType::kPred) {
    switch (op) {
      case Opcode::kAnd:
      case Opcode::kMinimum:
      case Opcode::kMultiply: return run([](C a, C b) { return a && b; });
      case Opcode::kOr:
      case Opcode::kMaximum:
      case Opcode::kAdd: return run([](C a, C b) { return a || b; });
      case Opcode::kXor:
      case Opcode::kSubtract: return run([](C a, C b) { return a != b; });
      default: return Unsupported(op, T::kDType);
    }
  } else {
    switch (op) {
      case Opcode::kAdd: return run([](C a, C b) { return scalar::WrapAdd(a, b); });
      case Opcode::kSubtract: return run([](C a, C b) { return scalar::WrapSub(a, b); });
      case Opcode::kMultiply: return run([](C a, C b) { return scalar::WrapMul(a, b); });
      case Opcode::kDivide: return run([](C a, C b) { return scalar::IntDivide(a, b); });
      case Opcode::kRemainder: return run([](C a, C b) { return scalar::IntRemainder(a, b); });
      case Opcode::kMaximum: return run([](C a, C b) { return a > b ? a : b; });
      case Opcode::kMinimum: return run([](C a, C b) { return a < b ? a : b; });
      case Opcode::kPower: return run([](C a, C b) { return scalar::IntPower(a, b); });
      case Opcode::kAnd: return run([](C a, C b) { return static_cast<C>(a & b); });
      case Opcode::kOr: return run([](C a, C b) { return static_cast<C>(a | b); });
      case Opcode::kXor: return run([](C a, C b) { return static_cast<C>(a ^ b); });
      case Opcode::kShiftLeft: return run([](C a, C b) { return scalar::ShiftLeft(a, b); });
      case Opcode::kShiftRightLogical:
        return run([](C a, C b) { return scalar::ShiftRightLogical(a, b); });
      case Opcode::kShiftRightArithmetic:
        return run([](C a, C b) { return scalar::ShiftRightArithmetic(a, b); });
      default: return Unsupported(op, T::kDType);
    }
  }
}

absl::StatusOr<Literal> Unary(const Instruction& instruction, const Literal& x) {
  Opcode op = instruction.opcode();
  const Shape& shape = instruction.shape();
  if (op == Opcode::kIsFinite) {
    Literal out(shape);
    for (int64_t i = 0; i < out.element_count(); ++i) {
      out.SetBits(i, std::isfinite(x.GetDouble(i)) ? 1 : 0);
    }
    return out;
  }
  if (IsComplex(x.shape().dtype()) && !IsComplex(shape.dtype())) {
    // abs, real, imag of complex produce the real part type.
    Literal out(shape);
    for (int64_t i = 0; i < out.element_count(); ++i) {
      std::complex<double> v = x.GetComplex(i);
      out.SetDouble(i, op == Opcode::kAbs ? std::abs(v) : op == Opcode::kReal ? v.real() : v.imag());
    }
    return out;
  }
  return DispatchDType(x.shape().dtype(), [&](auto traits) -> absl::StatusOr<Literal> {
    using T = decltype(traits);
    if constexpr (kIsComplex<T>) {
      return UnaryComplex<T>(op, shape, x);
    } else if constexpr (kIsFloating<T>) {
      return UnaryFloat<T>(op, shape, x);
    } else {
      return UnaryInteger<T>(op, shape, x);
    }
  });
}

absl::StatusOr<Literal> Binary(const Instruction& instruction, const Literal& x,
                               const Literal& y) {
  Opcode op = instruction.opcode();
  const Shape& shape = instruction.shape();
  if (op == Opcode::kComplex) {
    Literal out(shape);
    for (int64_t i = 0; i < out.element_count(); ++i) {
      out.SetComplex(i, {x.GetDouble(i), y.GetDouble(i)});
    }
    return out;
  }
  return DispatchDType(x.shape().dtype(), [&](auto traits) -> absl::StatusOr<Literal> {
    using T = decltype(traits);
    if constexpr (kIsComplex<T>) {
      return BinaryComplex<T>(op, shape, x, y);
    } else if constexpr (kIsFloating<T>) {
      return BinaryFloat<T>(op, shape, x, y);
    } else {
      return BinaryInteger<T>(op, shape, x, y);
    }
  });
}

template <typename C>
bool CompareValues(ComparisonDirection d, C a, C b) {
  switch (d) {
    case ComparisonDirection::kEq: return a == b;
    case ComparisonDirection::kNe: return a != b;
    case ComparisonDirection::kGe: return a >= b;
    case ComparisonDirection::kGt: return a > b;
    case ComparisonDirection::kLe: return a <= b;
    case ComparisonDirection::kLt: return a < b;
  }
  return false;
}

absl::StatusOr<Literal> Compare(const Instruction& instruction, const Literal& x,
                                const Literal& y) {
  ComparisonDirection d = *instruction.attrs().direction;
  bool total_order = instruction.attrs().type.has_value() &&
                     instruction.attrs().type->text == "TOTALORDER";
  return DispatchDType(x.shape().dtype(), [&](auto traits) -> absl::StatusOr<Literal> {
    using T = decltype(traits);
    using S = typename T::Storage;
    Literal out(instruction.shape());
    const S* a = x.data<S>();
    const S* b = y.data<S>();
    bool* dst = out.mutable_data<bool>();
    for (int64_t i = 0; i < out.element_count(); ++i) {
      auto va = T::Load(a[i]);
      auto vb = T::Load(b[i]);
      if constexpr (kIsComplex<T>) {
        if (d != ComparisonDirection::kEq && d != ComparisonDirection::kNe) {
          return absl::InvalidArgumentError("complex values compare only with EQ or NE");
        }
        dst[i] = (va == vb) == (d == ComparisonDirection::kEq);
      } else if constexpr (kIsFloating<T>) {
        dst[i] = total_order ? CompareValues(d, scalar::TotalOrderKey(va), scalar::TotalOrderKey(vb))
                             : CompareValues(d, va, vb);
      } else {
        dst[i] = CompareValues(d, va, vb);
      }
    }
    return out;
  });
}

// select(pred, on_true, on_false); the predicate may be a scalar.
Literal Select(const Instruction& instruction, OperandValues operands) {
  const Literal& pred = *operands[0];
  Literal out(instruction.shape());
  int64_t size = DTypeByteSize(instruction.shape().dtype());
  bool scalar_pred = pred.element_count() == 1 && out.element_count() != 1;
  const bool* p = pred.data<bool>();
  for (int64_t i = 0; i < out.element_count(); ++i) {
    const Literal& chosen = p[scalar_pred ? 0 : i] ? *operands[1] : *operands[2];
    std::memcpy(out.mutable_bytes().data() + i * size, chosen.bytes().data() + i * size, size);
  }
  return out;
}

// clamp(lo, x, hi) = min(max(x, lo), hi); lo and hi may be scalars.
absl::StatusOr<Literal> Clamp(const Instruction& instruction, OperandValues operands) {
  const Literal& lo = *operands[0];
  const Literal& x = *operands[1];
  const Literal& hi = *operands[2];
  return DispatchDType(x.shape().dtype(), [&](auto traits) -> absl::StatusOr<Literal> {
    using T = decltype(traits);
    using S = typename T::Storage;
    if constexpr (kIsComplex<T>) {
      return Unsupported(Opcode::kClamp, T::kDType);
    } else {
      Literal out(instruction.shape());
      const S* l = lo.data<S>();
      const S* v = x.data<S>();
      const S* h = hi.data<S>();
      bool scalar_lo = lo.element_count() == 1, scalar_hi = hi.element_count() == 1;
      S* dst = out.mutable_data<S>();
      for (int64_t i = 0; i < out.element_count(); ++i) {
        auto a = T::Load(l[scalar_lo ? 0 : i]);
        auto b = T::Load(h[scalar_hi ? 0 : i]);
        auto c = T::Load(v[i]);
        if constexpr (kIsFloating<T>) {
          dst[i] = T::Store(scalar::FloatMin(scalar::FloatMax(c, a), b));
        } else {
          dst[i] = T::Store(std::min(std::max(c, a), b));
        }
      }
      return out;
    }
  });
}

// map: the called computation applied to each index's scalars.
absl::StatusOr<Literal> Map(const Instruction& instruction, OperandValues operands,
                            Evaluator& evaluator) {
  const Computation& fn = **instruction.attrs().to_apply;
  Literal out(instruction.shape());
  std::vector<Literal> scalars;
  for (const Literal* operand : operands) scalars.emplace_back(Shape::Scalar(operand->shape().dtype()));
  std::vector<const Literal*> arguments;
  for (const Literal& s : scalars) arguments.push_back(&s);
  int64_t out_size = DTypeByteSize(out.shape().dtype());
  for (int64_t i = 0; i < out.element_count(); ++i) {
    for (size_t k = 0; k < operands.size(); ++k) {
      int64_t size = DTypeByteSize(operands[k]->shape().dtype());
      std::memcpy(scalars[k].mutable_bytes().data(), operands[k]->bytes().data() + i * size, size);
    }
    SEAM_ASSIGN_OR_RETURN(Literal value, evaluator.Call(fn, arguments));
    std::memcpy(out.mutable_bytes().data() + i * out_size, value.bytes().data(), out_size);
  }
  return out;
}

}  // namespace

absl::StatusOr<Literal> EvalElementwise(const Instruction& instruction, OperandValues operands,
                                        Evaluator& evaluator) {
  switch (instruction.opcode()) {
    case Opcode::kConvert:
    case Opcode::kBitcastConvert:
    case Opcode::kReducePrecision:
    case Opcode::kStochasticConvert:
      return EvalConversion(instruction, operands);
    case Opcode::kCompare: return Compare(instruction, *operands[0], *operands[1]);
    case Opcode::kSelect: return Select(instruction, operands);
    case Opcode::kClamp: return Clamp(instruction, operands);
    case Opcode::kMap: return Map(instruction, operands, evaluator);
    default: break;
  }
  if (operands.size() == 1) return Unary(instruction, *operands[0]);
  if (operands.size() == 2) return Binary(instruction, *operands[0], *operands[1]);
  return absl::UnimplementedError(
      absl::StrCat("the interpreter does not support '", OpcodeName(instruction.opcode()), "'"));
}

}  // namespace seam
