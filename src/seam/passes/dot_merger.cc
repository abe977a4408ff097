// dot-merger: merges dots that share an operand into one dot on the
// concatenated other operands, after XLA's DotMerger:
//
//   q = dot(x, wq); k = dot(x, wk); v = dot(x, wv)
//     -> qkv = dot(x, concatenate(wq, wk, wv)); q, k, v = slices of qkv
//
// Attention projections, gated MLPs and LSTM gates multiply one activation
// by several weights; one bigger matrix multiply uses a GPU (or a CPU's
// cores) far better than several thin ones, and reads the shared operand
// once.
//
// Dots merge when they read one instruction on the same side, have the same
// dimension numbers, result type and attributes (metadata aside), and their
// other operands differ only in the first free (non-batch, non-contracting)
// dimension, which is the one concatenated. Each output element is computed
// from the same products summed in the same order, so results are bit for
// bit those of the separate dots.
//
// Not merged: dots of which one depends on another (the merged dot would
// feed itself), merged operands or results over kMaxMergedElements, dots
// whose other operand has no free dimension, sparse dots, ops with control
// edges or dynamic shapes.
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "seam/passes/mover_util.h"
#include "seam/passes/pass.h"

namespace seam {
namespace {

constexpr int64_t kMaxMergedElements = int64_t{16} << 20;
// Merges per computation before giving up (each redoes the analysis).
constexpr int kMaxMerges = 1024;

// One dot reading `shared` on side `side` (0: lhs, 1: rhs).
struct DotUse {
  Instruction* dot;
  int side;
};

int OtherSide(int side) { return 1 - side; }

IntList Dims(const std::optional<IntList>& dims) { return dims.value_or(IntList{}); }

// The free dimensions of the operand on `side`, in increasing order.
std::vector<int64_t> FreeDims(const Instruction* dot, int side) {
  const Attributes& a = dot->attrs();
  IntList batch = Dims(side == 0 ? a.lhs_batch_dims : a.rhs_batch_dims);
  IntList contracting = Dims(side == 0 ? a.lhs_contracting_dims : a.rhs_contracting_dims);
  std::vector<int64_t> free;
  for (int64_t d = 0; d < dot->operand(side)->shape().rank(); ++d) {
    if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
        std::find(contracting.begin(), contracting.end(), d) == contracting.end()) {
      free.push_back(d);
    }
  }
  return free;
}

// Attributes equal in all but metadata (op names and source lines).
bool SameAttributes(const Attributes& a, const Attributes& b) {
  if (!movers::SameTypedAttributes(a, b)) return false;
  auto meaningful = [](const Attributes& x) {
    std::vector<VerbatimAttribute> kept;
    for (const VerbatimAttribute& v : x.verbatim) {
      if (v.name != "metadata") kept.push_back(v);
    }
    return kept;
  };
  return meaningful(a) == meaningful(b);
}

bool IsMergeableDot(const Instruction* dot) {
  return dot->opcode() == Opcode::kDot && movers::IsPlainArrayOp(*dot) &&
         dot->attrs().FindVerbatim("sparsity") == nullptr && dot->operand(0) != dot->operand(1);
}

// Whether `a` and `b` (reading one operand on the same side) can share a dot.
bool Compatible(const DotUse& a, const DotUse& b) {
  if (a.side != b.side || !SameAttributes(a.dot->attrs(), b.dot->attrs()) ||
      a.dot->shape().dtype() != b.dot->shape().dtype()) {
    return false;
  }
  const Shape& x = a.dot->operand(OtherSide(a.side))->shape();
  const Shape& y = b.dot->operand(OtherSide(b.side))->shape();
  if (x.dtype() != y.dtype() || x.rank() != y.rank()) return false;
  std::vector<int64_t> free = FreeDims(a.dot, OtherSide(a.side));
  if (free.empty()) return false;
  for (int d = 0; d < x.rank(); ++d) {
    if (d != free[0] && x.dim(d) != y.dim(d)) return false;
  }
  return true;
}

class DotMerger {
 public:
  explicit DotMerger(movers::Editor& editor) : editor_(editor) {}

  // Finds one group of dots to merge and merges it; false when none.
  bool MergeOne(Computation& computation) {
    std::vector<Instruction*> order = computation.MakePostOrder();
    index_.clear();
    for (size_t k = 0; k < order.size(); ++k) index_[order[k]] = static_cast<int64_t>(k);
    for (Instruction* shared : order) {
      for (int side = 0; side < 2; ++side) {
        std::vector<DotUse> uses;
        for (Instruction* user : shared->users()) {
          if (IsMergeableDot(user) && user->operand(side) == shared) uses.push_back({user, side});
        }
        if (uses.size() < 2) continue;
        std::sort(uses.begin(), uses.end(), [&](const DotUse& a, const DotUse& b) {
          return index_[a.dot] < index_[b.dot];
        });
        std::vector<DotUse> group = IndependentGroup(uses);
        if (group.size() >= 2) {
          Merge(group);
          return true;
        }
      }
    }
    return false;
  }

