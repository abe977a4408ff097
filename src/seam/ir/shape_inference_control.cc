// Shape inference for parameters, constants, tuples, calls and control
// flow (while, conditional), tokens and the other control ops.
#include <vector>

#include "seam/ir/shape_inference.h"
#include "seam/ir/shape_inference_util.h"
#include "seam/util/status_macros.h"

namespace seam::shape_inference_internal {
namespace {

// call and fusion: the callee takes the operands and returns the result.
absl::StatusOr<Shape> CalleeResult(const Instruction& i, const std::optional<ComputationRef>& ref,
                                   absl::string_view attr) {
  SEAM_ASSIGN_OR_RETURN(const Computation* callee, Called(i, ref, attr));
  std::vector<Shape> args;
  for (const Instruction* operand : i.operands()) args.push_back(operand->shape());
  SEAM_RETURN_IF_ERROR(CheckParameters(*callee, args, attr));
  return callee->root()->shape();
}

Inferred InferGetTupleElement(const Instruction& i) {
  const Shape& t = In(i, 0);
  SEAM_ASSIGN_OR_RETURN(const int64_t* index, Require(i, i.attrs().index, "index"));
  if (!t.IsTuple()) return Invalid("'get-tuple-element' needs a tuple operand, got ", Str(t));
  if (*index < 0 || *index >= static_cast<int64_t>(t.tuple_shapes().size())) {
    return Invalid("index=", *index, " of 'get-tuple-element' is out of range for ", Str(t));
  }
  return t.tuple_shapes()[*index];
}

// The loop state is the operand, the body's parameter and result, and the
// condition's parameter.
Inferred InferWhile(const Instruction& i) {
  const Shape& state = In(i, 0);
  SEAM_ASSIGN_OR_RETURN(const Computation* condition, Called(i, i.attrs().condition, "condition"));
  SEAM_ASSIGN_OR_RETURN(const Computation* body, Called(i, i.attrs().body, "body"));
  SEAM_RETURN_IF_ERROR(CheckParameters(*condition, {state}, "condition"));
  SEAM_RETURN_IF_ERROR(CheckParameters(*body, {state}, "body"));
  if (!ShapesMatch(condition->root()->shape(), Shape::Scalar(DType::kPred))) {
    return Invalid("condition computation '", condition->name(),
                   "' of 'while' must return pred[], got ", Str(condition->root()->shape()));
  }
  if (!ShapesMatch(body->root()->shape(), state)) {
    return Invalid("body computation '", body->name(), "' of 'while' must return the loop state ",
                   Str(state), ", got ", Str(body->root()->shape()));
  }
  return state;
}

// conditional(index, operands...): branch b takes operand b + 1; every
// branch returns the result shape. A pred index picks true (0) or false (1).
Inferred InferConditional(const Instruction& i) {
  const Shape& index = In(i, 0);
  const Attributes& a = i.attrs();
  std::vector<Computation*> branches;
  if (a.branch_computations.has_value()) {
    branches = *a.branch_computations;
  } else if (a.true_computation.has_value() && a.false_computation.has_value()) {
    branches = {*a.true_computation, *a.false_computation};
  }
  if (branches.empty()) {
    return Invalid(
        "'conditional' requires branch_computations or true_computation and false_computation");
  }
  bool is_pred = index.IsArray() && index.dtype() == DType::kPred;
  if (!index.IsArray() || index.rank() != 0 || (!is_pred && index.dtype() != DType::kS32) ||
      (is_pred && branches.size() != 2)) {
    return Invalid(
        "the branch index of 'conditional' must be s32[], or pred[] with two branches, got ",
        Str(index));
  }
  if (i.operand_count() != static_cast<int>(branches.size()) + 1) {
    return Invalid("'conditional' with ", branches.size(), " branches takes ", branches.size() + 1,
                   " operands, got ", i.operand_count());
  }
  std::optional<Shape> result;
  for (size_t b = 0; b < branches.size(); ++b) {
    SEAM_ASSIGN_OR_RETURN(const Computation* branch, Called(i, branches[b], "branch_computations"));
    SEAM_RETURN_IF_ERROR(CheckParameters(*branch, {In(i, static_cast<int>(b) + 1)}, "branch"));
    if (!result.has_value()) result = branch->root()->shape();
    if (!ShapesMatch(branch->root()->shape(), *result)) {
      return Invalid("branches of 'conditional' must return the same shape, got ", Str(*result),
                     " and ", Str(branch->root()->shape()), " from '", branch->name(), "'");
    }
  }
  return result;
}

}  // namespace

Inferred InferControl(const Instruction& i) {
  switch (i.opcode()) {
    case Opcode::kParameter:
      return i.shape();  // the declaration is the definition
    case Opcode::kConstant:
      if (i.literal() == nullptr) return Invalid("'constant' has no value");
      return i.literal()->shape();
    case Opcode::kTuple: {
      std::vector<Shape> elements;
      for (const Instruction* operand : i.operands()) elements.push_back(operand->shape());
      return Shape::Tuple(std::move(elements));
    }
    case Opcode::kGetTupleElement:
      return InferGetTupleElement(i);
    case Opcode::kCall:
      return CalleeResult(i, i.attrs().to_apply, "to_apply");
    case Opcode::kFusion:
      return CalleeResult(i, i.attrs().calls, "calls");
    case Opcode::kWhile:
      return InferWhile(i);
    case Opcode::kConditional:
      return InferConditional(i);
    case Opcode::kOptimizationBarrier:
    case Opcode::kDomain:
      return In(i, 0);
    case Opcode::kAfterAll:
      for (const Instruction* operand : i.operands()) {
        if (!operand->shape().IsToken())
          return Invalid("operands of 'after-all' must be tokens, got ", Str(operand->shape()));
      }
      return Shape::Token();
    case Opcode::kAddDependency:
      if (!In(i, 1).IsToken())
        return Invalid("the second operand of 'add-dependency' must be a token, got ",
                       Str(In(i, 1)));
      return In(i, 0);
    case Opcode::kPartitionId:
    case Opcode::kReplicaId:
      return Shape::Scalar(DType::kU32);
    case Opcode::kGetDimensionSize: {
      SEAM_ASSIGN_OR_RETURN(const IntList* dims, Require(i, i.attrs().dimensions, "dimensions"));
      if (!In(i, 0).IsArray() || dims->size() != 1) {
        return Invalid("'get-dimension-size' needs an array operand and one dimension, got ",
                       Str(In(i, 0)), " and dimensions=", List(*dims));
      }
      SEAM_RETURN_IF_ERROR(CheckDimList(i, "dimensions", *dims, In(i, 0).rank()));
      return Shape::Scalar(DType::kS32);
    }
    case Opcode::kCopyStart: {
      // (destination, source, context)
      const Shape& x = In(i, 0);
      return Shape::Tuple({x, x, Shape::Scalar(DType::kU32)});
    }
    case Opcode::kCopyDone: {
      const Shape& started = In(i, 0);
      if (!started.IsTuple() || started.tuple_shapes().size() != 3 ||
          !ShapesMatch(started.tuple_shapes()[0], started.tuple_shapes()[1])) {
        return Invalid("'copy-done' takes a copy-start's (destination, source, context), got ",
                       Str(started));
      }
      return started.tuple_shapes()[0];
    }
    default:
      // async-*, set-dimension-size: results wrap contexts or dynamic sizes
      // Seam does not model.
      return std::nullopt;
  }
}

}  // namespace seam::shape_inference_internal
