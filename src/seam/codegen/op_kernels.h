// Generated CPU code for single instructions that no stitched kernel holds
// and no library serves: gather, scatter (its update computation inlined),
// dynamic-update-slice, reduce-window, sort and rng-bit-generator. Each becomes
// one function with the CPU kernel ABI whose buffers are the operands in
// order, then the result's arrays (the result, or its tuple elements).
// All shapes are static, so loop bounds and strides are constants.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "seam/ir/instruction.h"

namespace seam::codegen {

// The function `name` computing `op`, or why generated code does not.
absl::StatusOr<std::string> EmitCpuOpKernel(const Instruction& op, const std::string& name);

// The operand whose memory `op`'s result may take over when nothing else
// needs it (its output buffer is then that operand's, and the kernel
// updates it in place), or -1.
int InPlaceOperand(const Instruction& op);

}  // namespace seam::codegen
