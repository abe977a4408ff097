#include "seam/fusion/kernel_analysis.h"

#include <algorithm>
#include <climits>
#include <map>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "seam/fusion/cost_model.h"
#include "seam/fusion/one_pass_statistics.h"
#include "seam/fusion/online_softmax.h"
#include "seam/fusion/op_class.h"
#include "seam/fusion/row_space.h"
#include "seam/fusion/thread_mapping.h"

namespace seam::fusion {
namespace {

constexpr int kMixedSplit = -1;

// A column reduction folds in row tiles of at least this many rows: its
// partials, one row of them a tile, are then at most a sixteenth of what
// it reads (rows of 120 KB, a tile each, made partials as large as the
// input: a column reduction of f32[128,30000] ran 4x slower).
constexpr int64_t kMinRowsPerTile = 16;

int64_t ElementBytes(const Shape& shape) {
  return shape.IsArray() ? std::max<int64_t>(1, DTypeByteSize(shape.dtype())) : 4;
}

// The iteration space of a group, before its mapping is chosen.
struct Space {
  MappingKind kind = MappingKind::kRow;
  int64_t rows = 1;
  int64_t row_length = 1;
  bool reduces = false;
  bool fixed = false;  // reductions fix their rows; elementwise groups choose
};

// The working state of one analysis: the kernel's members and, as groups
// form, merge and get mappings, which group holds what.
class Analysis {
 public:
  // `recomputed`: expensive ops recomputed by each group reading them,
  // never passed on as dominants (online softmax's exps).
  Analysis(Kernel& kernel, const target::DeviceSpec& device, const AnalysisOptions& options,
           absl::flat_hash_set<const Instruction*> recomputed = {})
      : kernel_(kernel),
        device_(device),
        recompute_expensive_(options.recompute_expensive),
        one_pass_statistics_(options.one_pass_statistics),
        excess_precision_(options.excess_precision),
        recomputed_(std::move(recomputed)) {
    for (size_t k = 0; k < kernel.instructions.size(); ++k) {
      position_[kernel.instructions[k]] = static_cast<int>(k);
    }
    for (const Instruction* o : kernel.outputs) outputs_.insert(o);
  }

  void Run() {
    CollectInputs();
    kernel_.alias_only = std::all_of(
        kernel_.instructions.begin(), kernel_.instructions.end(), [](const Instruction* i) {
          return i->opcode() == Opcode::kReshape || i->opcode() == Opcode::kBitcast;
        });
    FormGroups();
    MergeSiblings();
    OrderGroups();
    ChooseMappings();
    TileColumnReductions();
    ClassifyEdges();
    DemoteOverflowingRegionals();
    CountBarriers();
    kernel_.cost = EstimateKernelCost(kernel_, device_);
    if (one_pass_statistics_) ChooseOnePass();
  }

 private:
  // Sums of squared deviations folded beside earlier reductions, kept when
  // the estimate says they save a read from memory: a re-read the last
  // level cache serves costs about what their own pass over the run does.
  void ChooseOnePass() {
    kernel_.one_pass = ChooseOnePassStatistics(kernel_, device_, excess_precision_);
    if (kernel_.one_pass.empty()) return;
    Cost one_pass = EstimateKernelCost(kernel_, device_);
    if (one_pass.dram_read_bytes < kernel_.cost.dram_read_bytes) {
      kernel_.cost = one_pass;
    } else {
      kernel_.one_pass.clear();
    }
  }

  bool Contains(const Instruction* i) const { return position_.contains(i); }
  int Position(const Instruction* i) const { return position_.at(i); }

  void CollectInputs() {
    absl::flat_hash_set<const Instruction*> seen;
    for (const Instruction* i : kernel_.instructions) {
      for (const Instruction* operand : i->operands()) {
        if (Contains(operand) || !seen.insert(operand).second) continue;
        // Scalar constants become literals in the generated code.
        if (operand->opcode() == Opcode::kConstant && operand->shape().ArrayElementCount() <= 1) continue;
        kernel_.inputs.push_back(operand);
      }
    }
  }

  // --- Dominants and groups -------------------------------------------

  bool FeedsReusingConsumer(const Instruction* i) const {
    for (const Instruction* user : i->users()) {
      if (!Contains(user)) continue;
      for (int k = 0; k < user->operand_count(); ++k) {
        if (user->operand(k) == i && ReusesOperandElements(*user, k)) return true;
      }
    }
    return false;
  }

  // Whether broadcast `b` lays its operand along its rows: the operand's
  // elements vary along the innermost dimension, so a loop along a row
  // cannot hoist what it computes from them (a scalar's or a row's value
  // it does).
  static bool AlongTheRows(const Instruction& b) {
    const IntList& dims = b.attrs().dimensions.value_or(IntList{});
    return b.shape().rank() > 0 && std::find(dims.begin(), dims.end(), b.shape().rank() - 1) != dims.end();
  }

