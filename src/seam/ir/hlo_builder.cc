#include "seam/ir/hlo_builder.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "seam/util/status_macros.h"

namespace seam {

NameUniquer::NameUniquer(const Module& module) {
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      used_.insert(instruction->name());
    }
  }
}

std::string NameUniquer::Make(absl::string_view base) {
  // `add.12` and `add` share the base `add`, so new names read like XLA's.
  size_t dot = base.rfind('.');
  int64_t ignored;
  if (dot != absl::string_view::npos && absl::SimpleAtoi(base.substr(dot + 1), &ignored)) {
    base = base.substr(0, dot);
  }
  int64_t& next = next_suffix_[base];
  while (true) {
    std::string name = absl::StrCat(base, ".", ++next);
    if (used_.insert(name).second) return name;
  }
}

Instruction* HloBuilder::Add(Opcode opcode, Shape shape, std::vector<Instruction*> operands,
                             Attributes attrs) {
  auto instruction =
      std::make_unique<Instruction>(names_.Make(OpcodeName(opcode)), opcode, std::move(shape));
  for (Instruction* operand : operands) instruction->AppendOperand(operand);
  instruction->mutable_attrs() = std::move(attrs);
  return computation_.AddInstruction(std::move(instruction));
}

Instruction* HloBuilder::Clone(const Instruction& original, std::vector<Instruction*> operands) {
  auto instruction = std::make_unique<Instruction>(names_.Make(original.name()), original.opcode(),
                                                   original.shape());
  for (Instruction* operand : operands) instruction->AppendOperand(operand);
  instruction->mutable_attrs() = original.attrs();
  instruction->set_parameter_number(original.parameter_number());
  if (original.literal() != nullptr) {
    Literal literal = *original.literal();
    // The copy stands for the same elided data as the original.
    if (literal.is_elided() && literal.elided_identity().empty()) {
      literal.set_elided_identity(original.name());
    }
    instruction->set_literal(std::move(literal));
  }
  instruction->set_location(original.location());
  return computation_.AddInstruction(std::move(instruction));
}

Instruction* HloBuilder::Constant(Literal value) {
  Instruction* constant = Add(Opcode::kConstant, value.shape(), {});
  constant->set_literal(std::move(value));
  return constant;
}

Instruction* HloBuilder::ScalarConstant(DType type, double value) {
  Literal literal(Shape::Scalar(type));
  literal.SetDouble(0, value);
  return Constant(std::move(literal));
}

Instruction* HloBuilder::Splat(const Shape& shape, double value) {
  Instruction* scalar = ScalarConstant(shape.dtype(), value);
  if (shape.rank() == 0) return scalar;
  return Broadcast(scalar, shape.dims(), {});
}

Instruction* HloBuilder::Unary(Opcode opcode, Instruction* x) {
  return Add(opcode, x->shape(), {x});
}

Instruction* HloBuilder::Binary(Opcode opcode, Instruction* a, Instruction* b) {
  return Add(opcode, a->shape(), {a, b});
}

Instruction* HloBuilder::Compare(Instruction* a, Instruction* b, ComparisonDirection direction) {
  Shape shape = a->shape();
  shape.set_dtype(DType::kPred);
  Attributes attrs;
  attrs.direction = direction;
  return Add(Opcode::kCompare, std::move(shape), {a, b}, std::move(attrs));
}

Instruction* HloBuilder::Select(Instruction* pred, Instruction* on_true, Instruction* on_false) {
  return Add(Opcode::kSelect, on_true->shape(), {pred, on_true, on_false});
}

Instruction* HloBuilder::Convert(Instruction* x, DType type) {
  Shape shape = x->shape();
  shape.set_dtype(type);
  return Add(Opcode::kConvert, std::move(shape), {x});
}

Instruction* HloBuilder::Broadcast(Instruction* x, std::vector<int64_t> out_dims,
                                   IntList dimensions) {
  Attributes attrs;
  attrs.dimensions = std::move(dimensions);
  return Add(Opcode::kBroadcast, WithDims(x->shape(), std::move(out_dims)), {x}, std::move(attrs));
}

Instruction* HloBuilder::Reshape(Instruction* x, std::vector<int64_t> dims) {
  return Add(Opcode::kReshape, WithDims(x->shape(), std::move(dims)), {x});
}

Instruction* HloBuilder::Transpose(Instruction* x, IntList permutation) {
  std::vector<int64_t> dims;
  for (int64_t p : permutation) dims.push_back(x->shape().dim(static_cast<int>(p)));
  Attributes attrs;
  attrs.dimensions = std::move(permutation);
  return Add(Opcode::kTranspose, WithDims(x->shape(), std::move(dims)), {x}, std::move(attrs));
}

