// Strategy `xla`: XLA's classic GPU fusion, the baseline to beat.
//
// 1. Instruction fusion (GpuInstructionFusion): consumers first, each
//    fusible op roots a fusion that absorbs its producers: elementwise,
//    broadcast and data movement ops (loop fusion), also into a reduce
//    (input fusion, the reduce is the root). A reduction is only ever a
//    root: its result leaves the fusion. A producer others still read is
//    duplicated into the fusion when it is cheap; an expensive one is not,
//    nor is one whose elements the fusion would read many times (f32
//    divide, sqrt, rsqrt and exp count as cheap, as XLA's GPU fusion has it).
// 2. Multi-output fusion (GpuMultiOutputFusion): a loop fusion whose value a
//    reduce fusion reads joins it when both iterate the same shape
//    (producer-consumer), and fusions reading the same input join when
//    their shapes agree (siblings), unless that would make a cycle.
//
// Everything XLA keeps thread-local stays local here: no value crosses
// threads inside a kernel, which is what stitching adds.
#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "seam/fusion/op_class.h"
#include "seam/fusion/strategies.h"

namespace seam::fusion {
namespace {

// XLA's limit on a fusion's parameters and outputs.
constexpr size_t kMaxFusionOperands = 96;

// A fusion under construction: a root and the producers fused into it.
struct Fusion {
  const Instruction* root = nullptr;
  std::vector<const Instruction*> members;
  absl::flat_hash_set<const Instruction*> member_set;
  std::vector<const Instruction*> roots;  // more than one after multi-output fusion
  bool alive = true;

  void Add(const Instruction* i) {
    if (member_set.insert(i).second) members.push_back(i);
  }
  bool Contains(const Instruction* i) const { return member_set.contains(i); }
  const Instruction* Hero() const {
    for (const Instruction* r : roots) {
      if (IsReduction(ClassifyOp(*r))) return r;
    }
    return root;
  }
};

// XLA's GPU cost notion (GpuInstructionFusion::IsExpensive): the ops fast
// on GPUs are cheap at f32 and f16; other transcendentals are not.
bool ExpensiveOnGpu(const Instruction& i) {
  if (ClassifyOp(i) != OpClass::kExpensiveElementwise) return false;
  if (!IsFastOnGpu(i.opcode())) return true;
  return i.shape().dtype() != DType::kF32 && i.shape().dtype() != DType::kF16;
}

// Who reads each value: fusions (by id) or unfused instructions. A
// producer is duplicated by fusing when anyone but the fusing one reads it.
using Reader = std::pair<int, const Instruction*>;  // fusion id, or -1 and the instruction

class XlaFusion {
 public:
  explicit XlaFusion(const Computation& computation) : computation_(computation) {
    for (const Instruction* i : computation.MakePostOrder()) {
      post_order_.push_back(i);
      for (const Instruction* user : i->users()) readers_[i].insert({-1, user});
    }
  }

  Partition Run() {
    InstructionFusion();
    BuildReachability();
    ProducerConsumerMultiOutput();
    SiblingMultiOutput();
    Partition partition;
    for (const Fusion& f : fusions_) {
      if (f.alive) partition.kernels.push_back(f.members);
    }
    partition.refusals = std::move(refusals_);
    return partition;
  }

 private:
  // --- 1. instruction fusion ------------------------------------------------

  void InstructionFusion() {
    for (auto it = post_order_.rbegin(); it != post_order_.rend(); ++it) {
      const Instruction* c = *it;
      if (!IsFusible(ClassifyOp(*c))) continue;
      if (readers_[c].empty() && c != computation_.root()) {
        // Fused into all its readers: it no longer reads its operands.
        for (const Instruction* operand : c->operands()) readers_[operand].erase({-1, c});
        continue;
      }
      int id = static_cast<int>(fusions_.size());
      fusions_.emplace_back();
      Fusion& f = fusions_.back();
      f.root = c;
      f.roots = {c};
      f.Add(c);
      for (const Instruction* operand : c->operands()) {
        readers_[operand].erase({-1, c});
        readers_[operand].insert({id, nullptr});
      }
      FuseProducers(id);
    }
  }

