// Elemental code generation: the statements computing one element of an
// instruction's value at a given index, recursively through its operands.
// Data movement (broadcast, reshape, transpose, slice, pad, concatenate,
// reverse, iota, dynamic-slice) becomes index arithmetic, elementwise ops
// become scalar code (their scalar expressions), and values held in memory (kernel
// inputs, outputs and scratch, tile buffers) become loads. Shared by every
// target: a renderer supplies the loops and asks for values.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "seam/codegen/kernel_ir.h"
#include "seam/codegen/vector_form.h"

namespace seam::codegen {

// An index into an array value: one C++ integer expression per dimension.
using Index = std::vector<std::string>;

// How a renderer names memory: buffer k of the kernel, and a tile buffer.
struct MemoryNames {
  // The pointer expression of buffer k (typed with its storage type).
  std::function<std::string(int)> buffer;
  // The tile buffer of a value, and the linear index its tile starts at.
  std::function<std::string(const Instruction*)> tile;
  std::function<std::string(const Instruction*)> tile_base;
};

class ElementalEmitter {
 public:
  // Statements are appended to `lines` at `indent`. `computed` are the
  // instructions this loop body computes; anything else is loaded.
  ElementalEmitter(const KernelIr& ir, MemoryNames names,
                   absl::flat_hash_set<const Instruction*> computed, std::vector<std::string>* lines,
                   int indent);

  // The name of a variable holding `v` at `index` (of v's shape).
  absl::StatusOr<std::string> Value(const Instruction* v, const Index& index);

  // A fresh integer variable holding `expr`.
  std::string IndexVar(const std::string& expr);
  // Takes back the index variables declared in the lines that nothing
  // after them reads (those Linear took whole).
  void DropUnusedIndices();
  // The row-major linear index of `index` in `dims`. Consecutive
  // dimensions whose indices Delinearize split from one linear index, over
  // the same extents, take that index whole (no division and
  // multiplication back per element).
  std::string Linear(const std::vector<int64_t>& dims, const Index& index) const;
  // The multi-index of a linear index over `dims`.
  Index Delinearize(const std::vector<int64_t>& dims, const std::string& linear);
  // Emits a raw statement.
  void Emit(const std::string& line);
  // How everything emitted so far meets the CPU's vectorizer; raw
  // statements add theirs with Note.
  VectorForm form() const { return form_; }
  void Note(VectorForm form) { form_ |= form; }
  // Calls the vector twins of exp and tanh (a vectorized loop whose code is
  // otherwise plain).
  void UseVectorTwins() { twins_ = true; }
  // bf16/f16 results keep float precision (seam_keep) instead of rounding:
  // a reducer's accumulator.
  void KeepHalfPrecision() { keep_half_ = true; }
  // Declarations that stay the same along the innermost loop, along which
  // the names `varying` vary (its variable, and what its text before this
  // code declares or assigns), go to `hoist` (`const <type> <name> = expr;`, a
  // load of `loaded` where one is given, else an index or arithmetic): the
  // name of a variable it declares for them before the loop, or nothing to
  // declare them here. A declaration that reads the loop's variable, or a
  // name declared or assigned in the loop, stays. (GCC 12 kept loads at
  // the row's index in the loop, with the arithmetic on them: a square
  // root and a division per vector of a batch norm's output.)
  using InvariantHoist = std::function<std::optional<std::string>(
      const Instruction* loaded, const std::string& type, const std::string& expr)>;
  void HoistInvariants(const std::vector<std::string>& varying, InvariantHoist hoist);
  // Makes `name` the value of `v` at `index` (loop-carried or argument values).
  void Bind(const Instruction* v, const Index& index, const std::string& name);
  // What to convert to v's storage type when storing value `name` of v: its
  // unrounded expression when it is a convert to bf16/f16, rounded on definition
  // (the store's conversion rounds the same way, so rounding twice is
  // wasted work), else `name`.
  std::string Storable(const std::string& name) const;

 private:
  absl::StatusOr<std::string> Compute(const Instruction* v, const Index& index);
  // Compute's two halves, defining the value `name` where they define one:
  // data movement reads its operand at another index; elementwise ops apply
  // their scalar expression to their operands' values.
  absl::StatusOr<std::string> ComputeMovement(const Instruction* v, const Index& index,
                                              const std::string& name);
  absl::StatusOr<std::string> ComputeElementwise(const Instruction* v, const Index& index,
                                                 const std::string& name);
  // Emits `const <v's compute type> name = expr;` and returns name.
  std::string Define(const Instruction* v, const std::string& name, const std::string& expr);
  // Emits `const type name = expr;` (`loaded` when it loads that value),
  // or has the hoist declare it before the loop; returns the name it has.
  std::string Declare(const std::string& type, const std::string& name, const std::string& expr,
                      const Instruction* loaded = nullptr);
  absl::StatusOr<std::string> Load(const Instruction* v, const Index& index);
  absl::StatusOr<Index> ReshapeIndex(const Instruction* v, const Index& index);
  std::string Fresh(const std::string& prefix);

  const KernelIr& ir_;
  MemoryNames names_;
  absl::flat_hash_set<const Instruction*> computed_;
  std::vector<std::string>* lines_;
  std::string indent_;
  absl::flat_hash_map<std::string, std::string> memo_;
  absl::flat_hash_map<std::string, std::string> unrounded_;  // by value name
  int next_ = 0;
  VectorForm form_ = VectorForm::kPlain;
  bool twins_ = false;
  bool keep_half_ = false;
  InvariantHoist hoist_;
  // What Delinearize split: the linear index, the extents, their indices.
  struct Split {
    std::string linear;
    std::vector<int64_t> dims;
    Index index;
  };
  std::vector<Split> splits_;
  // The index variables declared in the lines: name, line.
  std::vector<std::pair<std::string, size_t>> indices_;
  // What changes along the loop: its variable and the names declared or
  // assigned in it.
  absl::flat_hash_set<std::string> in_loop_;
};

// The C++ lambda computing a reduce's reducer on two accumulators (compute
// types; bf16/f16 accumulate in float, unrounded); `form`, when given, gets
// its body's vector form.
absl::StatusOr<std::string> ReducerLambda(const Instruction& reduce, const std::string& name,
                                          VectorForm* form = nullptr);
// The same for any computation of two scalars of type t into one (a
// reduce's, a scatter's or a reduce-window's to_apply).
absl::StatusOr<std::string> ScalarLambda(const Computation& fn, DType t, const std::string& name,
                                         VectorForm* form = nullptr);

// The statements (appended to `lines` at `indent`) computing `fn`, a
// computation of scalars into a scalar, on the compute values named
// `parameters`; returns the name of its result.
absl::StatusOr<std::string> ScalarFunctionBody(const Computation& fn,
                                               const std::vector<std::string>& parameters,
                                               std::vector<std::string>* lines, int indent,
                                               bool keep_half_precision = false,
                                               VectorForm* form = nullptr);

}  // namespace seam::codegen