Instruction* HloBuilder::Slice(Instruction* x, SliceRanges ranges) {
  std::vector<int64_t> dims;
  for (const SliceRange& r : ranges) dims.push_back((r.limit - r.start + r.stride - 1) / r.stride);
  Attributes attrs;
  attrs.slice = std::move(ranges);
  return Add(Opcode::kSlice, WithDims(x->shape(), std::move(dims)), {x}, std::move(attrs));
}

Instruction* HloBuilder::Concatenate(std::vector<Instruction*> parts, int64_t dimension) {
  std::vector<int64_t> dims = parts[0]->shape().dims();
  dims[dimension] = 0;
  for (Instruction* part : parts) dims[dimension] += part->shape().dim(static_cast<int>(dimension));
  Attributes attrs;
  attrs.dimensions = IntList{dimension};
  Shape shape = WithDims(parts[0]->shape(), std::move(dims));
  return Add(Opcode::kConcatenate, std::move(shape), std::move(parts), std::move(attrs));
}

Instruction* HloBuilder::GetTupleElement(Instruction* tuple, int64_t index) {
  Attributes attrs;
  attrs.index = index;
  return Add(Opcode::kGetTupleElement, tuple->shape().tuple_shapes()[index], {tuple},
             std::move(attrs));
}

Instruction* HloBuilder::Tuple(std::vector<Instruction*> elements) {
  std::vector<Shape> shapes;
  for (Instruction* e : elements) shapes.push_back(e->shape());
  return Add(Opcode::kTuple, Shape::Tuple(std::move(shapes)), std::move(elements));
}

Instruction* HloBuilder::Reduce(Instruction* x, Instruction* init, IntList dimensions,
                                Computation* reducer) {
  std::vector<int64_t> dims;
  for (int d = 0; d < x->shape().rank(); ++d) {
    if (std::find(dimensions.begin(), dimensions.end(), d) == dimensions.end()) {
      dims.push_back(x->shape().dim(d));
    }
  }
  Attributes attrs;
  attrs.dimensions = std::move(dimensions);
  attrs.to_apply = reducer;
  return Add(Opcode::kReduce, WithDims(x->shape(), std::move(dims)), {x, init}, std::move(attrs));
}

void CopyControlEdges(const Instruction* old, Instruction* replacement) {
  for (Instruction* predecessor : old->control_predecessors()) {
    if (predecessor != replacement) replacement->AddControlPredecessor(predecessor);
  }
  std::vector<Instruction*> successors = old->control_successors();
  for (Instruction* successor : successors) {
    if (successor != replacement) successor->AddControlPredecessor(replacement);
  }
}

void ReplaceInstruction(Instruction* old, Instruction* replacement) {
  SEAM_CHECK(old != replacement);
  old->ReplaceAllUsesWith(replacement);
  CopyControlEdges(old, replacement);
  old->parent()->RemoveInstruction(old);
}

Shape WithDims(const Shape& shape, std::vector<int64_t> dims) {
  return Shape::Array(shape.dtype(), std::move(dims));
}

Instruction* KeepDims(HloBuilder& b, Instruction* x, const std::vector<int64_t>& keep) {
  std::vector<int64_t> sorted = keep;
  std::sort(sorted.begin(), sorted.end());
  Instruction* y = x;
  if (static_cast<int>(sorted.size()) < x->shape().rank()) {
    std::vector<int64_t> dims;
    for (int64_t d : sorted) dims.push_back(x->shape().dim(static_cast<int>(d)));
    y = b.Reshape(x, std::move(dims));
  }
  IntList permutation;
  bool identity = true;
  for (int64_t d : keep) {
    permutation.push_back(std::find(sorted.begin(), sorted.end(), d) - sorted.begin());
    identity &= permutation.back() == static_cast<int64_t>(permutation.size()) - 1;
  }
  if (!identity) y = b.Transpose(y, std::move(permutation));
  return y;
}

namespace {

bool CallsSomethingWithSideEffects(const Instruction& instruction);

bool ComputationHasSideEffects(const Computation& computation) {
  for (const auto& i : computation.instructions()) {
    if (!IsRemovableWhenDead(*i) && i->opcode() != Opcode::kParameter) return true;
  }
  return false;
}

bool CallsSomethingWithSideEffects(const Instruction& instruction) {
  for (const Computation* called : instruction.CalledComputations()) {
    if (called != nullptr && ComputationHasSideEffects(*called)) return true;
  }
  return false;
}

}  // namespace

bool IsRemovableWhenDead(const Instruction& instruction) {
  switch (instruction.opcode()) {
    case Opcode::kParameter:
      return false;
    case Opcode::kCustomCall: {
      const VerbatimAttribute* effect =
          instruction.attrs().FindVerbatim("custom_call_has_side_effect");
      return effect == nullptr || effect->value != "true";
    }
    default:
      return !HasSideEffect(instruction.opcode()) && !CallsSomethingWithSideEffects(instruction);
  }
}

}  // namespace seam
