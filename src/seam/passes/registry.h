// Looks passes up by name. The list itself is passes.def.
#pragma once

#include <memory>
#include <vector>

#include "absl/strings/string_view.h"
#include "seam/passes/pass.h"

namespace seam {

struct PassInfo {
  absl::string_view name;
  absl::string_view description;
  std::unique_ptr<Pass> (*make)();

  // A new instance of the pass, named.
  std::unique_ptr<Pass> Create() const {
    std::unique_ptr<Pass> pass = make();
    pass->name_ = name;
    return pass;
  }
};

// Every registered pass, in passes.def order.
const std::vector<PassInfo>& RegisteredPasses();
// The pass called `name`, or null.
const PassInfo* FindPass(absl::string_view name);

}  // namespace seam