  // Whether `i` rounds a wider float to bf16 or f16 on a CPU and its
  // value reaches a broadcast along the rows (AlongTheRows) through
  // elementwise ops and reshapes of the same elements: recomputed there,
  // every row rounds it again (ten vector instructions a value, the bulk
  // of a bf16 column normalization's pass). A GPU's lanes round for less
  // than the barrier a group of its own may cost.
  bool RoundedThenReused(const Instruction* i) const {
    auto half = [](DType t) { return t == DType::kBF16 || t == DType::kF16; };
    if (device_.is_gpu() || i->opcode() != Opcode::kConvert || !half(i->shape().dtype())) {
      return false;
    }
    const DType from = i->operand(0)->shape().dtype();
    if (!IsFloat(from) || half(from)) return false;
    const auto elements = i->shape().ElementCount();
    std::vector<const Instruction*> stack{i};
    absl::flat_hash_set<const Instruction*> seen{i};
    while (!stack.empty()) {
      const Instruction* v = stack.back();
      stack.pop_back();
      for (const Instruction* user : v->users()) {
        if (!Contains(user) || !seen.insert(user).second) continue;
        const Opcode op = user->opcode();
        if (op == Opcode::kBroadcast && ReusesOperandElements(*user, 0)) {
          if (AlongTheRows(*user)) return true;
          continue;
        }
        const bool same_elements = user->shape().IsArray() && user->shape().ElementCount() == elements;
        if (same_elements && (IsElementwise(op) || op == Opcode::kReshape || op == Opcode::kBitcast ||
                              op == Opcode::kCopy)) {
          stack.push_back(user);
        }
      }
    }
    return false;
  }

  bool HasUserInside(const Instruction* i) const {
    return std::any_of(i->users().begin(), i->users().end(),
                       [&](const Instruction* u) { return Contains(u); });
  }

  std::string WhyDominant(const Instruction* i) const {
    OpClass c = ClassifyOp(*i);
    if (IsReduction(c)) return std::string(OpClassName(c));
    if (outputs_.contains(i)) return "output";
    if (!HasUserInside(i)) return "result unused inside";
    if (RoundedThenReused(i)) return "rounded to a half type, elements reused";
    if (FeedsReusingConsumer(i)) return "expensive, elements reused";
    return "expensive, read by several groups";
  }

  void FormGroups() {
    for (const Instruction* i : kernel_.instructions) {
      OpClass c = ClassifyOp(*i);
      if (IsReduction(c) || outputs_.contains(i) || !HasUserInside(i) ||
          (!recompute_expensive_ && !recomputed_.contains(i) &&
           ((c == OpClass::kExpensiveElementwise && FeedsReusingConsumer(i)) ||
            RoundedThenReused(i)))) {
        dominant_.insert(i);
      }
    }
    // An expensive op that several groups would recompute is computed once
    // instead: promote it and regroup until nothing changes.
    while (true) {
      BuildGroupsFromDominants();
      bool promoted = false;
      if (recompute_expensive_) break;
      for (const auto& [i, groups] : groups_of_) {
        if (groups.size() > 1 && !dominant_.contains(i) && !recomputed_.contains(i) &&
            ClassifyOp(*i) == OpClass::kExpensiveElementwise) {
          dominant_.insert(i);
          promoted = true;
        }
      }
      if (!promoted) break;
    }
  }

  // Where a group's closure ends: at other dominants, whose values are
  // passed on; when recomputing (XLA), only at reductions, whose values need
  // a whole loop: an output read by another group is recomputed there.
  bool StopsGroup(const Instruction* o) const {
    return dominant_.contains(o) && (!recompute_expensive_ || IsReduction(ClassifyOp(*o)));
  }

  void BuildGroupsFromDominants() {
    kernel_.groups.clear();
    groups_of_.clear();
    for (const Instruction* d : kernel_.instructions) {
      if (!dominant_.contains(d)) continue;
      Group g;
      g.id = static_cast<int>(kernel_.groups.size());
      g.dominant = d;
      g.why = WhyDominant(d);
      absl::flat_hash_set<const Instruction*> in_group{d};
      std::vector<const Instruction*> stack{d};
      while (!stack.empty()) {
        const Instruction* x = stack.back();
        stack.pop_back();
        for (const Instruction* o : x->operands()) {
          if (!Contains(o) || StopsGroup(o) || !in_group.insert(o).second) continue;
          stack.push_back(o);
        }
      }
      g.members.assign(in_group.begin(), in_group.end());
      SortByPosition(g.members);
      for (const Instruction* m : g.members) groups_of_[m].push_back(g.id);
      kernel_.groups.push_back(std::move(g));
    }
  }

