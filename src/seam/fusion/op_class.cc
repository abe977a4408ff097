#include "seam/fusion/op_class.h"

#include <algorithm>

#include "seam/ir/computation.h"

namespace seam::fusion {
namespace {

bool IsFreeOpcode(Opcode op) {
  switch (op) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kTuple:
    case Opcode::kGetTupleElement:
    case Opcode::kAfterAll:
    case Opcode::kAddDependency:
    case Opcode::kPartitionId:
    case Opcode::kReplicaId:
    case Opcode::kOptimizationBarrier:
    case Opcode::kDomain:
    case Opcode::kGetDimensionSize:
      return true;
    default:
      return false;
  }
}

// Data movement the stitched kernels compute by index arithmetic.
bool IsStitchableMovement(Opcode op) {
  switch (op) {
    case Opcode::kReshape:
    case Opcode::kBitcast:
    case Opcode::kTranspose:
    case Opcode::kSlice:
    case Opcode::kConcatenate:
    case Opcode::kPad:
    case Opcode::kReverse:
    case Opcode::kCopy:
    case Opcode::kIota:
    case Opcode::kDynamicSlice:
      return true;
    default:
      return false;
  }
}

// Static arrays of types kernels compute with: complex and sub-byte values
// stay with the op kernels and the interpreter, so the kernel around them
// is still generated.
bool HasKernelArrays(const Instruction& i) {
  auto kernel_array = [](const Shape& s) {
    return s.IsArray() && !s.HasDynamicDims() && IsKernelType(s.dtype());
  };
  if (!kernel_array(i.shape())) return false;
  return std::all_of(i.operands().begin(), i.operands().end(),
                     [&](const Instruction* o) { return kernel_array(o->shape()); });
}

// Whether every operand has the result's dimensions: what elementwise
// means to a kernel, which reads its operands at the result's index. A
// bitcast-convert between types of different widths (u32[2,2] -> u64[2])
// is elementwise in HLO's sense but not in this one.
bool IndexedLikeItsResult(const Instruction& i) {
  for (const Instruction* operand : i.operands()) {
    if (operand->shape().rank() != 0 && operand->shape().dims() != i.shape().dims()) return false;
  }
  return true;
}

OpClass ClassifyReduce(const Instruction& reduce) {
  // Variadic reduces (argmax...) are left to the executor for now.
  if (reduce.operand_count() != 2 || !HasKernelArrays(reduce)) return OpClass::kStandalone;
  // So are reducers other than the combiners (add, multiply, max, min, and,
  // or): they need not be associative or commutative (subtract), and kernels
  // split a reduction and fold its parts in another order than the
  // interpreter's, from the init value through the reduced elements in
  // row-major order, which the executor keeps.
  if (!AsBinaryReducer(**reduce.attrs().to_apply)) return OpClass::kStandalone;
  const Shape& in = reduce.operand(0)->shape();
  const IntList dims = SortedReducedDims(reduce);
  // Size-1 dimensions are neither kept nor reduced in any way that matters.
  std::vector<bool> reduced(in.rank(), false);
  for (int64_t d : dims) reduced[d] = true;
  int first_reduced = -1, last_kept = -1, reduced_count = 0;
  for (int d = 0; d < in.rank(); ++d) {
    if (in.dim(d) == 1) continue;
    if (reduced[d]) {
      ++reduced_count;
      if (first_reduced < 0) first_reduced = d;
    } else {
      last_kept = d;
    }
  }
  if (reduced_count == 0) return OpClass::kRowReduction;  // a copy, in effect
  if (last_kept < 0) return OpClass::kFullReduction;
  return last_kept < first_reduced ? OpClass::kRowReduction : OpClass::kColumnReduction;
}

}  // namespace

