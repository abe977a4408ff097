// Shape inference for collectives and opaque ops: only what holds whatever
// the devices and the target. all-reduce, collective-broadcast and
// collective-permute return their operands' shapes on any number of
// devices (a tuple of them for several operands); all-gather, reduce-scatter
// and all-to-all change shape with the group size, which the interpreter
// checks where it runs them. A custom-call names its target.
#include <vector>

#include "seam/ir/shape_inference.h"
#include "seam/ir/shape_inference_util.h"
#include "seam/util/status_macros.h"

namespace seam::shape_inference_internal {
namespace {

Shape OperandShapes(const Instruction& i) {
  if (i.operand_count() == 1) return In(i, 0);
  std::vector<Shape> shapes;
  for (const Instruction* o : i.operands()) shapes.push_back(o->shape());
  return Shape::Tuple(std::move(shapes));
}

}  // namespace

Inferred InferCollective(const Instruction& i) {
  switch (i.opcode()) {
    case Opcode::kAllReduce: {
      if (i.operand_count() < 1) return Invalid(Op(i), " takes at least one operand, got none");
      for (int k = 0; k < i.operand_count(); ++k) {
        const Shape& x = In(i, k);
        if (!x.IsArray())
          return Invalid("operand ", k, " of ", Op(i), " must be an array, got ", Str(x));
        SEAM_RETURN_IF_ERROR(
            CheckReducer(i, i.attrs().to_apply, "to_apply", {x.dtype()}, {x.dtype()}).status());
      }
      return OperandShapes(i);
    }
    case Opcode::kCollectiveBroadcast:
      if (i.operand_count() < 1) return Invalid(Op(i), " takes at least one operand, got none");
      return OperandShapes(i);
    case Opcode::kCollectivePermute:
      if (i.operand_count() < 1) return Invalid(Op(i), " takes at least one operand, got none");
      // The in-place form (input, output, input and output offsets) writes
      // into its second operand.
      if (i.operand_count() == 4) return In(i, 1);
      if (i.operand_count() != 1) return std::nullopt;
      return In(i, 0);
    default:
      return std::nullopt;
  }
}

Inferred InferOpaque(const Instruction& i) {
  if (i.opcode() == Opcode::kCustomCall) {
    const std::optional<std::string>& target = i.attrs().custom_call_target;
    if (!target.has_value() || target->empty()) {
      return Invalid("'custom-call' needs a custom_call_target");
    }
  }
  return std::nullopt;
}

}  // namespace seam::shape_inference_internal
