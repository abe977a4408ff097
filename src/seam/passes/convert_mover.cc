// convert-mover: moves converts across pure data movement so that the data
// movement handles the narrower type, after XLA's ConvertMover:
//
//   reshape(convert_f32(x: bf16))          -> convert_f32(reshape(x))
//   concatenate(convert_f32(a), convert_f32(b)) -> convert_f32(concatenate(a, b))
//   pad(convert_f32(x), 0.0)               -> convert_f32(pad(x, 0.0 as bf16))
//   convert_bf16(transpose(y: f32))        -> transpose(convert_bf16(y))
//
// Widening converts move down (later), narrowing ones up (earlier); each
// move halves (or better) the bytes the data movement reads and writes, and
// puts converts next to each other or next to the arithmetic that fusion
// merges them with.
//
// Every move is exact: reshape, transpose, broadcast, slice, concatenate,
// reverse and pad only choose which element goes where, and convert works on
// each element alone, so they commute. The one new value is pad's padding
// (and a concatenated constant): a widening convert moves below a pad only
// when the padding is itself a convert from the narrow type or a constant
// whose narrow value converts back bit for bit (not NaN, -0 kept).
//
// Not moved: narrowing converts above slices (and pads that crop), where the
// convert would work on elements the slice drops; converts between types of
// the same width (no bytes saved); converts with other users (the old one
// would stay: duplicated work); a narrowing convert above data movement
// that has other users (the data movement would be duplicated); opaque
// types, control edges, dynamic shapes.
#include <cmath>
#include <limits>

#include "seam/passes/mover_util.h"
#include "seam/passes/pass.h"

namespace seam {
namespace {

bool IsDataMovement(const Instruction* i) {
  switch (i->opcode()) {
    case Opcode::kReshape:
    case Opcode::kTranspose:
    case Opcode::kBroadcast:
    case Opcode::kSlice:
    case Opcode::kConcatenate:
    case Opcode::kReverse:
    case Opcode::kPad:
      return movers::IsPlainArrayOp(*i);
    default:
      return false;
  }
}

// Operands that carry data (pad's padding value does not).
int DataOperandCount(const Instruction* i) {
  return i->opcode() == Opcode::kPad ? 1 : i->operand_count();
}

// Whether `op` drops elements (slice, pad with negative padding): a convert
// moved above it would convert elements nobody reads.
bool Drops(const Instruction* op) {
  if (op->opcode() == Opcode::kSlice) return true;
  if (op->opcode() != Opcode::kPad) return false;
  for (const PadDim& d : op->attrs().padding.value_or(PaddingConfig{})) {
    if (d.low < 0 || d.high < 0) return true;
  }
  return false;
}

bool IsMovableConvert(const Instruction* i) {
  return i->opcode() == Opcode::kConvert && !movers::HasControlEdges(*i) &&
         movers::IsStaticArray(i->shape()) && i->users().size() == 1;
}

// Whether the whole number `v` is a value of integer (or pred) type `t`.
bool FitsInteger(double v, DType t) {
  if (IsPred(t)) return v == 0 || v == 1;
  int bits = DTypeBits(t);
  double lo = IsSigned(t) ? -std::ldexp(1.0, bits - 1) : 0;
  double hi = IsSigned(t) ? std::ldexp(1.0, bits - 1) - 1 : std::ldexp(1.0, bits) - 1;
  return v >= lo && v <= hi;
}

// `wide` converted to `narrow` when converting it back gives every element
// bit for bit; nullopt otherwise. Handles float and integer (and pred)
// types whose values a double holds exactly.
std::optional<Literal> NarrowExactly(const Literal& wide, DType narrow) {
  DType w = wide.shape().dtype();
  bool float_w = IsFloat(w), float_n = IsFloat(narrow);
  bool int_w = IsInteger(w) || IsPred(w), int_n = IsInteger(narrow) || IsPred(narrow);
  if (!(float_w || int_w) || !(float_n || int_n) || (int_w && float_n)) return std::nullopt;
  if (int_w && DTypeBits(w) > 32) return std::nullopt;  // beyond what a double holds
  if (int_n && DTypeBits(narrow) != 8 * DTypeByteSize(narrow)) return std::nullopt;  // s4, u4
  Shape shape = wide.shape();
  shape.set_dtype(narrow);
  shape.set_layout(std::nullopt);
  Literal out(shape);
  for (int64_t k = 0; k < wide.element_count(); ++k) {
    double v = wide.GetDouble(k);
    if (std::isnan(v)) return std::nullopt;
    if (float_n) {
      out.SetDouble(k, v);
      double back = out.GetDouble(k);
      if (back != v || std::signbit(back) != std::signbit(v)) return std::nullopt;
      continue;
    }
    // An integer (or pred) narrow type: whole values in its range, and no
    // -0.0 (it would come back as +0.0).
    if (std::trunc(v) != v || !FitsInteger(v, narrow) || (v == 0 && std::signbit(v))) {
      return std::nullopt;
    }
    out.SetBits(k, static_cast<uint64_t>(static_cast<int64_t>(v)));
  }
  return out;
}

class ConvertMover {
 public:
  explicit ConvertMover(movers::Editor& editor) : editor_(editor) {}