  void SortByPosition(std::vector<const Instruction*>& list) const {
    std::sort(list.begin(), list.end(), [&](const Instruction* a, const Instruction* b) {
      return Position(a) < Position(b);
    });
  }

  // --- Sibling merging --------------------------------------------------

  Space SpaceOf(const Instruction* d) const {
    Space s;
    OpClass c = ClassifyOp(*d);
    if (c == OpClass::kRowReduction || c == OpClass::kFullReduction) {
      ReductionShape r = GetReductionShape(*d);
      s.rows = r.rows;
      s.row_length = r.row_length;
      s.reduces = s.fixed = true;
    } else if (c == OpClass::kColumnReduction) {
      ReductionShape r = GetReductionShape(*d);
      s.kind = MappingKind::kColumn;
      s.rows = r.row_length;
      s.row_length = r.rows;
      s.reduces = s.fixed = true;
    } else {
      const Shape& shape = d->shape();
      s.row_length = shape.IsArray() && shape.rank() > 0 ? shape.dim(shape.rank() - 1) : 1;
      s.rows = s.row_length > 0 ? shape.ArrayElementCount() / s.row_length : 0;
    }
    return s;
  }

  // Whether the elementwise value `d` can be computed in the loop of a
  // group iterating `space`, element for element: loops visit every element
  // of their space once, in row-major order for row spaces.
  static bool FitsSpace(const Instruction* d, const Space& space) {
    if (d->shape().ArrayElementCount() != space.rows * space.row_length) return false;
    return space.kind == MappingKind::kColumn || SplitFor(d->shape(), space.rows).has_value();
  }

  // Whether groups a and b iterate the same space, so one loop computes both.
  bool SameSpace(const Group& a, const Group& b) const {
    Space sa = SpaceOf(a.dominant), sb = SpaceOf(b.dominant);
    if (sa.fixed && sb.fixed) {
      return sa.kind == sb.kind && sa.rows == sb.rows && sa.row_length == sb.row_length &&
             SameInputShape(a.dominant, b.dominant);
    }
    if (sa.fixed) return FitsSpace(b.dominant, sa);
    if (sb.fixed) return FitsSpace(a.dominant, sb);
    return a.dominant->shape().ArrayElementCount() == b.dominant->shape().ArrayElementCount();
  }

  static bool SameInputShape(const Instruction* a, const Instruction* b) {
    return a->operand(0)->shape().dims() == b->operand(0)->shape().dims();
  }

  static std::vector<const Instruction*> Dominants(const Group& g) {
    std::vector<const Instruction*> all{g.dominant};
    all.insert(all.end(), g.sub_dominants.begin(), g.sub_dominants.end());
    return all;
  }

  // Whether b's loop can compute what it reads of a's dominants in the same
  // iteration: a reduction's result exists only after its loop, so b must
  // not read it at all; an elementwise dominant may be read, and what b
  // derives from it, only element for element at one shape.
  bool ReadsOnlyLocally(const Group& a, const Group& b) const {
    absl::flat_hash_set<const Instruction*> b_members(b.members.begin(), b.members.end());
    absl::flat_hash_set<const Instruction*> derived;  // a's dominants and b's members reading them
    for (const Instruction* d : Dominants(a)) derived.insert(d);
    for (const Instruction* m : b.members) {  // post order: operands first
      bool reads = false;
      for (int k = 0; k < m->operand_count(); ++k) {
        const Instruction* o = m->operand(k);
        if (!derived.contains(o)) continue;
        reads = true;
        if (IsReduction(ClassifyOp(*o))) return false;
        // Row-major reshapes, and broadcasts adding only size-1 dimensions,
        // keep the linear index: element for element too.
        bool one_to_one = (IsElementwise(m->opcode()) && !ReusesOperandElements(*m, k) &&
                           m->shape().dims() == o->shape().dims()) ||
                          ((m->opcode() == Opcode::kReshape || m->opcode() == Opcode::kBitcast ||
                            m->opcode() == Opcode::kBroadcast) &&
                           m->shape().ArrayElementCount() == o->shape().ArrayElementCount()) ||
                          (IsReduction(ClassifyOp(*m)) && k < m->operand_count() / 2);
        if (!one_to_one) return false;
      }
      if (reads && b_members.contains(m)) derived.insert(m);
    }
    return true;
  }

