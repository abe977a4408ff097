// A computation: a list of instructions forming a DAG with one root, and
// numbered parameters. Owned by a Module.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"

#include "seam/ir/instruction.h"
#include "seam/util/source_location.h"

namespace seam {

class Module;

class Computation {
 public:
  explicit Computation(std::string name) : name_(std::move(name)) {}
  Computation(const Computation&) = delete;
  Computation& operator=(const Computation&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  Module* parent() const { return parent_; }

  // Takes ownership; parameters are indexed by their number.
  Instruction* AddInstruction(std::unique_ptr<Instruction> instruction);
  // Removes an instruction that has no users and is not the root.
  void RemoveInstruction(Instruction* instruction);
  // Removes a set of instructions used by nothing outside the set, none of
  // them the root, in one sweep (removing one at a time is quadratic).
  void RemoveInstructions(const absl::flat_hash_set<Instruction*>& dead);

  // Instructions in the order they were added (text order after parsing).
  const std::vector<std::unique_ptr<Instruction>>& instructions() const {
    return instructions_;
  }
  int instruction_count() const {
    return static_cast<int>(instructions_.size());
  }
  // Operands before users; control predecessors before their successors.
  // Instructions unreachable from the root come too.
  std::vector<Instruction*> MakePostOrder() const;

  Instruction* root() const { return root_; }
  void set_root(Instruction* root) { root_ = root; }

  // parameter(i), or null when missing. Size is 1 + the largest number seen.
  const std::vector<Instruction*>& parameters() const { return parameters_; }
  int parameter_count() const { return static_cast<int>(parameters_.size()); }
  Instruction* parameter(int i) const { return parameters_[i]; }

  // Whether the text wrote `name (p: f32[]) -> f32[]` before the body.
  bool has_signature() const { return has_signature_; }
  void set_has_signature(bool has) { has_signature_ = has; }

  SourceLocation location() const { return location_; }
  void set_location(SourceLocation location) { location_ = location; }

 private:
  friend class Module;
  std::string name_;
  Module* parent_ = nullptr;
  std::vector<std::unique_ptr<Instruction>> instructions_;
  std::vector<Instruction*> parameters_;
  Instruction* root_ = nullptr;
  bool has_signature_ = false;
  SourceLocation location_;
};

// The op of a reducer that is one combiner (add, multiply, maximum, minimum,
// and, or: kCombiner in the opcode table) of its two distinct scalar
// parameters, all of one element type: `ROOT r = add(p0, p1)`. Reductions
// with such a reducer are reordered, split, vectorised and interpreted as
// that op; any other reducer runs as the computation it is.
std::optional<Opcode> AsBinaryReducer(const Computation& reducer);

}  // namespace seam