absl::string_view OpClassName(OpClass c) {
  switch (c) {
    case OpClass::kFree: return "free";
    case OpClass::kLightElementwise: return "elementwise";
    case OpClass::kExpensiveElementwise: return "expensive-elementwise";
    case OpClass::kBroadcast: return "broadcast";
    case OpClass::kDataMovement: return "data-movement";
    case OpClass::kRowReduction: return "row-reduction";
    case OpClass::kColumnReduction: return "column-reduction";
    case OpClass::kFullReduction: return "full-reduction";
    case OpClass::kStandalone: return "standalone";
    case OpClass::kLibrary: return "library";
    case OpClass::kOpaque: return "opaque";
  }
  return "?";
}

OpClass ClassifyOp(const Instruction& i) {
  Opcode op = i.opcode();
  if (IsFreeOpcode(op)) return OpClass::kFree;
  switch (OpcodeCategory(op)) {
    case OpCategory::kElementwise:
      if (op == Opcode::kMap || op == Opcode::kRngBitGenerator || !HasKernelArrays(i) ||
          !IndexedLikeItsResult(i)) {
        return OpClass::kStandalone;
      }
      return IsExpensive(op) ? OpClass::kExpensiveElementwise : OpClass::kLightElementwise;
    case OpCategory::kDataMovement:
      if (!HasKernelArrays(i)) return OpClass::kStandalone;
      if (op == Opcode::kBroadcast) return OpClass::kBroadcast;
      return IsStitchableMovement(op) ? OpClass::kDataMovement : OpClass::kStandalone;
    case OpCategory::kReduction:
      return op == Opcode::kReduce ? ClassifyReduce(i) : OpClass::kStandalone;
    case OpCategory::kLibrary:
      return op == Opcode::kSort || op == Opcode::kTopK ? OpClass::kStandalone : OpClass::kLibrary;
    case OpCategory::kComposite:
      return OpClass::kStandalone;
    case OpCategory::kControl:
    case OpCategory::kCollective:
    case OpCategory::kOpaque:
      return OpClass::kOpaque;
  }
  return OpClass::kOpaque;
}

bool IsFusible(OpClass c) {
  switch (c) {
    case OpClass::kLightElementwise:
    case OpClass::kExpensiveElementwise:
    case OpClass::kBroadcast:
    case OpClass::kDataMovement:
    case OpClass::kRowReduction:
    case OpClass::kColumnReduction:
    case OpClass::kFullReduction:
      return true;
    default:
      return false;
  }
}

ReductionShape GetReductionShape(const Instruction& reduce) {
  const Shape& in = reduce.operand(0)->shape();
  IntList dims = reduce.attrs().dimensions.value_or(IntList{});
  ReductionShape s;
  std::vector<bool> reduced(in.rank(), false);
  for (int64_t d : dims) reduced[d] = true;
  int first_reduced = in.rank();
  for (int d = 0; d < in.rank(); ++d) {
    if (reduced[d]) {
      s.row_length *= in.dim(d);
      first_reduced = std::min(first_reduced, d);
    } else {
      s.rows *= in.dim(d);
      if (d < first_reduced) s.outer *= in.dim(d);
    }
  }
  return s;
}

bool ReusesOperandElements(const Instruction& op, int k) {
  switch (op.opcode()) {
    case Opcode::kBroadcast:
      return op.shape().ElementCount() != op.operand(0)->shape().ElementCount();
    case Opcode::kReduce:
      return k >= op.operand_count() / 2;  // the init values
    case Opcode::kPad:
      return k == 1;
    case Opcode::kDynamicSlice:
      return k >= 1;  // the start indices
    default:
      break;
  }
  // A rank-0 operand of a shaped elementwise op (clamp bounds, select's
  // predicate) applies to every element.
  return IsElementwise(op.opcode()) && op.operand(k)->shape().rank() == 0 &&
         op.shape().IsArray() && op.shape().rank() > 0;
}

std::optional<Opcode> ReduceCombiner(const Instruction& reduce) {
  const Computation* reducer = reduce.attrs().to_apply.value_or(nullptr);
  if (reducer == nullptr) return std::nullopt;
  return AsBinaryReducer(*reducer);
}

IntList SortedReducedDims(const Instruction& reduce) {
  IntList dims = reduce.attrs().dimensions.value_or(IntList{});
  std::sort(dims.begin(), dims.end());
  return dims;
}

}  // namespace seam::fusion
