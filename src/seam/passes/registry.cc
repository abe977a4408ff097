#include "seam/passes/registry.h"

namespace seam {

#define SEAM_PASS(id, name, description) std::unique_ptr<Pass> Make##id##Pass();
#include "seam/passes/passes.def"
#undef SEAM_PASS

const std::vector<PassInfo>& RegisteredPasses() {
  static const auto* passes = new std::vector<PassInfo>{
#define SEAM_PASS(id, name, description) {name, description, &Make##id##Pass},
#include "seam/passes/passes.def"
#undef SEAM_PASS
  };
  return *passes;
}

const PassInfo* FindPass(absl::string_view name) {
  for (const PassInfo& info : RegisteredPasses()) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

}  // namespace seam
