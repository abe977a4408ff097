// One HLO instruction: an SSA value with an opcode, a shape, operands, users
// and attributes. Instructions are owned by their Computation.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "seam/ir/attributes.h"
#include "seam/ir/literal.h"
#include "seam/ir/opcode.h"
#include "seam/ir/shape.h"
#include "seam/util/source_location.h"

namespace seam {

class Computation;

class Instruction {
 public:
  Instruction(std::string name, Opcode opcode, Shape shape);
  Instruction(const Instruction&) = delete;
  Instruction& operator=(const Instruction&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  Opcode opcode() const { return opcode_; }
  const Shape& shape() const { return shape_; }
  Shape& mutable_shape() { return shape_; }
  Computation* parent() const { return parent_; }

  const std::vector<Instruction*>& operands() const { return operands_; }
  Instruction* operand(int i) const { return operands_[i]; }
  int operand_count() const { return static_cast<int>(operands_.size()); }
  // Users in the order they were added; a user appears once however many
  // times it uses this instruction.
  const std::vector<Instruction*>& users() const { return users_; }

  void AppendOperand(Instruction* operand);
  // Points operand `i` at `replacement`, keeping users lists exact.
  void ReplaceOperand(int i, Instruction* replacement);
  // Makes every user of this instruction use `replacement` instead.
  void ReplaceAllUsesWith(Instruction* replacement);
  // Drops all operands (before this instruction is removed).
  void DetachOperands();

  const Attributes& attrs() const { return attrs_; }
  Attributes& mutable_attrs() { return attrs_; }
  std::vector<Computation*> CalledComputations() const {
    return attrs_.CalledComputations();
  }

  // parameter(N): N.
  int64_t parameter_number() const { return parameter_number_; }
  void set_parameter_number(int64_t n) { parameter_number_ = n; }

  // constant(...): the value; null for other opcodes.
  const Literal* literal() const { return literal_.get(); }
  void set_literal(Literal literal);

  // Instructions that must run before this one without a data dependence.
  const std::vector<Instruction*>& control_predecessors() const {
    return control_predecessors_;
  }
  void AddControlPredecessor(Instruction* predecessor);
  // Instructions that name this one as a control predecessor.
  const std::vector<Instruction*>& control_successors() const { return control_successors_; }
  // Drops every control edge into and out of this instruction, handing its
  // predecessors to its successors so the order between them is kept.
  void DetachControlEdges();

  SourceLocation location() const { return location_; }
  void set_location(SourceLocation location) { location_ = location; }

  bool IsRoot() const;

 private:
  friend class Computation;
  void RemoveUser(Instruction* user);

  std::string name_;
  Opcode opcode_;
  Shape shape_;
  Computation* parent_ = nullptr;
  std::vector<Instruction*> operands_;
  std::vector<Instruction*> users_;
  std::vector<Instruction*> control_predecessors_;
  std::vector<Instruction*> control_successors_;
  Attributes attrs_;
  int64_t parameter_number_ = -1;
  std::unique_ptr<Literal> literal_;
  SourceLocation location_;
};

}  // namespace seam
