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
#include <map>

#include "absl/container/flat_hash_map.h"
#include "seam/fusion/op_class.h"
#include "seam/fusion/strategies.h"

namespace seam::fusion {

Partition PartitionStitch(const Computation& computation) {
  absl::flat_hash_map<const Instruction*, int> level_after;  // level of the value it produces
  std::map<int, std::vector<const Instruction*>> by_level;
  for (const Instruction* i : computation.MakePostOrder()) {
    int level = 0;
    for (const Instruction* operand : i->operands()) {
      level = std::max(level, level_after[operand]);
    }
    for (const Instruction* predecessor : i->control_predecessors()) {
      level = std::max(level, level_after[predecessor]);
    }
    OpClass c = ClassifyOp(*i);
    if (IsFusible(c)) {
      by_level[level].push_back(i);
      level_after[i] = level;
    } else {
      // Anything else ends a scope, tuples and get-tuple-element included:
      // a value passing through them is read from memory. Parameters and
      // constants, with no operands, start at level 0.
      level_after[i] = i->operand_count() == 0 ? level : level + 1;
    }
  }
  Partition partition;
  for (auto& [level, members] : by_level) partition.kernels.push_back(std::move(members));
  return partition;
}

}  // namespace seam::fusion
