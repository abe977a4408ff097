// Strategy `none`: every fusible op is a kernel of its own, what an eager
// framework launches. The baseline every fusion is measured against.
#include "seam/fusion/op_class.h"
#include "seam/fusion/strategies.h"

namespace seam::fusion {

Partition PartitionNone(const Computation& computation) {
  Partition partition;
  for (const Instruction* i : computation.MakePostOrder()) {
    if (IsFusible(ClassifyOp(*i))) partition.kernels.push_back({i});
  }
  return partition;
}

}  // namespace seam::fusion