  void FuseProducers(int id) {
    bool grew = true;
    while (grew) {
      grew = false;
      std::vector<const Instruction*> candidates;
      for (const Instruction* m : fusions_[id].members) {
        for (const Instruction* operand : m->operands()) {
          if (!fusions_[id].Contains(operand) &&
              std::find(candidates.begin(), candidates.end(), operand) == candidates.end()) {
            candidates.push_back(operand);
          }
        }
      }
      for (const Instruction* p : candidates) {
        // Parameters and constants are inputs, not fusion candidates.
        if (ClassifyOp(*p) == OpClass::kFree) continue;
        std::string why = WhyNotFuse(p, id);
        if (!why.empty()) {
          Refuse(p, fusions_[id].root, why);
          continue;
        }
        Fusion& f = fusions_[id];
        f.Add(p);
        readers_[p].erase({id, nullptr});
        for (const Instruction* operand : p->operands()) {
          if (!f.Contains(operand)) readers_[operand].insert({id, nullptr});
        }
        grew = true;
      }
    }
  }

  // Empty when XLA would fuse `p` into fusion `id`, else why not.
  std::string WhyNotFuse(const Instruction* p, int id) const {
    OpClass c = ClassifyOp(*p);
    if (!IsFusible(c)) return absl::StrCat("producer is ", OpClassName(c));
    if (IsReduction(c)) return "a reduction is only a fusion root: its result leaves the kernel";
    const Fusion& f = fusions_[id];
    bool duplicates = false;
    for (const Reader& r : readers_.at(p)) duplicates |= r.first != id;
    if (ExpensiveOnGpu(*p)) {
      if (duplicates) return "expensive producer read elsewhere: fusing would compute it twice";
      for (const Instruction* m : f.members) {
        for (int k = 0; k < m->operand_count(); ++k) {
          if (m->operand(k) == p && ReusesOperandElements(*m, k)) {
            return "expensive producer whose elements the consumer reads many times";
          }
        }
      }
    }
    if (CountOperands(f, p) > kMaxFusionOperands) return "fusion would exceed 96 operands";
    return "";
  }

  size_t CountOperands(const Fusion& f, const Instruction* extra) const {
    absl::flat_hash_set<const Instruction*> inputs;
    auto add_inputs = [&](const Instruction* m) {
      for (const Instruction* o : m->operands()) {
        if (!f.Contains(o) && o != extra) inputs.insert(o);
      }
    };
    for (const Instruction* m : f.members) add_inputs(m);
    if (extra != nullptr) add_inputs(extra);
    return inputs.size() + f.roots.size();
  }

  void Refuse(const Instruction* producer, const Instruction* consumer, std::string why) {
    if (!refused_.insert({producer, consumer}).second) return;
    refusals_.push_back({producer, consumer, std::move(why)});
  }

  // --- 2. multi-output fusion -----------------------------------------------

  int Alias(int id) const {
    while (merged_into_.contains(id)) id = merged_into_.at(id);
    return id;
  }

  // Nodes of the fusion graph: fusions (id >= 0) and unfused instructions.
  using Node = std::pair<int, const Instruction*>;

