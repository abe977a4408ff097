// cse: merges instructions that compute the same value: same opcode, shape,
// attributes and operands (in either order for commutative ops), or equal
// constants. Front ends emit many copies of the same broadcast, constant and
// convert; merging them lets the fusion planner see the real sharing.
#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "seam/ir/hlo_builder.h"
#include "seam/passes/call_graph_util.h"
#include "seam/passes/pass.h"

namespace seam {
namespace {

// Operands as a value identity: commutative binary ops compare sorted.
std::vector<const Instruction*> CanonicalOperands(const Instruction& i) {
  std::vector<const Instruction*> operands(i.operands().begin(), i.operands().end());
  if (IsCommutative(i.opcode()) && operands.size() == 2 && operands[1] < operands[0]) {
    std::swap(operands[0], operands[1]);
  }
  return operands;
}

// Elided data is identified by its source (see Literal::elided_identity).
const std::string& ElidedIdentity(const Instruction& i) {
  const std::string& identity = i.literal()->elided_identity();
  return identity.empty() ? i.name() : identity;
}

bool SameLiteral(const Instruction& a, const Instruction& b) {
  if (a.literal() == nullptr || b.literal() == nullptr) return a.literal() == b.literal();
  if (a.literal()->is_elided() || b.literal()->is_elided()) {
    return a.literal()->is_elided() && b.literal()->is_elided() &&
           ElidedIdentity(a) == ElidedIdentity(b) && a.shape() == b.shape();
  }
  return *a.literal() == *b.literal();
}

struct ValueHash {
  size_t operator()(const Instruction* i) const {
    size_t h = absl::HashOf(i->opcode(), i->shape().dims(), i->shape().IsTuple(),
                            static_cast<int>(i->shape().dtype()), CanonicalOperands(*i));
    if (i->literal() != nullptr && !i->literal()->is_elided()) {
      h = absl::HashOf(h, i->literal()->bytes());
    }
    return h;
  }
};

struct SameValue {
  bool operator()(const Instruction* a, const Instruction* b) const {
    return a->opcode() == b->opcode() && a->shape() == b->shape() &&
           CanonicalOperands(*a) == CanonicalOperands(*b) && a->attrs() == b->attrs() &&
           SameLiteral(*a, *b);
  }
};

bool Mergeable(const Instruction& i) {
  return i.opcode() != Opcode::kParameter && i.opcode() != Opcode::kRngBitGenerator &&
         IsRemovableWhenDead(i) && i.control_predecessors().empty() &&
         i.control_successors().empty();
}

// Operands first, so a value's operands are merged before it is compared.
bool MergeEqualValues(Computation& computation) {
  std::vector<Instruction*> candidates;
  for (Instruction* i : computation.MakePostOrder()) {
    if (Mergeable(*i)) candidates.push_back(i);
  }
  absl::flat_hash_set<Instruction*, ValueHash, SameValue> values;
  return ReplaceEach(computation, candidates, [&](Instruction* i) -> Instruction* {
    auto [it, inserted] = values.insert(i);
    return inserted ? nullptr : *it;
  });
}

class CsePass : public ComputationPass {
  absl::StatusOr<bool> RunOnComputation(Computation& computation) override {
    return MergeEqualValues(computation);
  }
};

}  // namespace

std::unique_ptr<Pass> MakeCsePass() { return std::make_unique<CsePass>(); }

}  // namespace seam
