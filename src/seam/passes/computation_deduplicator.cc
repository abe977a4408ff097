// computation-deduplicator: makes callers of structurally identical
// computations share one of them (XLA's HloComputationDeduplicator). JAX
// emits a fresh `region_N` reducer per reduce, so a model holds hundreds of
// copies of `add`; one copy makes reducers comparable by pointer, which cse
// and the fusion planner rely on. dce then drops the unused copies.
//
// Only computations applied to values (reducers, comparators, scatter and
// map functions) are shared; what call, while and conditional run keeps one
// call site each, which flatten-call-graph gives it and the loop passes need
// to rewrite a body for one loop alone.
#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "seam/passes/pass.h"

namespace seam {
namespace {

// Whether a and b compute the same function: their post orders match
// instruction by instruction (opcode, shape, attributes, constants, and
// operands at the same positions). Called computations must already be
// canonical, so pointer equality of attributes suffices.
bool SameStructure(const Computation& a, const Computation& b) {
  if (a.instruction_count() != b.instruction_count() ||
      a.parameter_count() != b.parameter_count()) {
    return false;
  }
  std::vector<Instruction*> order_a = a.MakePostOrder();
  std::vector<Instruction*> order_b = b.MakePostOrder();
  absl::flat_hash_map<const Instruction*, size_t> position_a, position_b;
  for (size_t k = 0; k < order_a.size(); ++k) {
    const Instruction& x = *order_a[k];
    const Instruction& y = *order_b[k];
    if (x.opcode() != y.opcode() || !(x.shape() == y.shape()) || !(x.attrs() == y.attrs()) ||
        x.parameter_number() != y.parameter_number() || x.operand_count() != y.operand_count() ||
        !x.control_predecessors().empty() || !y.control_predecessors().empty() ||
        x.IsRoot() != y.IsRoot()) {
      return false;
    }
    if (x.literal() != nullptr || y.literal() != nullptr) {
      if (x.literal() == nullptr || y.literal() == nullptr || x.literal()->is_elided() ||
          y.literal()->is_elided() || !(*x.literal() == *y.literal())) {
        return false;
      }
    }
    for (int op = 0; op < x.operand_count(); ++op) {
      if (position_a.at(x.operand(op)) != position_b.at(y.operand(op))) return false;
    }
    position_a[&x] = k;
    position_b[&y] = k;
  }
  return true;
}

bool RunsComputationsInSequence(Opcode opcode) {
  return opcode == Opcode::kCall || opcode == Opcode::kWhile || opcode == Opcode::kConditional;
}

// A cheap fingerprint: the opcode sequence of the post order and the shapes.
size_t Fingerprint(const Computation& c) {
  size_t h = absl::HashOf(c.instruction_count(), c.parameter_count());
  for (const Instruction* i : c.MakePostOrder()) {
    h = absl::HashOf(h, i->opcode(), i->shape().dims(), static_cast<int>(i->shape().dtype()));
  }
  return h;
}

class ComputationDeduplicatorPass : public Pass {
 public:
  absl::StatusOr<bool> Run(Module& module) override {
    absl::StatusOr<std::vector<Computation*>> order = module.MakeComputationPostOrder();
    if (!order.ok()) return order.status();
    // Callees come first, so when a computation is compared, what it calls
    // has already been mapped to its canonical copy.
    absl::flat_hash_map<Computation*, Computation*> canonical;
    absl::flat_hash_map<size_t, std::vector<Computation*>> by_fingerprint;
    bool changed = false;
    for (Computation* c : *order) {
      for (const auto& i : c->instructions()) {
        if (RunsComputationsInSequence(i->opcode())) continue;
        // Remapped in place, without a copy of the attributes to compare
        // (a large module's entry has thousands of instructions calling none).
        i->mutable_attrs().MapCalledComputations([&](Computation* callee) {
          auto it = canonical.find(callee);
          if (it == canonical.end()) return callee;
          changed = true;
          return it->second;
        });
      }
      if (c == module.entry()) continue;
      std::vector<Computation*>& candidates = by_fingerprint[Fingerprint(*c)];
      Computation* match = nullptr;
      for (Computation* candidate : candidates) {
        if (SameStructure(*candidate, *c)) {
          match = candidate;
          break;
        }
      }
      if (match != nullptr) {
        canonical[c] = match;
      } else {
        candidates.push_back(c);
      }
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeComputationDeduplicatorPass() {
  return std::make_unique<ComputationDeduplicatorPass>();
}

}  // namespace seam