  // Group-level reachability: whether `to` depends on `from` through a
  // third group.
  bool DependsThroughOthers(int from, int to) const {
    std::vector<char> seen(kernel_.groups.size(), 0);
    std::vector<int> stack;
    for (int next : Successors(from)) {
      if (next != to && !seen[next]) {
        seen[next] = 1;
        stack.push_back(next);
      }
    }
    while (!stack.empty()) {
      int g = stack.back();
      stack.pop_back();
      for (int next : Successors(g)) {
        if (next == to) return true;
        if (!seen[next]) {
          seen[next] = 1;
          stack.push_back(next);
        }
      }
    }
    return false;
  }

  std::vector<int> Successors(int g) const {
    std::vector<int> out;
    for (const Instruction* d : Dominants(kernel_.groups[g])) {
      for (const Instruction* user : d->users()) {
        auto it = groups_of_.find(user);
        if (it == groups_of_.end()) continue;
        for (int h : it->second) {
          if (h != g && std::find(out.begin(), out.end(), h) == out.end()) out.push_back(h);
        }
      }
    }
    return out;
  }

  // Related groups first: one reading the other's values or both reading
  // an input, where merging keeps a value in the loop or reads the input
  // once; only then any two of the same space, which share a loop and no
  // data. (In index order alone, a LAMB tensor's moments joined the
  // previous tensor's output pass, of the same element count, and its
  // update went to memory for its own norm's pass to read back.) On a CPU
  // two such groups stay apart when together they move more than the
  // last-level cache: one loop then runs both groups' streams of memory at
  // once, where a loop each takes them in turn (Adam's two largest
  // tensors, 14 streams: 11.63 -> 10.84 ms apart on a 2-core Xeon), while
  // small ones save a loop's start merged (GPT-2's kernels 3% faster).
  void MergeSiblings() {
    for (bool related_only : {true, false}) {
      while (MergeOnePair(related_only)) {
      }
    }
  }

  bool MergeOnePair(bool related_only) {
    for (size_t a = 0; a < kernel_.groups.size(); ++a) {
      for (size_t b = a + 1; b < kernel_.groups.size(); ++b) {
        const Group& ga = kernel_.groups[a];
        const Group& gb = kernel_.groups[b];
        if ((related_only && !Related(static_cast<int>(a), static_cast<int>(b))) ||
            !SameSpace(ga, gb) ||
            (!related_only && !device_.is_gpu() && device_.last_level_cache_bytes > 0 &&
             MemoryBytes(ga) + MemoryBytes(gb) > device_.last_level_cache_bytes) ||
            !ReadsOnlyLocally(ga, gb) || !ReadsOnlyLocally(gb, ga) || LosesRowLocality(ga, gb) ||
            DependsThroughOthers(static_cast<int>(a), static_cast<int>(b)) ||
            DependsThroughOthers(static_cast<int>(b), static_cast<int>(a))) {
          continue;
        }
        MergeGroups(static_cast<int>(a), static_cast<int>(b));
        return true;
      }
    }
    return false;
  }

  // The kernel's inputs group `g` reads.
  absl::flat_hash_set<const Instruction*> InputsRead(const Group& g) const {
    absl::flat_hash_set<const Instruction*> inputs;
    for (const Instruction* m : g.members) {
      for (const Instruction* o : m->operands()) {
        if (!Contains(o)) inputs.insert(o);
      }
    }
    return inputs;
  }

  // Bytes group `g` reads from the kernel's inputs and writes to its
  // outputs.
  int64_t MemoryBytes(const Group& g) const {
    int64_t bytes = 0;
    for (const Instruction* v : InputsRead(g)) bytes += ValueBytes(v->shape());
    for (const Instruction* m : g.members) {
      if (outputs_.contains(m)) bytes += ValueBytes(m->shape());
    }
    return bytes;
  }

  // Whether group a reads group b's values or b a's, or both read one of
  // the kernel's inputs.
  bool Related(int a, int b) const {
    auto reads = [&](int from, int to) {
      const std::vector<int> next = Successors(from);
      return std::find(next.begin(), next.end(), to) != next.end();
    };
    if (reads(a, b) || reads(b, a)) return true;
    const absl::flat_hash_set<const Instruction*> inputs = InputsRead(kernel_.groups[a]);
    for (const Instruction* o : InputsRead(kernel_.groups[b])) {
      if (inputs.contains(o) && o->shape().ArrayElementCount() > 1) return true;
    }
    return false;
  }

  // Whether merging would move a group that reads other groups' rows into a
  // column-mapped loop, where every such read turns global.
  bool LosesRowLocality(const Group& a, const Group& b) const {
    auto column = [&](const Group& g) { return SpaceOf(g.dominant).kind == MappingKind::kColumn; };
    auto reads_others = [&](const Group& g, const Group& other) {
      std::vector<const Instruction*> others = Dominants(other);
      bool reads = false;
      ForEachCrossRead(g, [&](const Instruction*, int, const Instruction* producer) {
        reads |= std::find(others.begin(), others.end(), producer) == others.end();
      });
      return reads;
    };
    return (column(a) && !column(b) && reads_others(b, a)) ||
           (column(b) && !column(a) && reads_others(a, b));
  }

