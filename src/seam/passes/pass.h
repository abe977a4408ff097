// A graph pass: rewrites a module in place, preserving what it computes.
// Passes are listed in passes.def (the registry) and composed by pipeline
// specs such as `dce,cse,fixpoint(algsimp,dce)`.
#pragma once

#include <vector>
#include "absl/status/statusor.h"

#include "absl/strings/string_view.h"
#include "seam/ir/module.h"

namespace seam {

struct PassInfo;

class Pass {
 public:
  virtual ~Pass() = default;
  // The name used in pipeline specs: the pass's row in passes.def.
  absl::string_view name() const { return name_; }
  // True when the module changed. An error leaves the module valid but
  // possibly partly rewritten.
  virtual absl::StatusOr<bool> Run(Module& module) = 0;

 private:
  friend struct PassInfo;
  absl::string_view name_;
};

// A pass that rewrites each computation on its own. Run visits the module's
// computations in order (not those the pass itself adds) that hold one of
// the pass's trigger opcodes, if it names any.
class ComputationPass : public Pass {
 public:
  absl::StatusOr<bool> Run(Module& module) final;

 protected:
  // The opcodes that make a computation worth visiting; empty: all.
  virtual std::vector<Opcode> Triggers() const { return {}; }
  // Module-wide state (names, editors), made before the first visit of
  // each Run, and only when some computation is visited.
  virtual void Prepare(Module& /*module*/) {}
  virtual absl::StatusOr<bool> RunOnComputation(Computation& computation) = 0;
};

}  // namespace seam
