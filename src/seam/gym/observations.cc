#include "seam/gym/observations.h"

#include "seam/fusion/cost_model.h"
#include "seam/fusion/op_class.h"
#include "seam/gym/cost_analysis.h"

namespace seam::gym {

std::vector<int64_t> OpcodeHistogram(const Module& module) {
  std::vector<int64_t> histogram(kOpcodeCount, 0);
  for (const auto& computation : module.computations()) {
    for (const auto& i : computation->instructions()) ++histogram[static_cast<int>(i->opcode())];
  }
  return histogram;
}

std::vector<double> GraphFeatures(const Module& module, const FeatureContext& context) {
  constexpr int kOpClasses = static_cast<int>(fusion::OpClass::kOpaque) + 1;
  std::vector<double> op_classes(kOpClasses, 0);
  for (const auto& computation : module.computations()) {
    for (const auto& i : computation->instructions()) {
      ++op_classes[static_cast<int>(fusion::ClassifyOp(*i))];
    }
  }
  double parameter_bytes = 0;
  double output_bytes = 0;
  if (const Computation* entry = module.entry(); entry != nullptr) {
    for (const Instruction* parameter : entry->parameters()) {
      if (parameter != nullptr) parameter_bytes += static_cast<double>(fusion::ValueBytes(parameter->shape()));
    }
    if (entry->root() != nullptr) output_bytes = static_cast<double>(fusion::ValueBytes(entry->root()->shape()));
  }
  ArithmeticCounts arithmetic = CountArithmetic(module);
  std::vector<double> features = {static_cast<double>(module.InstructionCount()),
                                  static_cast<double>(module.computations().size())};
  features.insert(features.end(), op_classes.begin(), op_classes.end());
  for (double value : {parameter_bytes, output_bytes, arithmetic.flops, arithmetic.transcendentals,
                       context.dram_bytes_after_stitch, static_cast<double>(context.last_pass_edits),
                       static_cast<double>(context.step)}) {
    features.push_back(value);
  }
  return features;
}

}  // namespace seam::gym
