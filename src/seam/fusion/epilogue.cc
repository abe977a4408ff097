#include "seam/fusion/epilogue.h"

#include <algorithm>
#include <optional>
#include <queue>

#include "absl/container/flat_hash_set.h"
#include "seam/fusion/cost_model.h"
#include "seam/fusion/op_class.h"

namespace seam::fusion {
namespace {

// An elementwise op over the call's dimensions, real-valued, with no
// control edges (those pin it to the kernel schedule).
bool Chainable(const Instruction& op, const std::vector<int64_t>& dims) {
  const OpClass c = ClassifyOp(op);
  if (c != OpClass::kLightElementwise && c != OpClass::kExpensiveElementwise) return false;
  if (!op.control_predecessors().empty() || !op.control_successors().empty()) return false;
  if (op.shape().dims() != dims || IsComplex(op.shape().dtype())) return false;
  return std::none_of(op.operands().begin(), op.operands().end(),
                      [](const Instruction* o) { return IsComplex(o->shape().dtype()); });
}

// Whether reading `v` from memory costs nothing a kernel would not spend
// anyway: it is small enough to stay in cache (`cached` bytes), or
// something must write it regardless (a parameter, a constant, a library
// call's result or its epilogue's, a value a non-fusible op or the root
// reads).
bool InMemoryAnyway(const Instruction& v, int64_t cached,
                    const absl::flat_hash_set<const Instruction*>& chained) {
  if (!v.shape().IsArray() || ValueBytes(v.shape()) <= cached) return true;
  if (chained.contains(&v)) return true;
  if (!IsFusible(ClassifyOp(v)) || &v == v.parent()->root()) return true;
  return std::any_of(v.users().begin(), v.users().end(),
                     [](const Instruction* u) { return !IsFusible(ClassifyOp(*u)); });
}

void AddOnce(std::vector<const Instruction*>& list, const Instruction* v) {
  if (std::find(list.begin(), list.end(), v) == list.end()) list.push_back(v);
}

// What leaves the kernels when `attached` is: every chain op, and the
// broadcasts only chain ops read (each epilogue computes its own) unless
// the root is one.
absl::flat_hash_set<const Instruction*> Leaving(
    const absl::flat_hash_map<const Instruction*, Epilogue>& attached) {
  absl::flat_hash_set<const Instruction*> chain;
  for (const auto& [call, e] : attached) {
    for (const Instruction* op : e.ops) {
      if (op->opcode() != Opcode::kBroadcast) chain.insert(op);
    }
  }
  absl::flat_hash_set<const Instruction*> leaving = chain;
  for (const auto& [call, e] : attached) {
    for (const Instruction* op : e.ops) {
      if (op->opcode() != Opcode::kBroadcast || op == op->parent()->root()) continue;
      if (std::all_of(op->users().begin(), op->users().end(),
                      [&](const Instruction* u) { return chain.contains(u); })) {
        leaving.insert(op);
      }
    }
  }
  return leaving;
}

// Takes what leaves out of the kernels, dropping kernels left empty.
void RemoveFromKernels(const absl::flat_hash_set<const Instruction*>& leaving, Partition& partition) {
  std::vector<int> renumbered(partition.kernels.size(), -1);
  std::vector<std::vector<const Instruction*>> kept;
  for (size_t k = 0; k < partition.kernels.size(); ++k) {
    std::vector<const Instruction*>& kernel = partition.kernels[k];
    kernel.erase(std::remove_if(kernel.begin(), kernel.end(),
                                [&](const Instruction* i) { return leaving.contains(i); }),
                 kernel.end());
    if (kernel.empty()) continue;
    renumbered[k] = static_cast<int>(kept.size());
    kept.push_back(std::move(kernel));
  }
  partition.kernels = std::move(kept);
  absl::flat_hash_map<const Instruction*, int> writer;
  for (const auto& [value, k] : partition.writer) {
    if (!leaving.contains(value) && renumbered[k] >= 0) writer[value] = renumbered[k];
  }
  partition.writer = std::move(writer);
}

// Splits each kernel that computes an epilogue's input and also reads an
// attached call's result (a stitched kernel holding both a batch norm's
// scale and the pad after its activation) in two: what depends on no
// attached call, then the rest. False, leaving the partition half split,
// when a large value would pass from one part to the other through memory.
bool SplitAroundEpilogues(const std::vector<Instruction*>& post_order,
                          const absl::flat_hash_map<const Instruction*, Epilogue>& attached,
                          int64_t cached, Partition& partition) {
  absl::flat_hash_set<const Instruction*> after_calls, inputs;
  for (const Instruction* i : post_order) {
    if (attached.contains(i)) after_calls.insert(i);
    for (const Instruction* o : i->operands()) {
      if (after_calls.contains(o)) after_calls.insert(i);
    }
  }
  for (const auto& [call, e] : attached) inputs.insert(e.inputs.begin(), e.inputs.end());
  const size_t kernels = partition.kernels.size();
  for (size_t k = 0; k < kernels; ++k) {
    std::vector<const Instruction*>& kernel = partition.kernels[k];
    const bool feeds = std::any_of(kernel.begin(), kernel.end(),
                                   [&](const Instruction* i) { return inputs.contains(i); });
    if (!feeds) continue;
    auto later = std::stable_partition(kernel.begin(), kernel.end(),
                                       [&](const Instruction* i) { return !after_calls.contains(i); });
    if (later == kernel.begin() || later == kernel.end()) continue;
    std::vector<const Instruction*> rest(later, kernel.end());
    kernel.erase(later, kernel.end());
    absl::flat_hash_set<const Instruction*> in_rest(rest.begin(), rest.end());
    for (const Instruction* i : kernel) {
      const bool crosses = std::any_of(i->users().begin(), i->users().end(),
                                       [&](const Instruction* u) { return in_rest.contains(u); });
      if (crosses && !InMemoryAnyway(*i, cached, {})) return false;
    }
    const int moved_to = static_cast<int>(partition.kernels.size());
    for (const Instruction* i : rest) {
      auto writer = partition.writer.find(i);
      if (writer != partition.writer.end() && writer->second == static_cast<int>(k)) {
        writer->second = moved_to;
      }
    }
    partition.kernels.push_back(std::move(rest));
  }
  return true;
}

// Whether kernels, calls with their epilogues and every other instruction,
// each a unit that runs whole, depend on each other without a cycle.
bool Acyclic(const std::vector<Instruction*>& post_order, const Partition& partition,
             const absl::flat_hash_map<const Instruction*, Epilogue>& attached) {
  std::vector<std::vector<const Instruction*>> members;
  absl::flat_hash_map<const Instruction*, int> producer;
  for (size_t k = 0; k < partition.kernels.size(); ++k) {
    members.push_back(partition.kernels[k]);
    for (const Instruction* i : partition.kernels[k]) {
      auto writer = partition.writer.find(i);
      producer.try_emplace(i, writer != partition.writer.end() ? writer->second : static_cast<int>(k));
    }
  }
  for (const auto& [call, e] : attached) {
    const int unit = static_cast<int>(members.size());
    std::vector<const Instruction*>& own = members.emplace_back(e.ops);
    own.push_back(call);
    producer[call] = unit;
    for (const Instruction* op : e.ops) {
      if (op->opcode() != Opcode::kBroadcast) producer[op] = unit;
    }
  }
  for (const Instruction* i : post_order) {
    if (producer.contains(i)) continue;
    producer[i] = static_cast<int>(members.size());
    members.push_back({i});
  }
  absl::flat_hash_set<std::pair<const Instruction*, int>> computes;
  for (size_t u = 0; u < members.size(); ++u) {
    for (const Instruction* m : members[u]) computes.insert({m, static_cast<int>(u)});
  }
  std::vector<absl::flat_hash_set<int>> next(members.size());
  std::vector<int> waiting(members.size(), 0);
  for (size_t u = 0; u < members.size(); ++u) {
    for (const Instruction* m : members[u]) {
      auto depend = [&](const Instruction* o) {
        if (computes.contains({o, static_cast<int>(u)})) return;
        const int from = producer.at(o);
        if (next[from].insert(static_cast<int>(u)).second) ++waiting[u];
      };
      for (const Instruction* o : m->operands()) depend(o);
      for (const Instruction* o : m->control_predecessors()) depend(o);
    }
  }
  std::queue<int> ready;
  for (size_t u = 0; u < members.size(); ++u) {
    if (waiting[u] == 0) ready.push(static_cast<int>(u));
  }
  size_t done = 0;
  while (!ready.empty()) {
    const int u = ready.front();
    ready.pop();
    ++done;
    for (int n : next[u]) {
      if (--waiting[n] == 0) ready.push(n);
    }
  }
  return done == members.size();
}

// The partition once `attached` take their chains: out of the kernels,
// which are split where an epilogue's input and a reader of an attached
// call share one. Nothing when the split would cost more than it saves or
// units would depend on each other in a cycle.
std::optional<Partition> WithEpilogues(
    const std::vector<Instruction*>& post_order, const Partition& partition,
    const absl::flat_hash_map<const Instruction*, Epilogue>& attached, int64_t cached) {
  Partition after = partition;
  RemoveFromKernels(Leaving(attached), after);
  if (!SplitAroundEpilogues(post_order, attached, cached, after) ||
      !Acyclic(post_order, after, attached)) {
    return std::nullopt;
  }
  return after;
}

// Every value on the chain of elementwise single readers after a library
// call: the end of each is some epilogue's result, written to memory.
absl::flat_hash_set<const Instruction*> ChainedValues(const std::vector<Instruction*>& post_order) {
  absl::flat_hash_set<const Instruction*> chained;
  for (const Instruction* call : post_order) {
    if (ClassifyOp(*call) != OpClass::kLibrary || !call->shape().IsArray()) continue;
    const Instruction* current = call;
    while (current != call->parent()->root() && current->users().size() == 1 &&
           Chainable(*current->users()[0], call->shape().dims())) {
      current = current->users()[0];
      chained.insert(current);
    }
  }
  return chained;
}

// The chain call `call` takes as its epilogue: while the value reached so
// far has one reader, that reader is an elementwise op of the call's
// dimensions, not `taken` by another call's chain, reading nothing costly
// beside the chain (see InMemoryAnyway), and the chain has not reached the root. `chained`: every
// value some call's chain could reach (see InMemoryAnyway).
Epilogue ChainOf(const Instruction& call, int64_t cached,
                 const absl::flat_hash_set<const Instruction*>& taken,
                 const absl::flat_hash_set<const Instruction*>& chained) {
  Epilogue e;
  if (call.opcode() != Opcode::kDot && call.opcode() != Opcode::kConvolution) return e;
  if (!call.shape().IsArray() || IsComplex(call.shape().dtype()) || call.parent() == nullptr) {
    return e;
  }
  const Instruction* current = &call;
  while (current != call.parent()->root() && current->users().size() == 1) {
    const Instruction* next = current->users()[0];
    if (taken.contains(next) || !Chainable(*next, call.shape().dims())) break;
    // What the op reads beside the chain must not cost more than the
    // chain saves: a kernel would otherwise compute it in registers.
    const bool cheap = std::all_of(next->operands().begin(), next->operands().end(), [&](auto* o) {
      return o == current || InMemoryAnyway(o->opcode() == Opcode::kBroadcast ? *o->operand(0) : *o, cached, chained);
    });
    if (!cheap) break;
    for (const Instruction* o : next->operands()) {
      if (o == current) continue;
      // A broadcast (a bias, a scale) is recomputed by index; anything
      // else of the call's size (a residual) is read.
      if (o->opcode() == Opcode::kBroadcast) {
        AddOnce(e.ops, o);
        AddOnce(e.inputs, o->operand(0));
      } else {
        AddOnce(e.inputs, o);
      }
    }
    e.ops.push_back(next);
    current = next;
  }
  if (e.ops.empty()) return e;
  e.result = current;
  e.bytes_saved = 2.0 * static_cast<double>(ValueBytes(call.shape()));
  return e;
}

}  // namespace

absl::flat_hash_map<const Instruction*, Epilogue> AttachEpilogues(const Computation& computation,
                                                                  int64_t cached,
                                                                  Partition& partition) {
  absl::flat_hash_set<const Instruction*> in_kernels;
  for (const auto& kernel : partition.kernels) in_kernels.insert(kernel.begin(), kernel.end());
  // Two chains may meet (a residual add of two convolutions' results): the
  // call that comes last takes the op, its chain reading the other's end.
  std::vector<std::pair<const Instruction*, Epilogue>> candidates;
  absl::flat_hash_set<const Instruction*> taken;
  const std::vector<Instruction*> post_order = computation.MakePostOrder();
  const absl::flat_hash_set<const Instruction*> chained = ChainedValues(post_order);
  for (auto it = post_order.rbegin(); it != post_order.rend(); ++it) {
    // A result this small stays in cache for the kernel reading it back:
    // its epilogue would save nothing.
    if (ClassifyOp(**it) != OpClass::kLibrary || ValueBytes((*it)->shape()) <= cached) continue;
    Epilogue e = ChainOf(**it, cached, taken, chained);
    // Only what a strategy put in kernels moves (a broadcast stays where
    // it is for its other readers).
    const bool movable = std::all_of(e.ops.begin(), e.ops.end(), [&](const Instruction* op) {
      return op->opcode() == Opcode::kBroadcast || in_kernels.contains(op);
    });
    if (e.empty() || !movable) continue;
    for (const Instruction* op : e.ops) {
      if (op->opcode() != Opcode::kBroadcast) taken.insert(op);
    }
    candidates.emplace_back(*it, std::move(e));
  }
  std::reverse(candidates.begin(), candidates.end());
  absl::flat_hash_map<const Instruction*, Epilogue> attached(candidates.begin(), candidates.end());
  std::optional<Partition> after = WithEpilogues(post_order, partition, attached, cached);
  if (!after) {
    // One at a time, in post order, keeping those that cost nothing.
    attached.clear();
    after = partition;
    for (auto& [call, e] : candidates) {
      attached.emplace(call, e);
      if (std::optional<Partition> trial = WithEpilogues(post_order, partition, attached, cached)) {
        after = std::move(trial);
      } else {
        attached.erase(call);
      }
    }
  }
  partition = *std::move(after);
  return attached;
}

}  // namespace seam::fusion
