// A module compiled for a backend: the executable that runs it, and the
// fusion plan it was made from, kept for reports (what was stitched, the
// cost model's estimates beside measured times). It reads as a pointer to
// its executable.
#pragma once

#include <memory>

#include "seam/fusion/fusion_plan.h"

namespace seam::compiler {

template <typename Executable>
struct Compiled {
  fusion::FusionPlan plan;
  std::unique_ptr<Executable> executable;

  Executable* operator->() const { return executable.get(); }
  Executable& operator*() const { return *executable; }
};

}  // namespace seam::compiler
