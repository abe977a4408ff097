// How an HLO convolution is stated as one of the three convolutions oneDNN
// knows, in the roles of a forward convolution (source, weights,
// destination):
//   - forward: the HLO window as it is (input, kernel -> output);
//   - data gradient: an input-dilated window (a strided convolution's data
//     gradient) is the backward-data pass of the forward convolution whose
//     stride is that dilation, the kernel read flipped;
//   - weight gradient: batch groups, or a window larger than what it
//     produces, is the backward-weights pass of the forward convolution
//     whose stride is the HLO window dilation and whose dilation is the HLO
//     stride (the image batch is the contracted dimension).
// Each role is a plain array over an HLO operand, its dimensions in
// oneDNN's order with the strides they have in the operand.
#pragma once

#include <oneapi/dnnl/dnnl.h>

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "seam/ir/instruction.h"
#include "seam/runtime/onednn.h"

namespace seam::runtime::onednn_conv {

enum class Form { kForward, kBackwardData, kBackwardWeights };

// The roles of a forward convolution, by which oneDNN names the arrays of
// all three forms.
enum Role { kSource = 0, kWeights = 1, kDestination = 2 };

// The HLO operands a role can be.
enum class Operand { kInput, kKernel, kOutput };

// An HLO convolution as oneDNN states it.
struct Statement {
  Form form;
  // The arrays by role, each with the strides it has in its HLO operand.
  std::array<DnnlArray, 3> arrays;
  std::array<Operand, 3> operands;
  std::vector<int64_t> strides, dilates, pad_low, pad_high;
  std::vector<bool> flip;  // spatial dimensions of the kernel read reversed
  bool depthwise = false;  // one input feature per group
};

// The execution argument (DNNL_ARG_*) of each role, by form.
int Argument(Form form, Role role);
// The role the result is written in; the other two are read.
Role ResultRole(Form form);
const char* FormName(Form form);

// The oneDNN statement of `conv`; none where it has no oneDNN form: types
// other than f32 (or bf16 operands with a bf16 or f32 result), other than
// 1-3 spatial dimensions, strides with input dilation, negative padding.
std::optional<Statement> State(const Instruction& conv);

// A key that tells statements apart (for caching their primitives).
std::string StatementKey(const Statement& st);

}  // namespace seam::runtime::onednn_conv
