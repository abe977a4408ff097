// Modules written as HLO text in a test, and their entry's instructions by
// name.
#pragma once

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "seam/text/parser.h"

namespace seam::testing {

// The module `text` holds; null (and a failed expectation) if it does not
// parse and verify.
inline std::unique_ptr<Module> ParseModule(const std::string& text) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status() << "\n" << text;
  return module.ok() ? std::move(*module) : nullptr;
}

// The entry computation's instruction named `name`, or null.
inline const Instruction* FindInstruction(const Module& module, const std::string& name) {
  for (const auto& i : module.entry()->instructions()) {
    if (i->name() == name) return i.get();
  }
  return nullptr;
}

}  // namespace seam::testing
