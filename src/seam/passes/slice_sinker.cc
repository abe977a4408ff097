// slice-sinker: computes an elementwise op once on whole arrays instead of
// once per slice of them, after XLA's SliceSinker:
//
//   x1 = add(slice(a, [0:4]), slice(b, [0:4]))
//   x2 = add(slice(a, [4:8]), slice(b, [4:8]))
//     -> y = add(a, b); x1 = slice(y, [0:4]); x2 = slice(y, [4:8])
//
// Front ends split arrays into pieces (heads, gates, halves of a rotary
// embedding) and apply the same op to each piece; one op on the whole array
// is fewer ops, a bigger kernel, and the slices move to where they cancel
// against concatenates or fold into consumers.
//
// A group is the ops with the same opcode, attributes and result type whose
// operands are slices of the same source arrays, operand k of each slicing
// source k, with one slice configuration per op. It is rewritten only when
// the distinct slices together have at least as many elements as a source,
// so the whole-array op does no more elementwise work than the pieces did
// (XLA's rule): slices that cover the source exactly qualify.
//
// Not rewritten: groups of one op, ops with a non-slice operand (clamp's
// scalar bounds included), ops that change rank (bitcast-convert to another
// width), ops with side effects or control edges, dynamic shapes.
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "seam/passes/mover_util.h"
#include "seam/passes/pass.h"

namespace seam {
namespace {

constexpr int kMaxSweeps = 16;

bool IsPlainSlice(const Instruction* i) {
  return i->opcode() == Opcode::kSlice && !movers::HasControlEdges(*i) &&
         movers::IsStaticArray(i->shape()) && movers::IsStaticArray(i->operand(0)->shape());
}

// Whether `op` is elementwise on slices of equal-shaped sources, all with
// one slice configuration.
bool IsSinkable(const Instruction* op) {
  if (!IsElementwise(op->opcode()) || !IsRemovableWhenDead(*op) ||
      !movers::IsPlainArrayOp(*op) || op->operand_count() == 0) {
    return false;
  }
  if (op->opcode() == Opcode::kBitcastConvert &&
      DTypeBits(op->shape().dtype()) != DTypeBits(op->operand(0)->shape().dtype())) {
    return false;
  }
  const Instruction* first = op->operand(0);
  if (!IsPlainSlice(first)) return false;
  for (const Instruction* operand : op->operands()) {
    if (!IsPlainSlice(operand) || *operand->attrs().slice != *first->attrs().slice ||
        operand->operand(0)->shape().dims() != first->operand(0)->shape().dims()) {
      return false;
    }
  }
  return true;
}

int64_t SliceElements(const SliceRanges& ranges) {
  int64_t n = 1;
  for (const SliceRange& r : ranges) n *= (r.limit - r.start + r.stride - 1) / r.stride;
  return n;
}

using GroupKey = std::tuple<Opcode, DType, std::vector<Instruction*>>;

// Rewrites one group; false when it does not qualify.
bool SinkGroup(const std::vector<Instruction*>& group, movers::Editor& editor) {
  if (group.size() < 2) return false;
  const Instruction* first = group[0];
  const Shape& source = first->operand(0)->operand(0)->shape();
  int64_t covered = 0;
  std::vector<SliceRanges> seen;
  for (const Instruction* op : group) {
    const SliceRanges& ranges = *op->operand(0)->attrs().slice;
    if (std::find(seen.begin(), seen.end(), ranges) != seen.end()) continue;
    seen.push_back(ranges);
    covered += SliceElements(ranges);
  }
  if (covered < *source.ElementCount()) return false;
  HloBuilder& b = editor.b();
  std::vector<Instruction*> sources;
  for (const Instruction* operand : first->operands()) sources.push_back(operand->operand(0));
  Instruction* whole = b.Clone(*first, sources);
  whole->mutable_shape() = Shape::Array(first->shape().dtype(), source.dims());
  for (Instruction* op : group) {
    editor.ReplaceWithNew(op, b.Slice(whole, *op->operand(0)->attrs().slice));
  }
  return true;
}

bool Sweep(Computation& computation, movers::Editor& editor) {
  absl::flat_hash_map<GroupKey, std::vector<std::vector<Instruction*>>> buckets;
  std::vector<GroupKey> key_order;  // deterministic output
  for (Instruction* op : movers::InstructionList(computation)) {
    if (!IsSinkable(op)) continue;
    std::vector<Instruction*> sources;
    for (const Instruction* operand : op->operands()) sources.push_back(operand->operand(0));
    GroupKey key{op->opcode(), op->shape().dtype(), std::move(sources)};
    auto [it, inserted] = buckets.try_emplace(key);
    if (inserted) key_order.push_back(key);
    // Ops with different attributes (compare directions...) form separate
    // groups under one key; metadata may differ.
    auto& groups = it->second;
    auto same = std::find_if(groups.begin(), groups.end(), [&](const auto& g) {
      return movers::SameTypedAttributes(g[0]->attrs(), op->attrs());
    });
    if (same == groups.end()) {
      groups.push_back({op});
    } else {
      same->push_back(op);
    }
  }
  bool changed = false;
  for (const GroupKey& key : key_order) {
    for (const std::vector<Instruction*>& group : buckets[key]) {
      changed |= SinkGroup(group, editor);
    }
  }
  return changed;
}

class SliceSinkerPass : public ComputationPass {
  std::vector<Opcode> Triggers() const override { return {Opcode::kSlice}; }
  void Prepare(Module& module) override { editor_.emplace(module); }
  absl::StatusOr<bool> RunOnComputation(Computation& computation) override {
    bool changed = false;
    for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
      editor_->Begin(computation);
      bool swept = Sweep(computation, *editor_);
      editor_->Finish();
      if (!swept) break;
      changed = true;
    }
    return changed;
  }

  std::optional<movers::Editor> editor_;
};

}  // namespace

std::unique_ptr<Pass> MakeSliceSinkerPass() { return std::make_unique<SliceSinkerPass>(); }

}  // namespace seam
