// The custom-call targets the interpreter knows, one table row each; any
// other target is an error naming it. Handlers documented here:
// - Sharding, SPMDFullToShardShape, SPMDShardToFullShape, MoveToHost,
//   MoveToDevice, AwsNeuronTransferWithStaticRing: identity (placement or
//   transfer annotations, meaningless on one device).
// - AwsNeuronGelu: x * Phi(x) with Phi the standard normal CDF (exact GELU).
// - AwsNeuronGeluApprxTanh: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
// - AwsNeuronGeluBackward: d/dx of exact GELU, Phi(x) + x phi(x) (the caller
//   multiplies by the incoming gradient).
#include <cmath>
#include <cstring>
#include <functional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "seam/eval/ops.h"

namespace seam {
namespace {

Literal Identity(const Instruction& instruction, const Literal& x) {
  Literal out(instruction.shape());
  const size_t bytes = std::min(out.bytes().size(), x.bytes().size());
  if (bytes > 0) std::memcpy(out.mutable_bytes().data(), x.bytes().data(), bytes);  // never null
  return out;
}

Literal MapDouble(const Instruction& instruction, const Literal& x, double (*fn)(double)) {
  Literal out(instruction.shape());
  for (int64_t i = 0; i < out.element_count(); ++i) out.SetDouble(i, fn(x.GetDouble(i)));
  return out;
}

double Phi(double x) { return 0.5 * (1.0 + std::erf(x / std::sqrt(2.0))); }
double Gelu(double x) { return x * Phi(x); }
double GeluTanh(double x) {
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}
double GeluGrad(double x) { return Phi(x) + x * std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI); }

// A handler without a function is the identity: executors forward its
// operand instead of copying it (IsIdentityCustomCall).
struct Handler {
  absl::string_view target;
  std::function<Literal(const Instruction&, const Literal&)> run = nullptr;
};

const std::vector<Handler>& Handlers() {
  static const auto* handlers = new std::vector<Handler>{
      {"Sharding"},
      {"SPMDFullToShardShape"},
      {"SPMDShardToFullShape"},
      {"MoveToHost"},
      {"MoveToDevice"},
      {"AwsNeuronTransferWithStaticRing"},
      {"AwsNeuronGelu",
       [](const Instruction& i, const Literal& x) { return MapDouble(i, x, Gelu); }},
      {"AwsNeuronGeluApprxTanh",
       [](const Instruction& i, const Literal& x) { return MapDouble(i, x, GeluTanh); }},
      {"AwsNeuronGeluBackward",
       [](const Instruction& i, const Literal& x) { return MapDouble(i, x, GeluGrad); }},
  };
  return *handlers;
}

const Handler* FindHandler(absl::string_view target) {
  for (const Handler& handler : Handlers()) {
    if (handler.target == target) return &handler;
  }
  return nullptr;
}

}  // namespace

bool HasCustomCallHandler(absl::string_view target) { return FindHandler(target) != nullptr; }

bool IsIdentityCustomCall(const Instruction& instruction) {
  if (instruction.opcode() != Opcode::kCustomCall || instruction.operand_count() != 1) return false;
  const Handler* handler = FindHandler(instruction.attrs().custom_call_target.value_or(""));
  return handler != nullptr && handler->run == nullptr && instruction.shape().IsArray() &&
         instruction.operand(0)->shape() == instruction.shape();
}

absl::StatusOr<Literal> EvalCustomCall(const Instruction& instruction, OperandValues operands) {
  std::string target = instruction.attrs().custom_call_target.value_or("");
  for (const Handler& handler : Handlers()) {
    if (handler.target != target) continue;
    const Shape& result = instruction.shape();
    if (operands.size() != 1 || !result.IsArray() || !operands[0]->shape().IsArray() ||
        operands[0]->shape().dtype() != result.dtype() ||
        operands[0]->element_count() != result.ElementCount()) {
      return absl::InvalidArgumentError(
          absl::StrCat("custom-call target \"", target,
                       "\" expects one array operand of the result's type and size"));
    }
    if (absl::StartsWith(handler.target, "AwsNeuronGelu") && !IsFloat(result.dtype())) {
      return absl::InvalidArgumentError(absl::StrCat("custom-call target \"", target,
                                                     "\" computes on real floats, not ",
                                                     DTypeName(result.dtype())));
    }
    return handler.run ? handler.run(instruction, *operands[0])
                       : Identity(instruction, *operands[0]);
  }
  return absl::UnimplementedError(
      absl::StrCat("custom-call target \"", target, "\" has no interpreter handler"));
}

}  // namespace seam
