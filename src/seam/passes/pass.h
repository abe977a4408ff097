// A graph pass: rewrites a module in place, preserving what it computes.
// Passes are listed in passes.def (the registry) and composed by pipeline
// specs such as `dce,cse,fixpoint(algsimp,dce)`.
#pragma once

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "seam/ir/module.h"

namespace seam {

class Pass {
 public:
  virtual ~Pass() = default;
  // The name used in pipeline specs, as in passes.def.
  virtual absl::string_view name() const = 0;
  // True when the module changed. An error leaves the module valid but
  // possibly partly rewritten.
  virtual absl::StatusOr<bool> Run(Module& module) = 0;
};

}  // namespace seam
