// Computing the gym's observations of a module (the gym's spaces name them).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "seam/ir/module.h"

namespace seam::gym {

// opcode_histogram: int64 counts; features: doubles; hlo_text: a string.
using Observation = std::variant<std::vector<int64_t>, std::vector<double>, std::string>;

// Instructions per opcode over every computation, in the opcode table's order.
std::vector<int64_t> OpcodeHistogram(const Module& module);

// What the features need beyond the module itself.
struct FeatureContext {
  int64_t last_pass_edits = 0;  // instructions the last step added, removed or replaced
  int64_t step = 0;
  double dram_bytes_after_stitch = 0;  // the cost model's estimate
};

// The graph summary, FeatureNames() in order.
std::vector<double> GraphFeatures(const Module& module, const FeatureContext& context);

}  // namespace seam::gym
