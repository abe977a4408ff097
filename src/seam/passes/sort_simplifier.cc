// sort-simplifier: a sort carries every operand through the same
// permutation, so an operand whose output nothing reads and whose values the
// comparator never looks at is wasted work; the sort is rebuilt without it
// (with a comparator whose parameters are renumbered), as XLA's
// SortSimplifier does. A sort along a dimension of size 0 or 1 permutes
// nothing and is replaced by its operands.
//
// A get-tuple-element that nothing uses does not keep its output alive (it
// is removed with it). Left alone: sorts used other than through
// get-tuple-element (the whole tuple escapes), operands the comparator reads (they decide the order),
// comparators with control edges, sorts that nothing uses (dce's job).
#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "seam/passes/call_graph_util.h"
#include "seam/passes/expander_util.h"
#include "seam/passes/pass.h"

namespace seam {
namespace {

int64_t SortedLength(const Instruction& sort) {
  const Shape& shape = sort.operand(0)->shape();
  if (shape.rank() == 0) return 1;
  int64_t axis = sort.attrs().dimensions.value_or(IntList{0}).at(0);
  if (axis < 0 || axis >= shape.rank()) return -1;
  return shape.dim(static_cast<int>(axis));
}

// `value` laid out as `want` (a copy when the layouts differ).
Instruction* LaidOut(HloBuilder& b, Instruction* value, const Shape& want) {
  if (InterchangeableShapes(value->shape(), want)) return value;
  return b.Add(Opcode::kCopy, want, {value});
}

// Whether output k of `sort` has operand k's shape (sort's shape is not
// inferred by the verifier, so a malformed one could reach here).
bool OutputsMatchOperands(const Instruction& sort) {
  const Shape& shape = sort.shape();
  int n = sort.operand_count();
  if (!shape.IsTuple()) return n == 1 && shape.Compatible(sort.operand(0)->shape());
  if (shape.tuple_shapes().size() != static_cast<size_t>(n)) return false;
  for (int k = 0; k < n; ++k) {
    if (!shape.tuple_shapes()[k].Compatible(sort.operand(k)->shape())) return false;
  }
  return true;
}

// A sort that permutes nothing: its results are its operands.
void ReplaceByOperands(expand::Rewriter& rewriter, HloBuilder& b, Instruction* sort) {
  if (!sort->shape().IsTuple()) {
    rewriter.ReplaceWithExisting(sort, sort->operand(0));
    return;
  }
  std::vector<Instruction*> users = sort->users();
  for (Instruction* user : users) {
    if (user->opcode() == Opcode::kGetTupleElement) {
      rewriter.ReplaceWithExisting(user, sort->operand(static_cast<int>(*user->attrs().index)));
    }
  }
  if (sort->users().empty() && !sort->IsRoot()) {
    rewriter.Remove(sort);
    return;
  }
  std::vector<Instruction*> elements;
  for (int k = 0; k < sort->operand_count(); ++k) {
    elements.push_back(LaidOut(b, sort->operand(k), sort->shape().tuple_shapes()[k]));
  }
  rewriter.ReplaceWithNew(sort, b.Tuple(std::move(elements)));
}

// A get-tuple-element nothing reads does not count as reading its output.
bool IsDead(const Instruction& i) {
  return i.users().empty() && !i.IsRoot() && i.control_successors().empty() &&
         i.control_predecessors().empty();
}

// The operands to keep: those whose output is read, and those the
// comparator reads. Empty when the sort cannot shrink.
std::vector<int64_t> OperandsToKeep(const Instruction& sort) {
  int n = sort.operand_count();
  if (!sort.shape().IsTuple() || sort.IsRoot() || sort.users().empty()) return {};
  std::vector<bool> keep(n, false);
  for (const Instruction* user : sort.users()) {
    if (user->opcode() != Opcode::kGetTupleElement) return {};
    if (!IsDead(*user)) keep[*user->attrs().index] = true;
  }
  const Computation& comparator = **sort.attrs().to_apply;
  if (comparator.parameter_count() != 2 * n) return {};
  for (int k = 0; k < n; ++k) {
    for (int p : {2 * k, 2 * k + 1}) {
      const Instruction* param = comparator.parameter(p);
      if (param == nullptr || !param->users().empty() || param->IsRoot()) keep[k] = true;
    }
  }
  std::vector<int64_t> kept;
  for (int k = 0; k < n; ++k) {
    if (keep[k]) kept.push_back(k);
  }
  if (static_cast<int>(kept.size()) == n) return {};
  return kept;
}

class SortSimplifierPass : public Pass {
 public:
  absl::StatusOr<bool> Run(Module& module) override {
    expand::Rewriter rewriter(module);
    std::map<std::pair<const Computation*, std::vector<int64_t>>, Computation*> comparators;
    bool changed = false;
    for (Instruction* sort : rewriter.Instructions(Opcode::kSort)) {
      if (sort->opcode() != Opcode::kSort || sort->operand_count() < 1 ||
          !sort->attrs().to_apply || *sort->attrs().to_apply == nullptr) {
        continue;
      }
      bool all_static = true;
      for (const Instruction* operand : sort->operands()) {
        all_static &= expand::IsStaticArray(operand->shape());
      }
      if (!all_static || !OutputsMatchOperands(*sort)) continue;
      HloBuilder b = rewriter.Builder(*sort->parent());
      int64_t length = SortedLength(*sort);
      if (length == 0 || length == 1) {
        ReplaceByOperands(rewriter, b, sort);
        changed = true;
        continue;
      }
      std::vector<int64_t> kept = OperandsToKeep(*sort);
      if (kept.empty()) continue;
      const Computation* comparator = *sort->attrs().to_apply;
      Computation*& smaller = comparators[{comparator, kept}];
      if (smaller == nullptr) {
        std::vector<int64_t> params;
        for (int64_t k : kept) {
          params.push_back(2 * k);
          params.push_back(2 * k + 1);
        }
        smaller = rewriter.CloneWithParameters(*comparator, *comparator->root(), params,
                                               comparator->name());
        if (smaller == nullptr) continue;
      }
      std::vector<Instruction*> operands;
      std::vector<Shape> shapes;
      for (int64_t k : kept) {
        operands.push_back(sort->operand(static_cast<int>(k)));
        shapes.push_back(sort->shape().tuple_shapes()[k]);
      }
      Instruction* smaller_sort = b.Clone(*sort, std::move(operands));
      smaller_sort->mutable_shape() = kept.size() == 1 ? shapes[0] : Shape::Tuple(shapes);
      smaller_sort->mutable_attrs().to_apply = smaller;
      std::vector<Instruction*> users = sort->users();
      for (Instruction* gte : users) {
        auto it = std::find(kept.begin(), kept.end(), *gte->attrs().index);
        if (it == kept.end()) {
          rewriter.Remove(gte);  // dead, and its output is gone
          continue;
        }
        int64_t at = it - kept.begin();
        if (kept.size() == 1) {
          rewriter.ReplaceWithExisting(gte, smaller_sort);
        } else {
          Instruction* moved = b.Clone(*gte, {smaller_sort});
          moved->mutable_attrs().index = at;
          rewriter.ReplaceWithNew(gte, moved);
        }
      }
      rewriter.Remove(sort);
      changed = true;
    }
    rewriter.Flush();
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeSortSimplifierPass() { return std::make_unique<SortSimplifierPass>(); }

}  // namespace seam