  // Groups in an order where each runs after the groups whose dominants it
  // reads (merging can move a group before one it reads), ties by position.
  void OrderGroups() {
    size_t n = kernel_.groups.size();
    std::vector<int> waiting(n, 0);
    std::vector<std::vector<int>> next(n);
    for (size_t g = 0; g < n; ++g) {
      for (int h : Successors(static_cast<int>(g))) {
        next[g].push_back(h);
        ++waiting[h];
      }
    }
    auto first_position = [&](int g) {
      int p = INT32_MAX;
      for (const Instruction* d : Dominants(kernel_.groups[g])) p = std::min(p, Position(d));
      return p;
    };
    std::vector<Group> ordered;
    std::vector<char> done(n, 0);
    while (ordered.size() < n) {
      int pick = -1;
      for (size_t g = 0; g < n; ++g) {
        if (done[g] || waiting[g] > 0) continue;
        if (pick < 0 || first_position(static_cast<int>(g)) < first_position(pick)) pick = static_cast<int>(g);
      }
      if (pick < 0) break;  // a cycle: cannot happen for an acyclic kernel
      done[pick] = 1;
      for (int h : next[pick]) --waiting[h];
      ordered.push_back(kernel_.groups[pick]);
    }
    if (ordered.size() != n) return;
    kernel_.groups = std::move(ordered);
    Renumber();
  }

  // b joins a; the reduction, if either has one, stays dominant.
  void MergeGroups(int a, int b) {
    Group& ga = kernel_.groups[a];
    Group gb = std::move(kernel_.groups[b]);
    bool b_leads = !SpaceOf(ga.dominant).fixed && SpaceOf(gb.dominant).fixed;
    if (b_leads) {
      std::swap(ga.dominant, gb.dominant);
      std::swap(ga.why, gb.why);
    }
    ga.sub_dominants.push_back(gb.dominant);
    ga.sub_dominants.insert(ga.sub_dominants.end(), gb.sub_dominants.begin(),
                            gb.sub_dominants.end());
    for (const Instruction* m : gb.members) {
      if (std::find(ga.members.begin(), ga.members.end(), m) == ga.members.end()) {
        ga.members.push_back(m);
      }
    }
    SortByPosition(ga.members);
    SortByPosition(ga.sub_dominants);
    kernel_.groups.erase(kernel_.groups.begin() + b);
    Renumber();
  }

  void Renumber() {
    groups_of_.clear();
    for (size_t g = 0; g < kernel_.groups.size(); ++g) {
      kernel_.groups[g].id = static_cast<int>(g);
      for (const Instruction* m : kernel_.groups[g].members) {
        groups_of_[m].push_back(static_cast<int>(g));
      }
    }
  }

  // --- Mappings and row splits -----------------------------------------

  // Splits of every member of group g under `rows` rows, from its dominants
  // towards its inputs; kMixedSplit where some reader needs other rows.
  absl::flat_hash_map<const Instruction*, int> PropagateSplits(const Group& g,
                                                                int64_t rows) const {
    absl::flat_hash_map<const Instruction*, int> split;
    const std::vector<const Instruction*> dominants = Dominants(g);
    for (const Instruction* d : dominants) {
      // A column reduction in row tiles reads row r of its input at row r.
      const Shape& shape = g.mapping.row_tiled ? d->operand(0)->shape() : d->shape();
      std::optional<int> k = SplitFor(shape, rows);
      split[g.mapping.row_tiled ? d->operand(0) : d] = k.has_value() ? *k : kMixedSplit;
    }
    absl::flat_hash_set<const Instruction*> in_group(g.members.begin(), g.members.end());
    for (auto it = g.members.rbegin(); it != g.members.rend(); ++it) {
      const Instruction* m = *it;
      if (g.mapping.row_tiled &&
          std::find(dominants.begin(), dominants.end(), m) != dominants.end()) {
        continue;  // its input's rows are seeded above
      }
      auto found = split.find(m);
      int s = found == split.end() ? kMixedSplit : found->second;
      for (int k = 0; k < m->operand_count(); ++k) {
        const Instruction* o = m->operand(k);
        if (!in_group.contains(o) || StopsGroup(o)) continue;
        int want = kMixedSplit;
        if (s != kMixedSplit) {
          OperandRows r = OperandRowsOf(*m, s, k);
          if (r.kind == OperandRows::kSameRows) want = r.split;
        }
        auto [slot, inserted] = split.try_emplace(o, want);
        if (!inserted && slot->second != want) slot->second = kMixedSplit;
      }
    }
    return split;
  }

