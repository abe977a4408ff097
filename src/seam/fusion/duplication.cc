// Duplicating cheap producers into the kernels that read them. A kernel
// scope ends at every library call, so a broadcast of a parameter (a batch
// norm's scale, a bias) lands in an early kernel, far from the kernels that
// read it after the convolutions; materialized there it costs a full-size
// write and read. XLA fuses such producers into each consumer by
// duplication; the stitch strategies do the same here: a light op
// (elementwise, broadcast, data movement) is recomputed inside every kernel
// that reads it when that reads no more than materializing it would (its
// write and every reader's read), and leaves the kernel it came from when
// nothing there needs it any more.
#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "seam/fusion/cost_model.h"
#include "seam/fusion/duplication.h"
#include "seam/fusion/op_class.h"

namespace seam::fusion {
namespace {

// Light enough to recompute: no transcendental, no gather-like indexing.
bool Light(const Instruction& i) {
  OpClass c = ClassifyOp(i);
  return (c == OpClass::kBroadcast || c == OpClass::kDataMovement ||
          c == OpClass::kLightElementwise) &&
         i.opcode() != Opcode::kDynamicSlice;
}

// The bytes recomputing `i` reads: its operands, a broadcast operand counted
// at its own (small) size since it is recomputed too, scalars not at all.
double RecomputeReadBytes(const Instruction& i) {
  double bytes = 0;
  for (const Instruction* operand : i.operands()) {
    const Instruction* source = operand->opcode() == Opcode::kBroadcast ? operand->operand(0) : operand;
    if (source->shape().IsArray() && source->shape().ElementCount().value_or(0) <= 1) continue;
    bytes += static_cast<double>(ValueBytes(source->shape()));
  }
  return bytes;
}

// Whether n kernels recomputing `i` read no more than writing it once (unless
// it is written anyway) and n kernels reading it back.
bool WorthRecomputing(const Instruction& i, size_t readers, bool materialized) {
  double n = static_cast<double>(readers);
  double out = static_cast<double>(ValueBytes(i.shape()));
  return n * RecomputeReadBytes(i) <= (n + (materialized ? 0 : 1)) * out;
}

}  // namespace

void DuplicateCheapProducers(const Computation& computation, Partition& partition) {
  std::vector<absl::flat_hash_set<const Instruction*>> members(partition.kernels.size());
  absl::flat_hash_map<const Instruction*, std::vector<int>> kernels_of;
  for (size_t k = 0; k < partition.kernels.size(); ++k) {
    for (const Instruction* i : partition.kernels[k]) {
      members[k].insert(i);
      kernels_of[i].push_back(static_cast<int>(k));
    }
  }
  std::vector<Instruction*> post_order = computation.MakePostOrder();
  for (auto it = post_order.rbegin(); it != post_order.rend(); ++it) {
    const Instruction* v = *it;
    if (!kernels_of.contains(v) || !Light(*v)) continue;
    bool materialized = v == computation.root();
    std::vector<int> readers;
    for (const Instruction* user : v->users()) {
      auto found = kernels_of.find(user);
      if (found == kernels_of.end()) {
        materialized = true;  // a library call, an opaque op, a tuple
        continue;
      }
      for (int k : found->second) {
        if (std::find(readers.begin(), readers.end(), k) == readers.end()) readers.push_back(k);
      }
    }
    std::vector<int>& homes = kernels_of[v];
    size_t new_readers = 0;
    for (int k : readers) new_readers += !members[k].contains(v);
    if (new_readers == 0 || !WorthRecomputing(*v, new_readers, materialized)) continue;
    // The original kernel writes a value read outside kernels: a later one
    // might itself depend on that reader.
    if (materialized) partition.writer[v] = homes.front();
    for (int k : readers) {
      if (members[k].insert(v).second) {
        partition.kernels[k].push_back(v);
        homes.push_back(k);
      }
    }
    if (materialized) continue;
    // Kernels holding v that no reader of v runs in drop it.
    for (auto home = homes.begin(); home != homes.end();) {
      if (std::find(readers.begin(), readers.end(), *home) != readers.end()) {
        ++home;
        continue;
      }
      members[*home].erase(v);
      auto& list = partition.kernels[*home];
      list.erase(std::remove(list.begin(), list.end(), v), list.end());
      home = homes.erase(home);
    }
  }
  // Drop emptied kernels, renumbering the writers.
  std::vector<int> new_index(partition.kernels.size(), -1);
  std::vector<std::vector<const Instruction*>> kept;
  for (size_t k = 0; k < partition.kernels.size(); ++k) {
    if (partition.kernels[k].empty()) continue;
    new_index[k] = static_cast<int>(kept.size());
    kept.push_back(std::move(partition.kernels[k]));
  }
  partition.kernels = std::move(kept);
  for (auto& [v, k] : partition.writer) k = new_index[k];
}

}  // namespace seam::fusion
