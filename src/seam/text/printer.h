// The HLO text printer. It writes one canonical dialect (no `%` sigils, no
// typed operands, attributes in table order then verbatim ones), so printing a
// parsed module and parsing it again reaches a fixpoint on the first print.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "seam/ir/module.h"

namespace seam {

std::string PrintInstruction(const Instruction& instruction);
std::string PrintComputation(const Computation& computation);
std::string PrintModule(const Module& module);
// Modules separated by `// -----` lines, as multi-module files hold them.
std::string PrintModules(const std::vector<std::unique_ptr<Module>>& modules);

}  // namespace seam