 private:
  // The first dot and, in post order, every later one compatible with it,
  // independent of those already taken, within the size cap.
  std::vector<DotUse> IndependentGroup(const std::vector<DotUse>& uses) {
    for (size_t first = 0; first + 1 < uses.size(); ++first) {
      std::vector<DotUse> group{uses[first]};
      auto other = [](const DotUse& u) { return u.dot->operand(OtherSide(u.side)); };
      int64_t other_elements = *other(uses[first])->shape().ElementCount();
      int64_t out_elements = *uses[first].dot->shape().ElementCount();
      for (size_t k = first + 1; k < uses.size(); ++k) {
        const DotUse& u = uses[k];
        if (!Compatible(uses[first], u)) continue;
        int64_t more_other = *other(u)->shape().ElementCount();
        int64_t more_out = *u.dot->shape().ElementCount();
        if (other_elements + more_other > kMaxMergedElements ||
            out_elements + more_out > kMaxMergedElements || DependsOnAny(u.dot, group)) {
          continue;
        }
        group.push_back(u);
        other_elements += more_other;
        out_elements += more_out;
      }
      if (group.size() >= 2) return group;
    }
    return {};
  }

  // Whether `dot` reaches a member of `group` through its operands. Only
  // instructions after the earliest member in post order can.
  bool DependsOnAny(const Instruction* dot, const std::vector<DotUse>& group) {
    int64_t lowest = index_[group[0].dot];
    absl::flat_hash_set<const Instruction*> members;
    for (const DotUse& u : group) members.insert(u.dot);
    absl::flat_hash_set<const Instruction*> visited;
    std::vector<const Instruction*> stack(dot->operands().begin(), dot->operands().end());
    for (const Instruction* p : dot->control_predecessors()) stack.push_back(p);
    while (!stack.empty()) {
      const Instruction* i = stack.back();
      stack.pop_back();
      if (index_[i] < lowest || !visited.insert(i).second) continue;
      if (members.contains(i)) return true;
      for (const Instruction* operand : i->operands()) stack.push_back(operand);
      for (const Instruction* p : i->control_predecessors()) stack.push_back(p);
    }
    return false;
  }

  void Merge(const std::vector<DotUse>& group) {
    HloBuilder& b = editor_.b();
    const DotUse& first = group[0];
    int side = first.side, other_side = OtherSide(side);
    int64_t concat_dim = FreeDims(first.dot, other_side)[0];
    std::vector<Instruction*> others;
    for (const DotUse& u : group) others.push_back(u.dot->operand(other_side));
    Instruction* concatenated = b.Concatenate(others, concat_dim);
    // Where the concatenated dimension (its operand's first free one) lands
    // in the result: after the batch dimensions and, for rhs, after lhs's
    // free dimensions.
    const Attributes& a = first.dot->attrs();
    int64_t position = static_cast<int64_t>(Dims(a.lhs_batch_dims).size());
    if (other_side == 1) position += static_cast<int64_t>(FreeDims(first.dot, 0).size());
    std::vector<int64_t> dims = first.dot->shape().dims();
    dims[position] = concatenated->shape().dim(static_cast<int>(concat_dim));
    std::vector<Instruction*> operands(2);
    operands[side] = first.dot->operand(side);
    operands[other_side] = concatenated;
    Instruction* merged = b.Clone(*first.dot, operands);
    merged->mutable_shape() = Shape::Array(first.dot->shape().dtype(), dims);
    int64_t offset = 0;
    for (const DotUse& u : group) {
      SliceRanges ranges;
      for (int64_t d : dims) ranges.push_back({0, d, 1});
      int64_t size = u.dot->shape().dim(static_cast<int>(position));
      ranges[position] = {offset, offset + size, 1};
      offset += size;
      editor_.ReplaceWithNew(u.dot, b.Slice(merged, std::move(ranges)));
    }
  }

  movers::Editor& editor_;
  absl::flat_hash_map<const Instruction*, int64_t> index_;
};

class DotMergerPass : public ComputationPass {
  std::vector<Opcode> Triggers() const override { return {Opcode::kDot}; }
  void Prepare(Module& module) override { editor_.emplace(module); }
  absl::StatusOr<bool> RunOnComputation(Computation& computation) override {
    int dots = 0;
    for (const auto& i : computation.instructions()) dots += i->opcode() == Opcode::kDot;
    if (dots < 2) return false;
    DotMerger merger(*editor_);
    bool changed = false;
    for (int k = 0; k < kMaxMerges; ++k) {
      editor_->Begin(computation);
      bool merged = merger.MergeOne(computation);
      editor_->Finish();
      if (!merged) break;
      changed = true;
    }
    return changed;
  }

  std::optional<movers::Editor> editor_;
};

}  // namespace

std::unique_ptr<Pass> MakeDotMergerPass() { return std::make_unique<DotMergerPass>(); }

}  // namespace seam