  // The producer groups whose dominants group g reads row for row when it
  // iterates `rows` rows.
  int RegionalReads(const Group& g, int64_t rows) const {
    absl::flat_hash_map<const Instruction*, int> split = PropagateSplits(g, rows);
    int count = 0;
    ForEachCrossRead(g, [&](const Instruction* consumer, int k, const Instruction* producer) {
      auto it = split.find(consumer);
      if (it == split.end() || it->second == kMixedSplit) return;
      OperandRows r = OperandRowsOf(*consumer, it->second, k);
      if (r.kind != OperandRows::kSameRows) return;
      const Group& p = kernel_.groups[GroupOfDominant(producer)];
      if (p.mapping.kind == MappingKind::kRow && p.mapping.rows == rows) ++count;
    });
    return count;
  }

  template <typename Fn>
  void ForEachCrossRead(const Group& g, Fn fn) const {
    std::vector<const Instruction*> dominants = Dominants(g);
    absl::flat_hash_set<const Instruction*> own(dominants.begin(), dominants.end());
    for (const Instruction* m : g.members) {
      for (int k = 0; k < m->operand_count(); ++k) {
        const Instruction* o = m->operand(k);
        if (StopsGroup(o) && !own.contains(o) && Contains(o)) fn(m, k, o);
      }
    }
  }

  int GroupOfDominant(const Instruction* d) const { return groups_of_.at(d).front(); }

  void ChooseMappings() {
    // A CPU kernel's column folds may take partials per row tile (see
    // TileColumnReductions).
    const bool column_folds =
        !device_.is_gpu() &&
        std::any_of(kernel_.groups.begin(), kernel_.groups.end(), [&](const Group& g) {
          const Space s = SpaceOf(g.dominant);
          return s.kind == MappingKind::kColumn && s.reduces && FoldsLeadingDims(g);
        });
    for (Group& g : kernel_.groups) {
      Space s = SpaceOf(g.dominant);
      if (!s.fixed) {
        // Locality first: iterate the rows of a producer when that makes
        // its values regional (AStitch's proactive check).
        int best = RegionalReads(g, s.rows);
        ForEachCrossRead(g, [&](const Instruction*, int, const Instruction* producer) {
          const ThreadMapping& p = kernel_.groups[GroupOfDominant(producer)].mapping;
          if (p.kind != MappingKind::kRow || p.rows == s.rows) return;
          if (!SplitFor(g.dominant->shape(), p.rows).has_value()) return;
          int reads = RegionalReads(g, p.rows);
          if (reads > best) {
            best = reads;
            s.row_length = g.dominant->shape().ArrayElementCount() / std::max<int64_t>(1, p.rows);
            s.rows = p.rows;
          }
        });
      }
      MappingRequest request{s.kind, s.rows, s.row_length,
                             ElementBytes(s.reduces ? g.dominant->operand(0)->shape()
                                                    : g.dominant->shape()),
                             s.reduces, column_folds};
      g.mapping = ChooseMapping(request, device_);
    }
  }

  // --- Column reductions in row tiles (CPU) ------------------------------

  // A column reduction folding the leading dimensions of its input, whose
  // rows are those of a row-mapped group that reads what it reads (an
  // input, or a value of a row group), folds each of that group's row
  // tiles into partials in the same loop (ThreadMapping::row_tiled): its
  // rows are read once, while the row phase has them in cache, not again
  // by a loop of its own. A CPU's tiles only: a GPU block's threads own
  // columns of a column reduction.
  void TileColumnReductions() {
    if (device_.is_gpu()) return;
    for (Group& g : kernel_.groups) {
      ThreadMapping& m = g.mapping;
      if (m.kind != MappingKind::kColumn || !m.reduces || !FoldsLeadingDims(g)) continue;
      for (const Group& h : kernel_.groups) {
        const ThreadMapping& row = h.mapping;
        if (&h == &g || row.kind != MappingKind::kRow || row.rows != m.rows ||
            row.row_length != m.row_length || row.blocks_per_row != 1 ||
            row.rows_per_block < kMinRowsPerTile || !ReadsAlike(g, h)) {
          continue;
        }
        m.row_tiled = true;
        m.rows_per_block = row.rows_per_block;
        m.blocks_per_row = (m.rows + m.rows_per_block - 1) / m.rows_per_block;
        m.blocks = m.blocks_per_row;
        break;
      }
    }
  }

