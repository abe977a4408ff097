#include "seam/passes/mover_util.h"

#include <algorithm>

#include "seam/util/status_macros.h"

namespace seam::movers {

bool IsStaticArray(const Shape& shape) {
  return shape.IsArray() && !shape.HasDynamicDims() && shape.ElementCount().has_value();
}

bool HasControlEdges(const Instruction& i) {
  return !i.control_predecessors().empty() || !i.control_successors().empty();
}

bool IsPlainArrayOp(const Instruction& i) {
  if (i.users().empty() && !i.IsRoot()) return false;
  if (HasControlEdges(i) || !IsStaticArray(i.shape())) return false;
  for (const Instruction* operand : i.operands()) {
    if (!IsStaticArray(operand->shape())) return false;
  }
  return true;
}

bool SameTypedAttributes(const Attributes& a, const Attributes& b) {
  Attributes x = a, y = b;
  x.verbatim.clear();
  y.verbatim.clear();
  return x == y;
}

const Literal* KnownLiteral(const Instruction* i) {
  if (i->opcode() != Opcode::kConstant || i->literal() == nullptr) return nullptr;
  const Literal* literal = i->literal();
  if (literal->is_elided() || literal->is_opaque() || !literal->shape().IsArray()) {
    return nullptr;
  }
  return literal;
}

namespace {

struct FloatFormat {
  int exponent_bits;
  int mantissa_bits;  // explicit ones
};

std::optional<FloatFormat> FormatOf(DType t) {
  switch (t) {
    case DType::kF16: return FloatFormat{5, 10};
    case DType::kBF16: return FloatFormat{8, 7};
    case DType::kF32: return FloatFormat{8, 23};
    case DType::kF64: return FloatFormat{11, 52};
    default: return std::nullopt;
  }
}

}  // namespace

int ValueBits(DType t) {
  switch (DTypeKindOf(t)) {
    case DTypeKind::kOpaque:
    case DTypeKind::kToken:
      return 0;
    default:
      return DTypeBits(t);
  }
}

bool IsWidening(DType from, DType to) {
  int f = ValueBits(from), t = ValueBits(to);
  return f > 0 && t > 0 && f < t;
}

bool ConvertsExactly(DType from, DType to) {
  if (from == to) return ValueBits(from) > 0;
  DTypeKind f = DTypeKindOf(from), t = DTypeKindOf(to);
  if (f == DTypeKind::kOpaque || t == DTypeKind::kOpaque || f == DTypeKind::kToken ||
      t == DTypeKind::kToken || f == DTypeKind::kComplex || t == DTypeKind::kComplex) {
    return false;
  }
  if (f == DTypeKind::kPredicate) return true;  // 0 and 1 exist in every type
  if (t == DTypeKind::kPredicate) return false;
  int from_bits = DTypeBits(from), to_bits = DTypeBits(to);
  if (f == DTypeKind::kFloat) {
    if (t != DTypeKind::kFloat) return false;  // fractions, inf, NaN
    FloatFormat a = *FormatOf(from), b = *FormatOf(to);
    return b.exponent_bits >= a.exponent_bits && b.mantissa_bits >= a.mantissa_bits;
  }
  // `from` is an integer: the magnitude bits its values need.
  int magnitude_bits = f == DTypeKind::kSigned ? from_bits - 1 : from_bits;
  if (t == DTypeKind::kFloat) {
    // Every integer up to 2^(mantissa+1) is exact; the exponent range of
    // every float type covers 2^64.
    return FormatOf(to)->mantissa_bits + 1 >= magnitude_bits;
  }
  if (t == DTypeKind::kUnsigned) return f == DTypeKind::kUnsigned && to_bits >= from_bits;
  return to_bits - 1 >= magnitude_bits;  // signed target
}

bool CanReplaceWithExisting(const Instruction* old, const Instruction* existing) {
  if (old == existing || !old->shape().Compatible(existing->shape())) return false;
  if (SameLayouts(old->shape(), existing->shape())) return true;
  if (!old->shape().IsArray()) return false;  // a tuple's layouts reach further
  for (const Instruction* user : old->users()) {
    if (user->opcode() == Opcode::kBitcast) return false;
  }
  return true;
}

IntList InversePermutation(const IntList& permutation) {
  IntList inverse(permutation.size());
  for (size_t i = 0; i < permutation.size(); ++i) {
    inverse[static_cast<size_t>(permutation[i])] = static_cast<int64_t>(i);
  }
  return inverse;
}

bool IsIdentityPermutation(const IntList& permutation) {
  for (size_t i = 0; i < permutation.size(); ++i) {
    if (permutation[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

std::vector<int64_t> Permute(const std::vector<int64_t>& dims, const IntList& permutation) {
  std::vector<int64_t> out;
  out.reserve(permutation.size());
  for (int64_t p : permutation) out.push_back(dims[static_cast<size_t>(p)]);
  return out;
}

Literal ReshapeLiteral(const Literal& in, std::vector<int64_t> dims) {
  Literal out(Shape::Array(in.shape().dtype(), std::move(dims)));
  out.mutable_bytes() = in.bytes();
  return out;
}

Literal TransposeLiteral(const Literal& in, const IntList& permutation) {
  const Shape& shape = in.shape();
  Literal out(Shape::Array(shape.dtype(), Permute(shape.dims(), permutation)));
  int64_t size = DTypeByteSize(shape.dtype());
  int rank = shape.rank();
  // Strides of the input, in the order of the output's dimensions.
  std::vector<int64_t> in_strides(rank);
  int64_t stride = 1;
  for (int d = rank - 1; d >= 0; --d) {
    in_strides[d] = stride;
    stride *= shape.dim(d);
  }
  std::vector<int64_t> strides = Permute(in_strides, permutation);
  const std::vector<int64_t>& out_dims = out.shape().dims();
  if (out.element_count() == 0) return out;
  std::vector<int64_t> index(rank, 0);
  const uint8_t* src = in.bytes().data();
  uint8_t* dst = out.mutable_bytes().data();
  for (int64_t linear = 0; linear < out.element_count(); ++linear) {
    int64_t from = 0;
    for (int d = 0; d < rank; ++d) from += index[d] * strides[d];
    std::copy(src + from * size, src + (from + 1) * size, dst + linear * size);
    for (int d = rank - 1; d >= 0 && ++index[d] == out_dims[d]; --d) index[d] = 0;
  }
  return out;
}

std::vector<Instruction*> InstructionList(const Computation& computation) {
  std::vector<Instruction*> list;
  list.reserve(computation.instructions().size());
  for (const auto& i : computation.instructions()) list.push_back(i.get());
  return list;
}

bool HasOpcode(const Computation& computation, Opcode op) {
  for (const auto& i : computation.instructions()) {
    if (i->opcode() == op) return true;
  }
  return false;
}

void Editor::Begin(Computation& computation) {
  computation_ = &computation;
  builder_.reset();
  removed_.clear();
}

HloBuilder& Editor::b() {
  if (names_ == nullptr) names_ = std::make_unique<NameUniquer>(module_);
  if (builder_ == nullptr) builder_ = std::make_unique<HloBuilder>(*computation_, *names_);
  return *builder_;
}

void Editor::ReplaceWithNew(Instruction* old, Instruction* fresh) {
  // The new value takes the old one's shape, bounds (`<=N`) included.
  SEAM_CHECK(old->shape().CompatibleIgnoringDynamism(fresh->shape()));
  fresh->mutable_shape() = old->shape();
  ReplaceWithExisting(old, fresh);
}

void Editor::ReplaceWithExisting(Instruction* old, Instruction* existing) {
  SEAM_CHECK(old != existing && old->shape().Compatible(existing->shape()));
  old->ReplaceAllUsesWith(existing);
  RemoveIfDead(old);
}

void Editor::RemoveIfDead(Instruction* i) {
  std::vector<Instruction*> stack{i};
  while (!stack.empty()) {
    Instruction* next = stack.back();
    stack.pop_back();
    if (removed_.contains(next) || !next->users().empty() || next->IsRoot() ||
        HasControlEdges(*next) || !IsRemovableWhenDead(*next)) {
      continue;
    }
    std::vector<Instruction*> operands = next->operands();
    next->DetachOperands();
    removed_.insert(next);
    for (Instruction* operand : operands) stack.push_back(operand);
  }
}

void Editor::Finish() {
  if (!removed_.empty()) computation_->RemoveInstructions(removed_);
  removed_.clear();
}

bool ReplaceFolded(Module& module, Opcode present,
                   absl::FunctionRef<Instruction*(Instruction*, HloBuilder&)> fold) {
  Editor editor(module);
  bool changed = false;
  for (const auto& computation : module.computations()) {
    if (!HasOpcode(*computation, present)) continue;
    editor.Begin(*computation);
    for (Instruction* i : computation->MakePostOrder()) {
      if (editor.IsRemoved(i) || !IsPlainArrayOp(*i)) continue;
      Instruction* folded = fold(i, editor.b());
      if (folded == nullptr) continue;
      editor.ReplaceWithNew(i, folded);
      changed = true;
    }
    editor.Finish();
  }
  return changed;
}

}  // namespace seam::movers
