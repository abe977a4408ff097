// constant-folding: evaluates instructions whose operands are all constants
// with the reference interpreter and replaces them by the constant result.
// Front ends leave shape arithmetic and small tables as graphs of constants;
// folding them shrinks the graph and lets algsimp see literal values.
//
// Not folded: what would grow the module (results over kMaxResultElements,
// or broadcasts and iotas, which are cheaper to keep as ops), what may not
// terminate or is costly (while, call, conditional, and operands over
// kMaxOperandElements), random and side-effecting ops, and elided constants,
// whose values the text does not hold.
#include "seam/eval/ops.h"
#include "seam/ir/hlo_builder.h"
#include "seam/passes/pass.h"

namespace seam {
namespace {

constexpr int64_t kMaxResultElements = 1 << 16;
constexpr int64_t kMaxOperandElements = 1 << 20;

bool IsKnownConstant(const Instruction& i) {
  return i.opcode() == Opcode::kConstant && i.literal() != nullptr &&
         !i.literal()->is_elided() && !i.literal()->is_opaque();
}

bool Foldable(const Instruction& i) {
  switch (i.opcode()) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kBroadcast:
    case Opcode::kIota:
    case Opcode::kWhile:
    case Opcode::kCall:
    case Opcode::kConditional:
    case Opcode::kFusion:
    case Opcode::kRng:
    case Opcode::kRngBitGenerator:
    case Opcode::kCustomCall:
    case Opcode::kAfterAll:
    case Opcode::kPartitionId:
    case Opcode::kReplicaId:
      return false;
    default:
      break;
  }
  if (OpcodeCategory(i.opcode()) == OpCategory::kCollective) return false;
  if (!i.shape().IsArray() || !IsRemovableWhenDead(i) || !IsInterpretable(i.opcode())) {
    return false;
  }
  if (!i.control_predecessors().empty() || !i.control_successors().empty()) return false;
  std::optional<int64_t> elements = i.shape().ElementCount();
  if (!elements.has_value() || *elements > kMaxResultElements || i.shape().HasDynamicDims()) {
    return false;
  }
  int64_t operand_elements = 0;
  for (const Instruction* operand : i.operands()) {
    if (!IsKnownConstant(*operand)) return false;
    operand_elements += operand->literal()->element_count();
  }
  return operand_elements <= kMaxOperandElements;
}

class ConstantFoldingPass : public ComputationPass {
  void Prepare(Module& module) override { names_.emplace(module); }
  absl::StatusOr<bool> RunOnComputation(Computation& computation) override {
    HloBuilder builder(computation, *names_);
    bool changed = false;
    for (Instruction* i : computation.MakePostOrder()) {
      if (!Foldable(*i)) continue;
      std::vector<const Literal*> operands;
      for (const Instruction* operand : i->operands()) operands.push_back(operand->literal());
      absl::StatusOr<Literal> value = EvalInstruction(*i, operands, evaluator_);
      // An op the interpreter rejects on these values stays as it is: the
      // error belongs to whoever runs the module, not to the optimiser.
      if (!value.ok()) continue;
      Instruction* constant = builder.Constant(std::move(*value));
      constant->mutable_shape() = i->shape();
      ReplaceInstruction(i, constant);
      changed = true;
    }
    return changed;
  }

  std::optional<NameUniquer> names_;
  Evaluator evaluator_;
};

}  // namespace

std::unique_ptr<Pass> MakeConstantFoldingPass() {
  return std::make_unique<ConstantFoldingPass>();
}

}  // namespace seam