  // Whether every reduction of g folds exactly the leading dimensions of
  // its input: its rows are then the input's rows, row-major.
  static bool FoldsLeadingDims(const Group& g) {
    for (const Instruction* d : Dominants(g)) {
      if (d->opcode() != Opcode::kReduce) return false;
      IntList dims = d->attrs().dimensions.value_or(IntList{});
      std::sort(dims.begin(), dims.end());
      for (size_t k = 0; k < dims.size(); ++k) {
        if (dims[k] != static_cast<int64_t>(k)) return false;
      }
    }
    return true;
  }

  // Whether g reads an input that h reads a row at a time, or a dominant
  // of a row-mapped group over h's rows.
  bool ReadsAlike(const Group& g, const Group& h) const {
    const int64_t elements = h.mapping.rows * h.mapping.row_length;
    absl::flat_hash_set<const Instruction*> h_reads;
    for (const Instruction* m : h.members)
      h_reads.insert(m->operands().begin(), m->operands().end());
    for (const Instruction* m : g.members) {
      for (const Instruction* o : m->operands()) {
        if (!Contains(o)) {
          if (h_reads.contains(o) && o->shape().ArrayElementCount() == elements) return true;
          continue;
        }
        if (!StopsGroup(o)) continue;
        const ThreadMapping& producer = kernel_.groups[GroupOfDominant(o)].mapping;
        if (producer.kind == MappingKind::kRow && producer.rows == h.mapping.rows) return true;
      }
    }
    return false;
  }

  // --- Edges and schemes -------------------------------------------------

  void ClassifyEdges() {
    std::vector<absl::flat_hash_map<const Instruction*, int>> splits;
    for (const Group& g : kernel_.groups) {
      splits.push_back(g.mapping.kind == MappingKind::kRow || g.mapping.row_tiled
                           ? PropagateSplits(g, g.mapping.rows)
                           : absl::flat_hash_map<const Instruction*, int>{});
    }
    for (const Instruction* c : kernel_.instructions) {
      for (int k = 0; k < c->operand_count(); ++k) {
        const Instruction* p = c->operand(k);
        if (!Contains(p)) continue;
        if (std::any_of(kernel_.edges.begin(), kernel_.edges.end(), [&](const Edge& e) {
              return e.producer == p && e.consumer == c;
            })) {
          continue;  // the same value read twice by one op
        }
        kernel_.edges.push_back(ClassifyEdge(p, c, k, splits));
      }
    }
  }

  Edge ClassifyEdge(const Instruction* p, const Instruction* c, int k,
                    const std::vector<absl::flat_hash_map<const Instruction*, int>>& splits) {
    Edge e{p, c, Scheme::kLocal, ""};
    const std::vector<int>& consumer_groups = groups_of_.at(c);
    const std::vector<int>& producer_groups = groups_of_.at(p);
    for (int g : consumer_groups) {
      if (std::find(producer_groups.begin(), producer_groups.end(), g) != producer_groups.end()) {
        return e;  // computed in the consumer's own loop
      }
    }
    Group& consumer = kernel_.groups[consumer_groups.front()];
    const Group& producer = kernel_.groups[GroupOfDominant(p)];
    e.scheme = Scheme::kGlobal;
    const bool tiled = consumer.mapping.row_tiled;
    if (producer.mapping.kind != MappingKind::kRow ||
        (consumer.mapping.kind != MappingKind::kRow && !tiled)) {
      e.reason = "column-mapped group: blocks own columns, not rows";
      return e;
    }
    if (producer.mapping.reduces && producer.mapping.blocks_per_row > 1) {
      e.reason = "producer rows are split across blocks";
      return e;
    }
    if (producer.mapping.rows != consumer.mapping.rows) {
      e.reason = absl::StrCat("row spaces differ (", producer.mapping.rows, " vs ",
                              consumer.mapping.rows, " rows)");
      return e;
    }
    const auto& split = splits[consumer.id];
    const std::vector<const Instruction*> folds = Dominants(consumer);
    bool same_rows;
    if (tiled && std::find(folds.begin(), folds.end(), c) != folds.end()) {
      // A column reduction in row tiles folds row r of its input at row r.
      same_rows = k == 0 && SplitFor(p->shape(), consumer.mapping.rows).has_value();
    } else {
      auto it = split.find(c);
      same_rows = it != split.end() && it->second != kMixedSplit &&
                  OperandRowsOf(*c, it->second, k).kind == OperandRows::kSameRows;
    }
    if (!same_rows) {
      e.reason = "a consumer row reads other rows of the producer";
      return e;
    }
    if (tiled ? consumer.mapping.rows_per_block != producer.mapping.rows_per_block ||
                    producer.mapping.blocks_per_row != 1
              : !AlignRows(consumer.mapping, producer.mapping, device_)) {
      e.reason = "blocks cannot be aligned";
      return e;
    }
    e.scheme = Scheme::kRegional;
    e.reason = "same rows in the same block: kept on chip between stages";
    return e;
  }

