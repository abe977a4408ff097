#include "seam/codegen/scalar_expr.h"

#include "absl/strings/str_cat.h"
#include "seam/codegen/c_types.h"

namespace seam::codegen {
namespace {

using Code = ScalarCode;
constexpr VectorForm kPlain = VectorForm::kPlain;
constexpr VectorForm kBranchy = VectorForm::kBranchy;

absl::Status Unsupported(const Instruction& op) {
  return absl::UnimplementedError(absl::StrCat("generated code does not compute '",
                                               OpcodeName(op.opcode()), "' on ",
                                               DTypeName(op.operand(0)->shape().dtype())));
}

// A call of `fn` (or a functional cast to type `fn`) on `args`.
Code Call(const std::string& fn, const std::vector<std::string>& args) {
  std::string s = fn + "(";
  for (size_t k = 0; k < args.size(); ++k) absl::StrAppend(&s, k ? ", " : "", args[k]);
  return {s + ")", CallForm(fn)};
}

// The functions with vector twins: called by their twin's name in loops
// that use the twins.
Code TwinnedCall(const std::string& fn, const std::string& a, bool twins) {
  return {absl::StrCat(CalledFunction(fn, twins), "(", a, ")"), CallForm(fn)};
}

// Code that branches or selects.
Code Branchy(std::string text) { return {std::move(text), kBranchy}; }

Code Plain(std::string text) { return {std::move(text), kPlain}; }

absl::StatusOr<Code> FloatUnary(const Instruction& op, const std::string& a, DType t, bool twins) {
  std::string T = ComputeType(t);
  switch (op.opcode()) {
    case Opcode::kAbs: return Call("std::abs", {a});
    case Opcode::kNegate:
      return Plain(absl::StrCat("(-", a, ")"));
    case Opcode::kSign: return Call("seam::scalar::Sign", {a});
    case Opcode::kCeil: return Call("std::ceil", {a});
    case Opcode::kFloor: return Call("std::floor", {a});
    case Opcode::kRoundNearestAfz: return Call("std::round", {a});
    case Opcode::kRoundNearestEven: return Call("std::nearbyint", {a});
    case Opcode::kExp:
      return T == "float" ? TwinnedCall("seam_exp", a, twins) : Call("std::exp", {a});
    case Opcode::kExpm1: return Call(T == "float" ? "seam_expm1" : "std::expm1", {a});
    case Opcode::kLog: return Call(T == "float" ? "seam_log" : "std::log", {a});
    case Opcode::kLog1p: return Call(T == "float" ? "seam_log1p" : "std::log1p", {a});
    case Opcode::kLogistic:
      if (T == "float") {
        Code e = TwinnedCall("seam_exp", absl::StrCat("-", a), twins);
        return Code{absl::StrCat("(1.0f / (1.0f + ", e.text, "))"), e.form};
      }
      return Call("seam::scalar::Logistic", {a});
    case Opcode::kSqrt: return Call("std::sqrt", {a});
    case Opcode::kRsqrt:
      return Code{absl::StrCat("(", T, "(1) / std::sqrt(", a, "))"),
                  CallForm(T) | CallForm("std::sqrt")};
    case Opcode::kCbrt: return Call("std::cbrt", {a});
    case Opcode::kTanh:
      return T == "float" ? TwinnedCall("seam_tanh", a, twins) : Call("std::tanh", {a});
    case Opcode::kSin: return Call("std::sin", {a});
    case Opcode::kCos: return Call("std::cos", {a});
    case Opcode::kTan: return Call("std::tan", {a});
    case Opcode::kErf:
      return Call(T == "float" ? "seam_erf" : "std::erf", {a});
    case Opcode::kReal:
      return Plain(a);
    case Opcode::kImag:
      return Call(T, {"0"});
    case Opcode::kIsFinite: return Call("std::isfinite", {a});
    default: return Unsupported(op);
  }
}

absl::StatusOr<Code> IntUnary(const Instruction& op, const std::string& a, DType t) {
  std::string T = ComputeType(t);
  if (t == DType::kPred) {
    if (op.opcode() == Opcode::kNot) return Plain(absl::StrCat("(!", a, ")"));
    return Unsupported(op);
  }
  switch (op.opcode()) {
    case Opcode::kAbs:
      return Branchy(absl::StrCat("(", a, " < 0 ? seam::scalar::WrapNeg(", a, ") : ", a, ")"));
    case Opcode::kNegate: return Call("seam::scalar::WrapNeg", {a});
    case Opcode::kSign: return Call("seam::scalar::Sign", {a});
    case Opcode::kNot:
      return Call(T, {absl::StrCat("~", a)});
    case Opcode::kPopcnt:
      return Branchy(Call(T, {Call("seam::scalar::PopCount", {a}).text}).text);
    case Opcode::kClz:
      return Branchy(Call(T, {Call("seam::scalar::CountLeadingZeros", {a}).text}).text);
    default: return Unsupported(op);
  }
}

absl::StatusOr<Code> FloatBinary(const Instruction& op, const std::string& a,
                                 const std::string& b) {
  switch (op.opcode()) {
    case Opcode::kAdd:
      return Plain(absl::StrCat("(", a, " + ", b, ")"));
    case Opcode::kSubtract:
      return Plain(absl::StrCat("(", a, " - ", b, ")"));
    case Opcode::kMultiply:
      return Plain(absl::StrCat("(", a, " * ", b, ")"));
    case Opcode::kDivide:
      return Plain(absl::StrCat("(", a, " / ", b, ")"));
    case Opcode::kRemainder: return Call("std::fmod", {a, b});
    case Opcode::kMaximum: return Call("seam_fmax", {a, b});
    case Opcode::kMinimum: return Call("seam_fmin", {a, b});
    case Opcode::kPower: return Call("std::pow", {a, b});
    case Opcode::kAtan2: return Call("std::atan2", {a, b});
    default: return Unsupported(op);
  }
}

absl::StatusOr<Code> IntBinary(const Instruction& op, const std::string& a, const std::string& b,
                               DType t) {
  std::string T = ComputeType(t);
  if (t == DType::kPred) {
    switch (op.opcode()) {
      // Both operands are computed already, so the bitwise forms (no
      // short circuit, hence no branch: AVX2 loops stay vectorized).
      case Opcode::kAnd:
      case Opcode::kMinimum:
      case Opcode::kMultiply:
        return Plain(absl::StrCat("(", a, " & ", b, ")"));
      case Opcode::kOr:
      case Opcode::kMaximum:
      case Opcode::kAdd:
        return Plain(absl::StrCat("(", a, " | ", b, ")"));
      case Opcode::kXor:
      case Opcode::kSubtract:
        return Plain(absl::StrCat("(", a, " != ", b, ")"));
      default: return Unsupported(op);
    }
  }
  switch (op.opcode()) {
    case Opcode::kAdd: return Call("seam::scalar::WrapAdd", {a, b});
    case Opcode::kSubtract: return Call("seam::scalar::WrapSub", {a, b});
    case Opcode::kMultiply: return Call("seam::scalar::WrapMul", {a, b});
    case Opcode::kDivide: return Call("seam::scalar::IntDivide", {a, b});
    case Opcode::kRemainder: return Call("seam::scalar::IntRemainder", {a, b});
    case Opcode::kMaximum:
      return Branchy(absl::StrCat("(", a, " > ", b, " ? ", a, " : ", b, ")"));
    case Opcode::kMinimum:
      return Branchy(absl::StrCat("(", a, " < ", b, " ? ", a, " : ", b, ")"));
    case Opcode::kPower: return Call("seam::scalar::IntPower", {a, b});
    case Opcode::kAnd:
      return Call(T, {absl::StrCat(a, " & ", b)});
    case Opcode::kOr:
      return Call(T, {absl::StrCat(a, " | ", b)});
    case Opcode::kXor:
      return Call(T, {absl::StrCat(a, " ^ ", b)});
    case Opcode::kShiftLeft: return Call("seam::scalar::ShiftLeft", {a, b});
    case Opcode::kShiftRightLogical: return Call("seam::scalar::ShiftRightLogical", {a, b});
    case Opcode::kShiftRightArithmetic: return Call("seam::scalar::ShiftRightArithmetic", {a, b});
    default: return Unsupported(op);
  }
}

std::string CompareOperator(ComparisonDirection d) {
  switch (d) {
    case ComparisonDirection::kEq: return "==";
    case ComparisonDirection::kNe: return "!=";
    case ComparisonDirection::kGe: return ">=";
    case ComparisonDirection::kGt: return ">";
    case ComparisonDirection::kLe: return "<=";
    case ComparisonDirection::kLt: return "<";
  }
  return "==";
}

Code Compare(const Instruction& op, const std::string& a, const std::string& b) {
  std::string cmp = CompareOperator(*op.attrs().direction);
  bool total = op.attrs().type.has_value() && op.attrs().type->text == "TOTALORDER" &&
               IsFloatType(op.operand(0)->shape().dtype());
  if (total) {
    return Branchy(absl::StrCat("(seam::scalar::TotalOrderKey(", a, ") ", cmp,
                                " seam::scalar::TotalOrderKey(", b, "))"));
  }
  return Plain(absl::StrCat("(", a, " ", cmp, " ", b, ")"));
}

// convert, as eval/convert.cc defines it.
Code Convert(DType from, DType to, const std::string& a) {
  if (to == DType::kPred) return Plain(absl::StrCat("(", a, " != 0)"));
  if (IsFloatType(from) && !IsFloatType(to)) {
    return Branchy(
        absl::StrCat("seam::scalar::SaturatingFloatToInt<", ComputeType(to), ">(", a, ")"));
  }
  return Code{absl::StrCat("static_cast<", ComputeType(to), ">(", a, ")"), CallForm("static_cast")};
}

// reduce-precision on the bits of the operand's own type, as the interpreter
// computes it (the compute value of a bf16 or f16 is a float, whose wider
// exponent would keep what the narrow type flushes).
absl::StatusOr<Code> ReducePrecision(const Instruction& op, const std::string& a) {
  DType t = op.shape().dtype();
  std::string bits_type, layout;  // layout: "<bits type>, <exponent bits>, <mantissa bits>"
  switch (t) {
    case DType::kF64:
      bits_type = "uint64_t", layout = "11, 52";
      break;
    case DType::kF32:
      bits_type = "uint32_t", layout = "8, 23";
      break;
    case DType::kBF16:
      bits_type = "uint16_t", layout = "8, 7";
      break;
    case DType::kF16:
      bits_type = "uint16_t", layout = "5, 10";
      break;
    default:
      return Unsupported(op);
  }
  int64_t exponent_bits = op.attrs().exponent_bits.value_or(8);
  int64_t mantissa_bits = op.attrs().mantissa_bits.value_or(23);
  if (exponent_bits < 1 || mantissa_bits < 0) return Unsupported(op);
  std::string bits = absl::StrCat("std::bit_cast<", bits_type, ">(", StoreExpr(t, a), ")");
  std::string reduced = absl::StrCat("seam::scalar::ReducePrecisionBits<", bits_type, ", ", layout,
                                     ">(", bits, ", ", exponent_bits, ", ", mantissa_bits, ")");
  return Branchy(LoadExpr(t, absl::StrCat("std::bit_cast<", StorageType(t), ">(", reduced, ")")));
}

}  // namespace

absl::StatusOr<ScalarCode> ScalarCodeOf(const Instruction& op, const std::vector<std::string>& args,
                                        bool twins) {
  DType in = op.operand(0)->shape().dtype();
  DType out = op.shape().dtype();
  if (!IsKernelType(in) || !IsKernelType(out)) return Unsupported(op);
  switch (op.opcode()) {
    case Opcode::kConvert: return Convert(in, out, args[0]);
    case Opcode::kBitcastConvert:
      if (DTypeByteSize(in) != DTypeByteSize(out)) return Unsupported(op);
      return Branchy(LoadExpr(out, absl::StrCat("std::bit_cast<", StorageType(out), ">(",
                                                StoreExpr(in, args[0]), ")")));
    case Opcode::kCompare: return Compare(op, args[0], args[1]);
    case Opcode::kReducePrecision:
      return ReducePrecision(op, args[0]);
    case Opcode::kSelect:
      // Floats (half types compute in float) by the prelude's seam_select.
      if (IsFloatType(out)) {
        return Branchy(absl::StrCat("seam_select(", args[0], ", ", args[1], ", ", args[2], ")"));
      }
      return Branchy(absl::StrCat("(", args[0], " ? ", args[1], " : ", args[2], ")"));
    case Opcode::kClamp:
      if (IsFloatType(out)) {
        return Branchy(
            absl::StrCat("seam_fmin(seam_fmax(", args[1], ", ", args[0], "), ", args[2], ")"));
      }
      return Branchy(
          absl::StrCat("std::min(std::max(", args[1], ", ", args[0], "), ", args[2], ")"));
    case Opcode::kCopy:
      return Plain(args[0]);
    default: break;
  }
  if (op.operand_count() == 1) {
    return IsFloatType(in) ? FloatUnary(op, args[0], in, twins) : IntUnary(op, args[0], in);
  }
  if (op.operand_count() == 2) {
    return IsFloatType(in) ? FloatBinary(op, args[0], args[1]) : IntBinary(op, args[0], args[1], in);
  }
  return Unsupported(op);
}

absl::StatusOr<std::string> ScalarExpr(const Instruction& op,
                                       const std::vector<std::string>& args) {
  absl::StatusOr<ScalarCode> code = ScalarCodeOf(op, args);
  if (!code.ok()) return code.status();
  return std::move(code->text);
}

}  // namespace seam::codegen
