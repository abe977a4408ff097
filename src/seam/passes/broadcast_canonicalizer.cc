// broadcast-canonicalizer: a broadcast whose `dimensions` are not increasing
// both moves and replicates data; it becomes a transpose of the operand
// followed by a broadcast with sorted dimensions, as XLA's
// BroadcastCanonicalizer does. Later passes and the code generator then only
// meet broadcasts that keep the operand's dimension order.
#include <algorithm>
#include <numeric>

#include "seam/passes/expander_util.h"
#include "seam/passes/pass.h"

namespace seam {
namespace {

class BroadcastCanonicalizerPass : public Pass {
 public:
  absl::StatusOr<bool> Run(Module& module) override {
    expand::Rewriter rewriter(module);
    bool changed = false;
    for (Instruction* i : rewriter.Instructions(Opcode::kBroadcast)) {
      if (i->opcode() != Opcode::kBroadcast || !i->attrs().dimensions.has_value()) continue;
      const IntList& dims = *i->attrs().dimensions;
      if (std::is_sorted(dims.begin(), dims.end())) continue;
      Instruction* x = i->operand(0);
      if (!expand::IsStaticArray(x->shape()) || !expand::IsStaticArray(i->shape()) ||
          static_cast<int>(dims.size()) != x->shape().rank()) {
        continue;
      }
      // Operand dimension perm[j] goes to result dimension dims[perm[j]],
      // increasing in j.
      IntList perm(dims.size());
      std::iota(perm.begin(), perm.end(), 0);
      std::stable_sort(perm.begin(), perm.end(),
                       [&](int64_t a, int64_t c) { return dims[a] < dims[c]; });
      IntList sorted;
      for (int64_t p : perm) sorted.push_back(dims[p]);
      HloBuilder b = rewriter.Builder(*i->parent());
      Instruction* transposed = b.Transpose(x, perm);
      Instruction* broadcast = b.Clone(*i, {transposed});
      broadcast->mutable_attrs().dimensions = sorted;
      rewriter.ReplaceWithNew(i, broadcast);
      changed = true;
    }
    rewriter.Flush();
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeBroadcastCanonicalizerPass() {
  return std::make_unique<BroadcastCanonicalizerPass>();
}

}  // namespace seam
