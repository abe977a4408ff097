// reduce-decomposer: a variadic reduce whose reducer computes each output
// from its own (accumulator, value) pair alone, e.g. a sum and a max taken
// in one reduce, becomes one single-output reduce per output and a tuple.
// Single-output reduces with the usual reducers are what the fusion planner,
// the code generator and the interpreter's fast path handle best; the split
// changes no arithmetic, so results are bit-identical.
//
// Left alone: true variadic reductions whose outputs interact (argmax: the
// index follows the value), reducers whose root is not a tuple instruction,
// reducers with control edges or side effects.
#include "absl/strings/str_cat.h"
#include "seam/passes/expander_util.h"
#include "seam/passes/pass.h"
#include "seam/util/status_macros.h"

namespace seam {
namespace {

// The parameters `root` reads, directly or not.
absl::flat_hash_set<int64_t> ParametersRead(const Instruction* root) {
  absl::flat_hash_set<int64_t> params;
  absl::flat_hash_set<const Instruction*> seen{root};
  std::vector<const Instruction*> stack{root};
  while (!stack.empty()) {
    const Instruction* i = stack.back();
    stack.pop_back();
    if (i->opcode() == Opcode::kParameter) params.insert(i->parameter_number());
    for (const Instruction* operand : i->operands()) {
      if (seen.insert(operand).second) stack.push_back(operand);
    }
  }
  return params;
}

// Whether output k of `reducer` (2n parameters, a tuple of n results) reads
// only parameters k and n + k.
bool Separable(const Computation& reducer, int64_t n) {
  const Instruction* root = reducer.root();
  if (root == nullptr || root->opcode() != Opcode::kTuple || root->operand_count() != n ||
      reducer.parameter_count() != 2 * n) {
    return false;
  }
  for (const auto& i : reducer.instructions()) {
    if (!i->control_predecessors().empty() || !i->control_successors().empty()) return false;
    if (i->opcode() != Opcode::kParameter && !IsRemovableWhenDead(*i)) return false;
  }
  for (int64_t k = 0; k < n; ++k) {
    for (int64_t p : ParametersRead(root->operand(static_cast<int>(k)))) {
      if (p != k && p != n + k) return false;
    }
  }
  return true;
}

class ReduceDecomposerPass : public Pass {
 public:
  absl::StatusOr<bool> Run(Module& module) override {
    expand::Rewriter rewriter(module);
    // One reducer per (variadic reducer, output), shared by every reduce;
    // none for a reducer that does not separate.
    absl::flat_hash_map<const Computation*, std::vector<Computation*>> split;
    bool changed = false;
    for (Instruction* r : rewriter.Instructions(Opcode::kReduce)) {
      if (r->opcode() != Opcode::kReduce || r->operand_count() < 4 ||
          r->operand_count() % 2 != 0 || !r->shape().IsTuple() || !r->attrs().to_apply ||
          *r->attrs().to_apply == nullptr) {
        continue;
      }
      int64_t n = r->operand_count() / 2;
      const Computation& reducer = **r->attrs().to_apply;
      if (static_cast<int64_t>(r->shape().tuple_shapes().size()) != n) continue;
      auto it = split.find(&reducer);
      if (it == split.end()) {
        std::vector<Computation*> parts;
        bool separable = Separable(reducer, n);
        for (int64_t k = 0; separable && k < n; ++k) {
          parts.push_back(rewriter.CloneWithParameters(
              reducer, *reducer.root()->operand(static_cast<int>(k)), {k, n + k},
              absl::StrCat(reducer.name(), ".", k)));
          SEAM_CHECK(parts.back() != nullptr);
        }
        it = split.emplace(&reducer, std::move(parts)).first;
      }
      if (it->second.empty()) continue;
      HloBuilder b = rewriter.Builder(*r->parent());
      std::vector<Instruction*> outputs;
      for (int64_t k = 0; k < n; ++k) {
        Instruction* part = b.Clone(*r, {r->operand(static_cast<int>(k)),
                                         r->operand(static_cast<int>(n + k))});
        part->mutable_shape() = r->shape().tuple_shapes()[k];
        part->mutable_attrs().to_apply = it->second[k];
        outputs.push_back(part);
      }
      rewriter.ReplaceWithNew(r, b.Tuple(std::move(outputs)));
      changed = true;
    }
    rewriter.Flush();
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeReduceDecomposerPass() {
  return std::make_unique<ReduceDecomposerPass>();
}

}  // namespace seam