  // op(convert_W(x: N), ...) -> convert_W(op(x, ...)).
  bool SinkWidening(Instruction* op) {
    if (!IsDataMovement(op)) return false;
    DType wide = op->shape().dtype();
    std::optional<DType> narrow;
    for (int k = 0; k < DataOperandCount(op); ++k) {
      const Instruction* operand = op->operand(k);
      if (!IsMovableConvert(operand)) continue;
      DType from = operand->operand(0)->shape().dtype();
      if (!movers::IsWidening(from, wide) || (narrow.has_value() && *narrow != from)) return false;
      narrow = from;
    }
    if (!narrow.has_value()) return false;
    HloBuilder& b = editor_.b();
    std::vector<Instruction*> operands;
    std::vector<Instruction*> built;
    for (int k = 0; k < op->operand_count(); ++k) {
      Instruction* operand = op->operand(k);
      if (operand->opcode() == Opcode::kConvert && operand->operand(0)->shape().dtype() == *narrow &&
          (k >= DataOperandCount(op) || IsMovableConvert(operand))) {
        operands.push_back(operand->operand(0));
        continue;
      }
      const Literal* literal = movers::KnownLiteral(operand);
      std::optional<Literal> narrowed;
      if (literal != nullptr) narrowed = NarrowExactly(*literal, *narrow);
      if (!narrowed.has_value()) {
        for (Instruction* i : built) editor_.RemoveIfDead(i);
        return false;
      }
      Instruction* constant = b.Constant(std::move(*narrowed));
      built.push_back(constant);
      operands.push_back(constant);
    }
    Instruction* moved = b.Clone(*op, std::move(operands));
    moved->mutable_shape().set_dtype(*narrow);
    moved->mutable_shape().set_layout(std::nullopt);
    editor_.ReplaceWithNew(op, b.Convert(moved, wide));
    return true;
  }

  // convert_N(op(y: W, ...)) -> op(convert_N(y), ...); returns the new
  // converts, which may move further up.
  std::vector<Instruction*> HoistNarrowing(Instruction* convert) {
    if (convert->opcode() != Opcode::kConvert || !movers::IsPlainArrayOp(*convert)) return {};
    Instruction* op = convert->operand(0);
    DType narrow = convert->shape().dtype();
    if (!IsDataMovement(op) || op->users().size() != 1 || op->IsRoot() ||
        !movers::IsWidening(narrow, op->shape().dtype()) || Drops(op)) {
      return {};
    }
    HloBuilder& b = editor_.b();
    std::vector<Instruction*> operands, converts;
    for (Instruction* operand : op->operands()) {
      converts.push_back(b.Convert(operand, narrow));
      operands.push_back(converts.back());
    }
    Instruction* moved = b.Clone(*op, std::move(operands));
    moved->mutable_shape().set_dtype(narrow);
    moved->mutable_shape().set_layout(std::nullopt);
    editor_.ReplaceWithNew(convert, moved);
    return converts;
  }

 private:
  movers::Editor& editor_;
};

class ConvertMoverPass : public ComputationPass {
  std::vector<Opcode> Triggers() const override { return {Opcode::kConvert}; }
  void Prepare(Module& module) override { editor_.emplace(module); }
  absl::StatusOr<bool> RunOnComputation(Computation& computation) override {
    ConvertMover mover(*editor_);
    editor_->Begin(computation);
    std::vector<Instruction*> order = computation.MakePostOrder();
    bool changed = false;
    // Widening converts first, operands before users, so one sweep carries
    // a convert down a whole chain.
    for (Instruction* i : order) {
      if (!editor_->IsRemoved(i)) changed |= mover.SinkWidening(i);
    }
    // Narrowing converts; each hoisted convert is tried again at once.
    std::vector<Instruction*> work;
    for (Instruction* i : order) {
      if (!editor_->IsRemoved(i) && i->opcode() == Opcode::kConvert) work.push_back(i);
    }
    while (!work.empty()) {
      Instruction* convert = work.back();
      work.pop_back();
      if (editor_->IsRemoved(convert)) continue;
      std::vector<Instruction*> hoisted = mover.HoistNarrowing(convert);
      changed |= !hoisted.empty();
      work.insert(work.end(), hoisted.begin(), hoisted.end());
    }
    editor_->Finish();
    return changed;
  }

  std::optional<movers::Editor> editor_;
};

}  // namespace

std::unique_ptr<Pass> MakeConvertMoverPass() { return std::make_unique<ConvertMoverPass>(); }

}  // namespace seam
