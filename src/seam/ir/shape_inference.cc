// Shape inference after XLA's operation semantics: the entry points, which
// check operand counts and array operands, then dispatch on the opcode's
// category to one file per op family (listed with the families' entry points).
// Messages name the opcode (not the instruction: the verifier adds that) and
// say what was expected.
#include "seam/ir/shape_inference.h"

#include <algorithm>

#include "seam/ir/shape_inference_util.h"
#include "seam/util/status_macros.h"

namespace seam {
namespace {

using shape_inference_internal::In;
using shape_inference_internal::InferCollective;
using shape_inference_internal::InferComposite;
using shape_inference_internal::InferControl;
using shape_inference_internal::InferDataMovement;
using shape_inference_internal::InferElementwise;
using shape_inference_internal::InferLibrary;
using shape_inference_internal::InferOpaque;
using shape_inference_internal::InferReduction;
using shape_inference_internal::Invalid;
using shape_inference_internal::Op;
using shape_inference_internal::Str;

bool HasUnboundedDim(const Shape& s) {
  if (s.IsTuple())
    return std::any_of(s.tuple_shapes().begin(), s.tuple_shapes().end(), HasUnboundedDim);
  return Contains(s.dims(), Shape::kUnboundedSize);
}

// Ops whose operands are all arrays: everything that computes on elements.
bool TakesArrayOperands(Opcode op) {
  if (ComputesOnElements(op)) return true;
  // copy also copies tuples
  return OpcodeCategory(op) == OpCategory::kDataMovement && op != Opcode::kCopy;
}

// Index operands of dynamic-slice / dynamic-update-slice after `lead` data
// operands: one per operand dimension, or one index vector (the old form).
absl::Status CheckIndexCount(const Instruction& i, int lead) {
  int n = i.operand_count();
  if (n < lead || !In(i, 0).IsArray()) {
    return Invalid(Op(i), " takes ", lead, " array operand(s) then start indices, got ", n,
                   " operands");
  }
  int rank = In(i, 0).rank();
  if (n == lead + rank) return absl::OkStatus();
  if (n == lead + 1 && In(i, lead).IsArray() && In(i, lead).rank() == 1 &&
      In(i, lead).dim(0) == rank) {
    return absl::OkStatus();
  }
  return Invalid(Op(i), " of ", Str(In(i, 0)), " takes ", lead + rank,
                 " operands (one start index per dimension), got ", n);
}

}  // namespace

bool ShapesMatch(const Shape& a, const Shape& b) {
  if (a.IsTuple() || b.IsTuple()) {
    if (!a.IsTuple() || !b.IsTuple() || a.tuple_shapes().size() != b.tuple_shapes().size())
      return false;
    for (size_t k = 0; k < a.tuple_shapes().size(); ++k) {
      if (!ShapesMatch(a.tuple_shapes()[k], b.tuple_shapes()[k])) return false;
    }
    return true;
  }
  if (a.dtype() != b.dtype() || a.rank() != b.rank()) return false;
  for (int d = 0; d < a.rank(); ++d) {
    if (a.dim(d) != b.dim(d) && a.dim(d) != Shape::kUnboundedSize &&
        b.dim(d) != Shape::kUnboundedSize)
      return false;
  }
  return true;
}

absl::Status CheckOperandCount(const Instruction& i) {
  int n = i.operand_count();
  int arity = OpcodeArity(i.opcode());
  if (arity != kVariadic) {
    if (n == arity) return absl::OkStatus();
    return Invalid(Op(i), " takes ", arity, arity == 1 ? " operand" : " operands", ", got ", n);
  }
  switch (i.opcode()) {
    case Opcode::kReduce:
    case Opcode::kReduceWindow:
      if (n >= 2 && n % 2 == 0) return absl::OkStatus();
      return Invalid(Op(i),
                     " takes N inputs then N init values (an even count of at least 2), got ", n,
                     " operands");
    case Opcode::kScatter:
      if (n >= 3 && n % 2 == 1) return absl::OkStatus();
      return Invalid(
          "'scatter' takes N inputs, the indices and N updates (an odd count of at least 3), got ",
          n, " operands");
    case Opcode::kConcatenate:
    case Opcode::kSort:
    case Opcode::kMap:
    case Opcode::kDynamicReshape:
    case Opcode::kConditional:
      if (n >= 1) return absl::OkStatus();
      return Invalid(Op(i), " takes at least one operand, got none");
    case Opcode::kDynamicSlice:
      return CheckIndexCount(i, 1);
    case Opcode::kDynamicUpdateSlice:
      return CheckIndexCount(i, 2);
    default:
      return absl::OkStatus();
  }
}

absl::StatusOr<std::optional<Shape>> InferShape(const Instruction& i) {
  for (int k = 0; k < i.operand_count(); ++k) {
    if (i.operand(k) == nullptr) return Invalid("operand ", k, " of ", Op(i), " is missing");
  }
  SEAM_RETURN_IF_ERROR(CheckOperandCount(i));
  bool unbounded = HasUnboundedDim(i.shape());
  for (int k = 0; k < i.operand_count(); ++k) {
    if (TakesArrayOperands(i.opcode()) && !In(i, k).IsArray()) {
      return Invalid("operand ", k, " of ", Op(i), " must be an array, got ", Str(In(i, k)));
    }
    unbounded = unbounded || HasUnboundedDim(In(i, k));
  }
  // Unbounded sizes (`?`) follow XLA's dynamic-shape rules, not modelled here.
  if (unbounded) return std::nullopt;
  switch (OpcodeCategory(i.opcode())) {
    case OpCategory::kElementwise:
      return InferElementwise(i);
    case OpCategory::kDataMovement:
      return InferDataMovement(i);
    case OpCategory::kReduction:
      return InferReduction(i);
    case OpCategory::kLibrary:
      return InferLibrary(i);
    case OpCategory::kComposite:
      return InferComposite(i);
    case OpCategory::kControl:
      return InferControl(i);
    case OpCategory::kCollective:
      return InferCollective(i);
    case OpCategory::kOpaque:
      return InferOpaque(i);
    default:
      return std::nullopt;
  }
}

}  // namespace seam
