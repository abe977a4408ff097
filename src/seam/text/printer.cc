#include "seam/text/printer.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "seam/text/attribute_text.h"
#include "seam/text/literal_text.h"

namespace seam {
namespace {

std::string PrintSignature(const Computation& computation) {
  std::vector<std::string> params;
  for (const Instruction* param : computation.parameters()) {
    if (param == nullptr) continue;
    params.push_back(absl::StrCat(param->name(), ": ", param->shape().ToString()));
  }
  return absl::StrCat(" (", absl::StrJoin(params, ", "), ") -> ",
                      computation.root()->shape().ToString());
}

}  // namespace

std::string PrintInstruction(const Instruction& instruction) {
  std::string out;
  if (instruction.IsRoot()) out += "ROOT ";
  absl::StrAppend(&out, instruction.name(), " = ", instruction.shape().ToString(), " ",
                  OpcodeName(instruction.opcode()), "(");
  if (instruction.opcode() == Opcode::kParameter) {
    absl::StrAppend(&out, instruction.parameter_number());
  } else if (instruction.literal() != nullptr) {
    out += PrintLiteral(*instruction.literal());
  } else {
    out += absl::StrJoin(instruction.operands(), ", ",
                         [](std::string* s, const Instruction* operand) {
                           s->append(operand->name());
                         });
  }
  out += ")";
  PrintTypedAttributes(instruction.attrs(), out);
  if (!instruction.control_predecessors().empty()) {
    absl::StrAppend(&out, ", control-predecessors={",
                    absl::StrJoin(instruction.control_predecessors(), ", ",
                                  [](std::string* s, const Instruction* p) {
                                    s->append(p->name());
                                  }),
                    "}");
  }
  for (const VerbatimAttribute& attr : instruction.attrs().verbatim) {
    absl::StrAppend(&out, ", ", attr.name, "=", attr.value);
  }
  return out;
}

std::string PrintComputation(const Computation& computation) {
  std::string out;
  if (computation.parent() != nullptr && computation.parent()->entry() == &computation) {
    out += "ENTRY ";
  }
  out += computation.name();
  if (computation.has_signature()) out += PrintSignature(computation);
  out += " {\n";
  for (const Instruction* instruction : computation.MakePostOrder()) {
    absl::StrAppend(&out, "  ", PrintInstruction(*instruction), "\n");
  }
  return out + "}\n";
}

std::string PrintModule(const Module& module) {
  std::string out = absl::StrCat("HloModule ", module.name());
  for (const VerbatimAttribute& attr : module.attributes()) {
    absl::StrAppend(&out, ", ", attr.name, "=", attr.value);
  }
  out += "\n";
  for (const DebugTable& table : module.debug_tables()) {
    absl::StrAppend(&out, "\n", table.name, "\n");
    for (const auto& [id, value] : table.rows) absl::StrAppend(&out, id, " ", value, "\n");
  }
  for (const auto& computation : module.computations()) {
    absl::StrAppend(&out, "\n", PrintComputation(*computation));
  }
  return out;
}

std::string PrintModules(const std::vector<std::unique_ptr<Module>>& modules) {
  return absl::StrJoin(modules, "\n// -----\n\n",
                       [](std::string* s, const std::unique_ptr<Module>& module) {
                         s->append(PrintModule(*module));
                       });
}

}  // namespace seam
