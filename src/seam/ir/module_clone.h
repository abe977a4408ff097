// An exact copy of a module: same names, attributes, layouts and order, so
// that printing the copy prints the original. The gym forks its states with
// it; passes never see the difference.
#pragma once

#include <memory>

#include "seam/ir/module.h"

namespace seam {

std::unique_ptr<Module> CloneModule(const Module& original);

}  // namespace seam
