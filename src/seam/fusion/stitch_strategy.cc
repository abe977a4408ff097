// Strategy `stitch`, AStitch's planner (section 4.1): the scope of a kernel
// is every memory-intensive op lying between the same compute-intensive
// ops. Each op gets a level, the number of non-fusible ops (library calls,
// opaque ops, tuples) on the longest path reaching it; fusible ops of one level form
// one kernel. A path that leaves a kernel passes a non-fusible op and so
// raises the level, and levels never fall along a path, so it cannot come
// back: kernels of one level are acyclic by construction, including the
// "independent" ops of a level that no edge connects.
//
// What makes the kernel fast is decided afterwards, by the kernel analysis
// shared with every strategy: dominants, groups, schemes, mappings.
#include <climits>
#include <map>

#include "absl/container/flat_hash_map.h"
#include "seam/fusion/op_class.h"
#include "seam/fusion/strategies.h"

namespace seam::fusion {

Partition PartitionStitch(const Computation& computation) {
  std::vector<Instruction*> post_order = computation.MakePostOrder();
  absl::flat_hash_map<const Instruction*, int> level_after;  // level of the value it produces
  absl::flat_hash_map<const Instruction*, int> level;        // fusible ops: their kernel's level
  for (const Instruction* i : post_order) {
    int l = 0;
    for (const Instruction* operand : i->operands()) l = std::max(l, level_after[operand]);
    for (const Instruction* predecessor : i->control_predecessors()) {
      l = std::max(l, level_after[predecessor]);
    }
    if (IsFusible(ClassifyOp(*i))) {
      level[i] = l;
      level_after[i] = l;
    } else {
      // Anything else ends a scope, tuples and get-tuple-element included:
      // a value passing through them is read from memory. Parameters and
      // constants, with no operands, start at level 0.
      level_after[i] = i->operand_count() == 0 ? l : l + 1;
    }
  }
  // As late as possible: an op whose readers are all fusible moves up to the
  // earliest of their levels, so a value needed only after a library call
  // (a parameter scaled for an optimizer update) is computed where it is
  // read instead of being written by an earlier kernel. Levels still never
  // fall along an edge, so kernels stay acyclic.
  for (auto it = post_order.rbegin(); it != post_order.rend(); ++it) {
    auto own = level.find(*it);
    if (own == level.end() || (*it)->users().empty() || *it == computation.root()) continue;
    int latest = INT32_MAX;
    for (const Instruction* user : (*it)->users()) {
      auto u = level.find(user);
      if (u == level.end()) {
        latest = -1;
        break;
      }
      latest = std::min(latest, u->second);
    }
    if (latest > own->second) own->second = latest;
  }
  std::map<int, std::vector<const Instruction*>> by_level;
  for (const Instruction* i : post_order) {
    auto it = level.find(i);
    if (it != level.end()) by_level[it->second].push_back(i);
  }
  Partition partition;
  for (auto& [l, members] : by_level) partition.kernels.push_back(std::move(members));
  return partition;
}

}  // namespace seam::fusion
