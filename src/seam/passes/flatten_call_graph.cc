// flatten-call-graph: gives every computation run in a sequential context
// (a call's to_apply, a while's condition and body, a conditional's
// branches) exactly one call site, cloning it for the others, as XLA's
// FlattenCallGraph does. Passes that rewrite a loop body or a branch in
// place (while-loop-simplifier, while-loop-invariant-code-motion) may then
// change its signature without breaking another caller.
//
// Computations applied elementwise or as reducers (to_apply of reduce, map,
// sort, scatter..., fusion bodies) stay shared: nothing rewrites them per
// call site, and copies would only grow the module. Async computations stay
// shared too: start, update and done must name the same one.
#include "seam/passes/call_graph_util.h"
#include "seam/passes/pass.h"

namespace seam {
namespace {

// A place where an instruction names a computation it runs sequentially.
struct CallSite {
  Instruction* instruction;
  Computation** slot;
};

void AppendSequentialSites(Instruction* i, std::vector<CallSite>& out) {
  Attributes& a = i->mutable_attrs();
  auto add = [&](std::optional<ComputationRef>& ref) {
    if (ref.has_value() && *ref != nullptr) out.push_back({i, &*ref});
  };
  switch (i->opcode()) {
    case Opcode::kCall:
      add(a.to_apply);
      break;
    case Opcode::kWhile:
      add(a.condition);
      add(a.body);
      break;
    case Opcode::kConditional:
      add(a.true_computation);
      add(a.false_computation);
      if (a.branch_computations.has_value()) {
        for (Computation*& c : *a.branch_computations) {
          if (c != nullptr) out.push_back({i, &c});
        }
      }
      break;
    default:
      break;
  }
}

class FlattenCallGraphPass : public Pass {
 public:
  absl::StatusOr<bool> Run(Module& module) override {
    // Every call site counts, in dead code too (the verifier checks it, and
    // passes that reshape a loop body need it unshared); embedded ones
    // count (a computation that is both a reducer and a loop body gets its
    // own copy for the loop), but only sequential sites get copies.
    absl::flat_hash_map<const Computation*, int> sites = CountCallSites(module);
    absl::flat_hash_map<const Computation*, std::vector<CallSite>> sequential;
    auto record = [&](Computation& computation) {
      for (const auto& i : computation.instructions()) {
        std::vector<CallSite> found;
        AppendSequentialSites(i.get(), found);
        for (const CallSite& site : found) sequential[*site.slot].push_back(site);
      }
    };
    for (const auto& computation : module.computations()) record(*computation);
    bool shared = false;
    for (const auto& [computation, calls] : sequential) shared |= sites[computation] > 1;
    if (!shared) return false;
    absl::StatusOr<std::vector<Computation*>> post_order = module.MakeComputationPostOrder();
    if (!post_order.ok()) return post_order.status();

    NameUniquer names(module);
    ComputationNameUniquer computation_names(module);
    bool changed = false;
    // Callers before callees: a copy's own callees gain a call site, and are
    // visited later.
    for (auto it = post_order->rbegin(); it != post_order->rend(); ++it) {
      Computation* computation = *it;
      auto found = sequential.find(computation);
      if (found == sequential.end()) continue;
      std::vector<CallSite> calls = found->second;
      int total = sites[computation];
      // The original stays with the first sequential site when that is its
      // only other use; the entry and embedded uses keep it otherwise.
      size_t first_copied = total == static_cast<int>(calls.size()) ? 1 : 0;
      for (size_t k = first_copied; k < calls.size(); ++k) {
        Computation* copy = CloneComputation(*computation, module, names, computation_names);
        *calls[k].slot = copy;
        sites[copy] = 1;
        for (const auto& i : copy->instructions()) {
          for (const Computation* called : i->CalledComputations()) ++sites[called];
        }
        record(*copy);
        changed = true;
      }
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeFlattenCallGraphPass() {
  return std::make_unique<FlattenCallGraphPass>();
}

}  // namespace seam