  // Regional values live in on-chip memory per block; when they overflow,
  // the largest goes to global memory first (AStitch section 4.4).
  void DemoteOverflowingRegionals() {
    while (true) {
      std::map<const Instruction*, int64_t> bytes;
      for (const Edge& e : kernel_.edges) {
        if (e.scheme != Scheme::kRegional) continue;
        const ThreadMapping& m = kernel_.groups[groups_of_.at(e.consumer).front()].mapping;
        int64_t per_row = e.producer->shape().ArrayElementCount() / std::max<int64_t>(1, m.rows);
        bytes[e.producer] = std::max(bytes[e.producer],
                                     per_row * m.rows_per_block * ElementBytes(e.producer->shape()));
      }
      int64_t total = 0;
      const Instruction* largest = nullptr;
      for (const auto& [p, b] : bytes) {
        total += b;
        if (largest == nullptr || b > bytes[largest]) largest = p;
      }
      kernel_.onchip_bytes = total;
      if (total <= device_.onchip_bytes_per_block || largest == nullptr) return;
      for (Edge& e : kernel_.edges) {
        if (e.producer == largest && e.scheme == Scheme::kRegional) {
          e.scheme = Scheme::kGlobal;
          e.reason = absl::StrCat("demoted: regional values need ", total, " bytes per block, over ",
                                  device_.onchip_bytes_per_block);
        }
      }
    }
  }

  // A grid barrier separates groups that read a global value from its
  // producer: the barrier count is the longest chain of global edges, plus
  // one where split rows are combined with no later barrier to do it.
  void CountBarriers() {
    std::vector<int> level(kernel_.groups.size(), 0);
    for (const Group& g : kernel_.groups) {
      for (const Edge& e : kernel_.edges) {
        if (e.scheme == Scheme::kLocal) continue;
        if (std::find(g.members.begin(), g.members.end(), e.consumer) == g.members.end()) continue;
        int from = GroupOfDominant(e.producer);
        if (from == g.id) continue;
        level[g.id] = std::max(level[g.id], level[from] + (e.scheme == Scheme::kGlobal ? 1 : 0));
      }
    }
    for (Group& g : kernel_.groups) g.barriers_before = level[g.id];
    int barriers = level.empty() ? 0 : *std::max_element(level.begin(), level.end());
    for (const Group& g : kernel_.groups) {
      if (g.mapping.reduces && g.mapping.blocks_per_row > 1 && level[g.id] == barriers) {
        ++barriers;  // the partials of the last split stage
        break;
      }
    }
    kernel_.grid_barriers = barriers;
    if (barriers > 0 && device_.is_gpu()) {
      for (Group& g : kernel_.groups) PackVertically(g.mapping, device_);
    }
  }

  Kernel& kernel_;
  const target::DeviceSpec& device_;
  bool recompute_expensive_;
  bool one_pass_statistics_;
  bool excess_precision_;
  absl::flat_hash_set<const Instruction*> recomputed_;
  absl::flat_hash_map<const Instruction*, int> position_;
  absl::flat_hash_set<const Instruction*> outputs_;
  absl::flat_hash_set<const Instruction*> dominant_;
  absl::flat_hash_map<const Instruction*, std::vector<int>> groups_of_;
};

}  // namespace

namespace {

// Everything AnalyzeKernel fills in, emptied.
void ClearAnalysis(Kernel& kernel) {
  kernel.inputs.clear();
  kernel.groups.clear();
  kernel.edges.clear();
  kernel.one_pass.clear();
  kernel.online_softmax.clear();
  kernel.cost = Cost{};
  kernel.grid_barriers = 0;
  kernel.onchip_bytes = 0;
}

}  // namespace

void AnalyzeKernel(Kernel& kernel, const target::DeviceSpec& device,
                   const AnalysisOptions& options) {
  ClearAnalysis(kernel);
  Analysis(kernel, device, options).Run();
  if (!options.online_softmax || options.recompute_expensive) return;
  // Online softmax: analyzed again with the exps its sums fold recomputed,
  // kept when the estimate moves fewer bytes through memory.
  absl::flat_hash_set<const Instruction*> exps = OnlineSoftmaxExps(kernel, device);
  if (exps.empty()) return;
  Kernel online = kernel;
  ClearAnalysis(online);
  Analysis(online, device, options, std::move(exps)).Run();
  online.online_softmax = ChooseOnlineSoftmax(online, device);
  if (online.online_softmax.empty()) return;
  online.cost = EstimateKernelCost(online, device);
  if (online.cost.dram_bytes() + online.cost.scratch_bytes <
      kernel.cost.dram_bytes() + kernel.cost.scratch_bytes) {
    kernel = std::move(online);
  }
}

}  // namespace seam::fusion
