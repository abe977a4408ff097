// Creating and replacing instructions in a module (passes, expanders and
// tests build HLO with it): new instructions get names unique in the module
// and the shapes their operands imply.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "seam/ir/computation.h"
#include "seam/ir/module.h"

namespace seam {

// Hands out instruction names not yet used anywhere in a module: `base.N`.
class NameUniquer {
 public:
  explicit NameUniquer(const Module& module);
  std::string Make(absl::string_view base);

 private:
  absl::flat_hash_set<std::string> used_;
  absl::flat_hash_map<std::string, int64_t> next_suffix_;
};

// Adds instructions to one computation.
class HloBuilder {
 public:
  HloBuilder(Computation& computation, NameUniquer& names)
      : computation_(computation), names_(names) {}

  Computation& computation() { return computation_; }

  // The general form: the caller supplies the shape.
  Instruction* Add(Opcode opcode, Shape shape, std::vector<Instruction*> operands,
                   Attributes attrs = {});
  // A copy of `original` (opcode, shape, attributes, literal) on new operands.
  Instruction* Clone(const Instruction& original, std::vector<Instruction*> operands);

  Instruction* Constant(Literal value);
  // A scalar constant of type `type` holding `value` (rounded to the type).
  Instruction* ScalarConstant(DType type, double value);
  // A scalar constant broadcast to `shape`'s dimensions.
  Instruction* Splat(const Shape& shape, double value);

  // Elementwise: the shape of the first operand (pred for compare).
  Instruction* Unary(Opcode opcode, Instruction* x);
  Instruction* Binary(Opcode opcode, Instruction* a, Instruction* b);
  Instruction* Compare(Instruction* a, Instruction* b, ComparisonDirection direction);
  Instruction* Select(Instruction* pred, Instruction* on_true, Instruction* on_false);
  Instruction* Convert(Instruction* x, DType type);

  Instruction* Broadcast(Instruction* x, std::vector<int64_t> out_dims, IntList dimensions);
  Instruction* Reshape(Instruction* x, std::vector<int64_t> dims);
  Instruction* Transpose(Instruction* x, IntList permutation);
  Instruction* Slice(Instruction* x, SliceRanges ranges);
  Instruction* Concatenate(std::vector<Instruction*> parts, int64_t dimension);
  Instruction* GetTupleElement(Instruction* tuple, int64_t index);
  Instruction* Tuple(std::vector<Instruction*> elements);
  // reduce(x, init) over `dimensions` with the scalar computation `reducer`.
  Instruction* Reduce(Instruction* x, Instruction* init, IntList dimensions, Computation* reducer);

 private:
  Computation& computation_;
  NameUniquer& names_;
};

// Makes every use of `old` (and the root, if it is) use `replacement`, then
// removes `old`. The shapes must agree up to layout.
void ReplaceInstruction(Instruction* old, Instruction* replacement);

// Gives `replacement` the control edges of `old` (what must run before it
// and what must run after it), so ordering is kept when it takes old's place.
void CopyControlEdges(const Instruction* old, Instruction* replacement);

// The shape `shape` with dimensions `dims` and no layout.
Shape WithDims(const Shape& shape, std::vector<int64_t> dims);

// `x` with its size-1 dimensions not in `keep` dropped and the kept ones put
// in the order `keep` lists them (reshape then transpose, each only if
// needed). Every dimension of x not in `keep` must have size 1.
Instruction* KeepDims(HloBuilder& b, Instruction* x, const std::vector<int64_t>& keep);

// Whether `instruction` may be removed when unused (no side effect) and
// duplicated or merged (CSE) without changing the program.
bool IsRemovableWhenDead(const Instruction& instruction);

}  // namespace seam
