#include "seam/ir/computation.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "seam/ir/module.h"
#include "seam/util/status_macros.h"

namespace seam {

Instruction* Computation::AddInstruction(
    std::unique_ptr<Instruction> instruction) {
  Instruction* added = instruction.get();
  added->parent_ = this;
  if (parent_ != nullptr) parent_->CountEdits(1);
  if (added->opcode() == Opcode::kParameter &&
      added->parameter_number() >= 0) {
    size_t n = static_cast<size_t>(added->parameter_number());
    if (parameters_.size() <= n) parameters_.resize(n + 1, nullptr);
    parameters_[n] = added;
  }
  instructions_.push_back(std::move(instruction));
  return added;
}

void Computation::RemoveInstruction(Instruction* instruction) {
  SEAM_CHECK(instruction->users().empty() && instruction != root_);
  instruction->DetachOperands();
  instruction->DetachControlEdges();
  for (Instruction*& param : parameters_) {
    if (param == instruction) param = nullptr;
  }
  auto it = std::find_if(instructions_.begin(), instructions_.end(),
                         [&](const auto& p) { return p.get() == instruction; });
  SEAM_CHECK(it != instructions_.end());
  instructions_.erase(it);
  if (parent_ != nullptr) parent_->CountEdits(1);
}

void Computation::RemoveInstructions(const absl::flat_hash_set<Instruction*>& dead) {
  for (Instruction* instruction : dead) {
    SEAM_CHECK(instruction != root_);
    instruction->DetachOperands();
    instruction->DetachControlEdges();
  }
  for (Instruction*& param : parameters_) {
    if (dead.contains(param)) param = nullptr;
  }
  std::erase_if(instructions_, [&](const std::unique_ptr<Instruction>& i) {
    if (!dead.contains(i.get())) return false;
    SEAM_CHECK(i->users().empty());
    return true;
  });
  if (parent_ != nullptr) parent_->CountEdits(static_cast<int64_t>(dead.size()));
}

std::vector<Instruction*> Computation::MakePostOrder() const {
  std::vector<Instruction*> order;
  order.reserve(instructions_.size());
  absl::flat_hash_set<const Instruction*> visited;
  visited.reserve(instructions_.size());
  // Iterative DFS: real graphs are deep enough to overflow the stack.
  std::vector<std::pair<Instruction*, size_t>> stack;
  auto visit = [&](Instruction* start) {
    if (!visited.insert(start).second) return;
    stack.push_back({start, 0});
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      size_t operand_count = node->operands().size();
      size_t total = operand_count + node->control_predecessors().size();
      if (next < total) {
        Instruction* dep = next < operand_count
                               ? node->operand(static_cast<int>(next))
                               : node->control_predecessors()[next - operand_count];
        ++next;
        if (visited.insert(dep).second) stack.push_back({dep, 0});
        continue;
      }
      order.push_back(node);
      stack.pop_back();
    }
  };
  for (const auto& instruction : instructions_) visit(instruction.get());
  return order;
}

std::optional<Opcode> AsBinaryReducer(const Computation& reducer) {
  const Instruction* root = reducer.root();
  if (root == nullptr || reducer.parameter_count() != 2 || root->operand_count() != 2 ||
      !IsCombiner(root->opcode())) {
    return std::nullopt;
  }
  const Instruction* a = root->operand(0);
  const Instruction* b = root->operand(1);
  if (a->opcode() != Opcode::kParameter || b->opcode() != Opcode::kParameter || a == b) {
    return std::nullopt;
  }
  // Scalars of the root's type: no hidden conversions.
  for (const Instruction* i : {root, a, b}) {
    if (!i->shape().IsArray() || i->shape().rank() != 0 ||
        i->shape().dtype() != root->shape().dtype()) {
      return std::nullopt;
    }
  }
  return root->opcode();
}

}  // namespace seam
