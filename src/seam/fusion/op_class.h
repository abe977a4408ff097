// What each instruction is to the fusion planner, derived from the opcode
// table (category and flags) and, for reductions, from which dimensions they
// reduce in the row-major layout that layout-normalization guarantees.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/strings/string_view.h"
#include "seam/ir/instruction.h"

namespace seam::fusion {

enum class OpClass : uint8_t {
  kFree,                  // parameters, constants, tuples: no kernel, no data moved
  kLightElementwise,      // cheap per element: add, compare, select, convert...
  kExpensiveElementwise,  // transcendental or division: not worth recomputing
  kBroadcast,             // one operand element feeds many result elements
  kDataMovement,          // re-indexes: reshape, transpose, slice, concat, pad...
  kRowReduction,          // reduces the minor-most dimensions: contiguous rows
  kColumnReduction,       // reduces a dimension above a kept one: strided
  kFullReduction,         // reduces every dimension to a scalar
  kStandalone,            // memory-intensive but not stitched: gather, scatter, sort...
  kLibrary,               // compute-intensive: dot, convolution, fft...
  kOpaque,                // control flow, custom-calls, I/O: run by the executor
};

absl::string_view OpClassName(OpClass c);

OpClass ClassifyOp(const Instruction& i);

// Whether the planners may put the op in a stitched kernel.
bool IsFusible(OpClass c);
inline bool IsReduction(OpClass c) {
  return c == OpClass::kRowReduction || c == OpClass::kColumnReduction ||
         c == OpClass::kFullReduction;
}
inline bool IsElementwiseClass(OpClass c) {
  return c == OpClass::kLightElementwise || c == OpClass::kExpensiveElementwise;
}

// A reduce seen as a matrix in row-major order: `rows` independent outputs,
// each folding `row_length` elements. For a row reduction the folded
// elements are contiguous; for a column reduction they are `rows` apart
// (rows = kept elements), and for reductions mixing kept and reduced
// dimensions, `outer` counts the kept blocks above the reduced ones.
struct ReductionShape {
  int64_t rows = 1;        // output elements
  int64_t row_length = 1;  // input elements folded into each output
  int64_t outer = 1;       // column reductions: kept elements above the reduced dims
};
ReductionShape GetReductionShape(const Instruction& reduce);

// A reduce's reducer as the binary op it is (add, max...), if it is one.
std::optional<Opcode> ReduceCombiner(const Instruction& reduce);

// The dimensions a reduce folds, in increasing order.
IntList SortedReducedDims(const Instruction& reduce);

// Whether an element of the op's result reads its operand `k` at more than
// one result element (broadcast, a reduce's init, pad's padding value...):
// the element-level one-to-many dependence AStitch plans around.
bool ReusesOperandElements(const Instruction& op, int k);

}  // namespace seam::fusion
