#include "seam/ir/instruction.h"

#include <algorithm>

#include "seam/ir/computation.h"
#include "seam/ir/module.h"
#include "seam/util/status_macros.h"

namespace seam {

Instruction::Instruction(std::string name, Opcode opcode, Shape shape)
    : name_(std::move(name)), opcode_(opcode), shape_(std::move(shape)) {}

void Instruction::AppendOperand(Instruction* operand) {
  SEAM_CHECK(operand != nullptr);
  operands_.push_back(operand);
  auto& users = operand->users_;
  if (std::find(users.begin(), users.end(), this) == users.end()) {
    users.push_back(this);
  }
}

void Instruction::RemoveUser(Instruction* user) {
  if (std::find(user->operands_.begin(), user->operands_.end(), this) !=
      user->operands_.end()) {
    return;  // still used through another operand slot
  }
  users_.erase(std::remove(users_.begin(), users_.end(), user), users_.end());
}

void Instruction::ReplaceOperand(int i, Instruction* replacement) {
  SEAM_CHECK(i >= 0 && i < operand_count() && replacement != nullptr);
  Instruction* old = operands_[i];
  if (old == replacement) return;
  operands_[i] = replacement;
  old->RemoveUser(this);
  auto& users = replacement->users_;
  if (std::find(users.begin(), users.end(), this) == users.end()) {
    users.push_back(this);
  }
}

void Instruction::ReplaceAllUsesWith(Instruction* replacement) {
  SEAM_CHECK(replacement != this);
  std::vector<Instruction*> users = users_;
  for (Instruction* user : users) {
    for (int i = 0; i < user->operand_count(); ++i) {
      if (user->operands_[i] == this) user->ReplaceOperand(i, replacement);
    }
  }
  if (IsRoot()) parent_->set_root(replacement);
  if (parent_ != nullptr && parent_->parent() != nullptr) parent_->parent()->CountEdits(1);
}

void Instruction::DetachOperands() {
  std::vector<Instruction*> operands = std::move(operands_);
  operands_.clear();
  for (Instruction* operand : operands) operand->RemoveUser(this);
}

void Instruction::set_literal(Literal literal) {
  literal_ = std::make_unique<Literal>(std::move(literal));
}

void Instruction::AddControlPredecessor(Instruction* predecessor) {
  if (std::find(control_predecessors_.begin(), control_predecessors_.end(), predecessor) !=
      control_predecessors_.end()) {
    return;
  }
  control_predecessors_.push_back(predecessor);
  predecessor->control_successors_.push_back(this);
}

void Instruction::DetachControlEdges() {
  for (Instruction* successor : control_successors_) {
    std::erase(successor->control_predecessors_, this);
    for (Instruction* predecessor : control_predecessors_) {
      if (predecessor != successor) successor->AddControlPredecessor(predecessor);
    }
  }
  for (Instruction* predecessor : control_predecessors_) {
    std::erase(predecessor->control_successors_, this);
  }
  control_predecessors_.clear();
  control_successors_.clear();
}

bool Instruction::IsRoot() const {
  return parent_ != nullptr && parent_->root() == this;
}

}  // namespace seam
