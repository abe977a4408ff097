#include "seam/ir/module_clone.h"

#include <utility>

#include "absl/container/flat_hash_map.h"

namespace seam {
namespace {

// Copies one instruction's own data; operands and control edges are wired
// once every instruction of the computation exists.
std::unique_ptr<Instruction> CopyInstruction(const Instruction& original) {
  auto copy = std::make_unique<Instruction>(original.name(), original.opcode(), original.shape());
  copy->mutable_attrs() = original.attrs();
  copy->set_parameter_number(original.parameter_number());
  if (original.literal() != nullptr) copy->set_literal(*original.literal());
  copy->set_location(original.location());
  return copy;
}

}  // namespace

std::unique_ptr<Module> CloneModule(const Module& original) {
  auto module = std::make_unique<Module>(original.name());
  module->mutable_attributes() = original.attributes();
  module->mutable_debug_tables() = original.debug_tables();
  absl::flat_hash_map<const Computation*, Computation*> computations;
  absl::flat_hash_map<const Instruction*, Instruction*> instructions;
  for (const auto& source : original.computations()) {
    auto owned = std::make_unique<Computation>(source->name());
    owned->set_has_signature(source->has_signature());
    owned->set_location(source->location());
    Computation* copy = module->AddComputation(std::move(owned));
    computations[source.get()] = copy;
    // Text order is kept, which is also the order parameters were added in.
    for (const auto& i : source->instructions()) {
      instructions[i.get()] = copy->AddInstruction(CopyInstruction(*i));
    }
    for (const auto& i : source->instructions()) {
      Instruction* clone = instructions.at(i.get());
      for (const Instruction* operand : i->operands()) clone->AppendOperand(instructions.at(operand));
      for (const Instruction* predecessor : i->control_predecessors()) {
        clone->AddControlPredecessor(instructions.at(predecessor));
      }
    }
    if (source->root() != nullptr) copy->set_root(instructions.at(source->root()));
  }
  // Called computations may come later in text order: remap after all exist.
  for (const auto& computation : module->computations()) {
    for (const auto& i : computation->instructions()) {
      i->mutable_attrs().MapCalledComputations([&](Computation* called) {
        auto it = computations.find(called);
        return it == computations.end() ? called : it->second;
      });
    }
  }
  if (original.entry() != nullptr) module->set_entry(computations.at(original.entry()));
  module->CountEdits(original.edit_count() - module->edit_count());
  return module;
}

}  // namespace seam