  std::vector<Node> Successors(const Node& node) const {
    std::vector<const Instruction*> values;
    if (node.first >= 0) {
      values = fusions_[node.first].roots;
    } else {
      values = {node.second};
    }
    std::vector<Node> out;
    for (const Instruction* v : values) {
      auto it = readers_.find(v);
      if (it == readers_.end()) continue;
      for (const Reader& r : it->second) {
        Node n = r.first >= 0 ? Node{Alias(r.first), nullptr} : Node{-1, r.second};
        if (n != node && std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
      }
    }
    return out;
  }

  int NodeId(const Node& n) const { return n.first >= 0 ? n.first : instruction_node_.at(n.second); }
  bool Bit(int from, int to) const { return (reach_[from * words_ + to / 64] >> (to % 64)) & 1; }

  // Reachability over the fusion graph as bit sets (one row per node),
  // built once before multi-output fusion and kept up to date by Merge.
  void BuildReachability() {
    size_t fusions = fusions_.size();
    for (size_t k = 0; k < post_order_.size(); ++k) {
      instruction_node_[post_order_[k]] = static_cast<int>(fusions + k);
    }
    size_t n = fusions + post_order_.size();
    words_ = (n + 63) / 64;
    reach_.assign(n * words_, 0);
    std::vector<std::vector<int>> successors(n);
    for (size_t f = 0; f < fusions; ++f) {
      for (const Node& s : Successors({static_cast<int>(f), nullptr})) successors[f].push_back(NodeId(s));
    }
    for (size_t k = 0; k < post_order_.size(); ++k) {
      for (const Node& s : Successors({-1, post_order_[k]})) {
        successors[fusions + k].push_back(NodeId(s));
      }
    }
    // Rows in reverse topological order: a node's row is its successors'
    // rows and the successors themselves.
    std::vector<char> state(n, 0);
    for (size_t root = 0; root < n; ++root) {
      if (state[root]) continue;
      std::vector<std::pair<int, size_t>> stack{{static_cast<int>(root), 0}};
      state[root] = 1;
      while (!stack.empty()) {
        auto& [node, next] = stack.back();
        if (next < successors[node].size()) {
          int s = successors[node][next++];
          if (!state[s]) {
            state[s] = 1;
            stack.push_back({s, 0});
          }
          continue;
        }
        for (int s : successors[node]) {
          reach_[node * words_ + s / 64] |= uint64_t{1} << (s % 64);
          for (size_t w = 0; w < words_; ++w) reach_[node * words_ + w] |= reach_[s * words_ + w];
        }
        stack.pop_back();
      }
    }
  }

  // Whether `to` is reachable from `from` through at least one other node.
  bool ReachesIndirectly(int from, int to) const {
    for (const Node& n : Successors({from, nullptr})) {
      int id = NodeId(n);
      if (id != to && Bit(id, to)) return true;
    }
    return false;
  }

  bool Adjacent(int a, int b) const {
    auto reads = [&](int from, int to) {
      std::vector<Node> next = Successors({from, nullptr});
      return std::find(next.begin(), next.end(), Node{to, nullptr}) != next.end();
    };
    return reads(a, b) || reads(b, a);
  }

  bool CanMerge(int a, int b) const {
    return !ReachesIndirectly(a, b) && !ReachesIndirectly(b, a) &&
           CountOperands(fusions_[a], nullptr) + CountOperands(fusions_[b], nullptr) <=
               kMaxFusionOperands;
  }

  void Merge(int into, int from) {
    Fusion& a = fusions_[into];
    Fusion& b = fusions_[from];
    for (const Instruction* m : b.members) a.Add(m);
    a.roots.insert(a.roots.end(), b.roots.begin(), b.roots.end());
    b.alive = false;
    merged_into_[from] = into;  // readers naming `from` resolve through Alias()
    // What reached either now reaches the merged fusion and all it reaches.
    uint64_t* row = &reach_[into * words_];
    for (size_t w = 0; w < words_; ++w) row[w] |= reach_[from * words_ + w];
    size_t n = reach_.size() / words_;
    for (size_t x = 0; x < n; ++x) {
      if (!Bit(static_cast<int>(x), into) && !Bit(static_cast<int>(x), from)) continue;
      reach_[x * words_ + into / 64] |= uint64_t{1} << (into % 64);
      for (size_t w = 0; w < words_; ++w) reach_[x * words_ + w] |= row[w];
    }
  }

  // The shape a fusion iterates: its reduce's input, or its root's shape.
  static const Shape& LoopShape(const Fusion& f) {
    const Instruction* hero = f.Hero();
    return IsReduction(ClassifyOp(*hero)) ? hero->operand(0)->shape() : hero->shape();
  }

  static bool SameReduction(const Instruction* a, const Instruction* b) {
    return a->operand(0)->shape().dims() == b->operand(0)->shape().dims() &&
           a->attrs().dimensions == b->attrs().dimensions;
  }

  // XLA's multi-output compatibility: one loop shape, and reductions only
  // with reductions of the same kind.
  bool Compatible(const Fusion& a, const Fusion& b) const {
    const Instruction* ha = a.Hero();
    const Instruction* hb = b.Hero();
    bool ra = IsReduction(ClassifyOp(*ha)), rb = IsReduction(ClassifyOp(*hb));
    if (ra && rb) return SameReduction(ha, hb);
    return LoopShape(a).dims() == LoopShape(b).dims();
  }

  void ProducerConsumerMultiOutput() {
    for (size_t id = 0; id < fusions_.size(); ++id) {
      if (!fusions_[id].alive || IsReduction(ClassifyOp(*fusions_[id].root))) continue;
      const Instruction* value = fusions_[id].root;
      for (const Reader& r : std::vector<Reader>(readers_[value].begin(), readers_[value].end())) {
        if (r.first < 0) continue;
        int consumer = Alias(r.first);
        if (consumer == static_cast<int>(id) || !fusions_[id].alive) continue;
        const Fusion& c = fusions_[consumer];
        if (!IsReduction(ClassifyOp(*c.Hero())) || !Compatible(fusions_[id], c)) continue;
        if (!CanMerge(consumer, static_cast<int>(id))) {
          Refuse(value, c.Hero(), "multi-output fusion would create a cycle");
          continue;
        }
        Merge(consumer, static_cast<int>(id));
      }
    }
  }

  void SiblingMultiOutput() {
    for (const Instruction* shared : post_order_) {
      // Siblings share a real input, not a scalar.
      if (shared->shape().IsArray() && shared->shape().ElementCount().value_or(0) <= 1) continue;
      std::vector<int> siblings;
      for (const Reader& r : readers_[shared]) {
        if (r.first < 0) continue;
        int id = Alias(r.first);
        if (std::find(siblings.begin(), siblings.end(), id) == siblings.end()) siblings.push_back(id);
      }
      std::sort(siblings.begin(), siblings.end());
      for (size_t i = 0; i < siblings.size(); ++i) {
        for (size_t j = i + 1; j < siblings.size(); ++j) {
          int a = Alias(siblings[i]), b = Alias(siblings[j]);
          if (a == b || !Compatible(fusions_[a], fusions_[b])) continue;
          if (Adjacent(a, b)) {
            Refuse(fusions_[a].Hero(), fusions_[b].Hero(),
                   "siblings read each other: the reader needs the whole value first");
            continue;
          }
          if (!CanMerge(a, b)) {
            Refuse(fusions_[a].Hero(), fusions_[b].Hero(),
                   "sibling multi-output fusion would create a cycle");
            continue;
          }
          Merge(a, b);
        }
      }
    }
  }

  const Computation& computation_;
  std::vector<const Instruction*> post_order_;
  std::vector<Fusion> fusions_;
  absl::flat_hash_map<int, int> merged_into_;
  absl::flat_hash_map<const Instruction*, int> instruction_node_;
  size_t words_ = 0;
  std::vector<uint64_t> reach_;
  absl::flat_hash_map<const Instruction*, absl::flat_hash_set<Reader>> readers_;
  absl::flat_hash_set<std::pair<const Instruction*, const Instruction*>> refused_;
  std::vector<Refusal> refusals_;
};

}  // namespace

Partition PartitionXla(const Computation& computation) { return XlaFusion(computation).Run(); }

}  // namespace seam::fusion
