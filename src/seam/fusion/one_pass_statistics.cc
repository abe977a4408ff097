#include "seam/fusion/one_pass_statistics.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "seam/fusion/op_class.h"

namespace seam::fusion {
namespace {

bool IsSum(const Instruction& reduce) { return ReduceCombiner(reduce) == Opcode::kAdd; }

// Whether `b` is a broadcast none of whose operand's dimensions lies along
// `reduced`: its value is constant along every reduced dimension.
bool ConstantAlong(const Instruction& b, const IntList& reduced) {
  if (b.opcode() != Opcode::kBroadcast) return false;
  for (int64_t d : b.attrs().dimensions.value_or(IntList{})) {
    if (std::find(reduced.begin(), reduced.end(), d) != reduced.end()) return false;
  }
  return true;
}

// The elements after the last kept dimension of a reduction's input: the
// contiguous run each (outer, kept) position folds.
int64_t RunLength(const Instruction& reduce) {
  const std::vector<int64_t>& dims = reduce.operand(0)->shape().dims();
  const IntList reduced = SortedReducedDims(reduce);
  int64_t run = 1;
  for (int d = static_cast<int>(dims.size()) - 1; d >= 0; --d) {
    if (std::find(reduced.begin(), reduced.end(), d) == reduced.end()) break;
    run *= dims[d];
  }
  return run;
}

// Whether a reduction folds contiguous runs of its input (its innermost
// dimension reduced, some dimension kept): the CPU schedule then folds
// each run with a vector loop, and a rider's second pass over the run
// finds it in cache.
bool FoldsRuns(const Instruction& reduce) {
  const int rank = reduce.operand(0)->shape().rank();
  const IntList reduced = SortedReducedDims(reduce);
  return !reduced.empty() && static_cast<int>(reduced.size()) < rank && reduced.back() == rank - 1;
}

}  // namespace

std::optional<CenteredSquares> MatchCenteredSquares(const Instruction& reduce, bool half_chains) {
  if (reduce.opcode() != Opcode::kReduce || reduce.operand_count() != 2 || !IsSum(reduce)) {
    return std::nullopt;
  }
  const DType type = reduce.shape().dtype();
  if (type != DType::kF32 && type != DType::kF64) return std::nullopt;
  const Instruction* square = reduce.operand(0);
  if (half_chains && square->opcode() == Opcode::kConvert) {
    const DType from = square->operand(0)->shape().dtype();
    if (from == DType::kBF16 || from == DType::kF16) square = square->operand(0);
  }
  if (square->opcode() != Opcode::kMultiply || square->operand(0) != square->operand(1)) {
    return std::nullopt;
  }
  const Instruction* deviation = square->operand(0);
  if (deviation->opcode() != Opcode::kSubtract) return std::nullopt;
  const IntList reduced = SortedReducedDims(reduce);
  for (int k : {1, 0}) {
    const Instruction* center = deviation->operand(k);
    if (ConstantAlong(*center, reduced)) return CenteredSquares{deviation->operand(1 - k), center};
  }
  return std::nullopt;
}

std::vector<OnePassStatistic> ChooseOnePassStatistics(const Kernel& kernel,
                                                      const target::DeviceSpec& device,
                                                      bool half_chains) {
  std::vector<OnePassStatistic> chosen;
  if (device.is_gpu()) return chosen;
  absl::flat_hash_set<const Instruction*> riders;
  // Whether x is computed from the kernel's inputs alone: no value another
  // group writes (which may come later than the host's pass). The kernel's
  // instructions and group roots are gathered for its first candidate
  // only: most kernels have none, and every plan analyzes every kernel.
  absl::flat_hash_set<const Instruction*> inside, roots;
  auto from_inputs = [&](const Instruction* x) {
    if (inside.empty()) {
      inside.insert(kernel.instructions.begin(), kernel.instructions.end());
      for (const Group& g : kernel.groups) {
        roots.insert(g.dominant);
        roots.insert(g.sub_dominants.begin(), g.sub_dominants.end());
      }
    }
    absl::flat_hash_set<const Instruction*> seen;
    std::vector<const Instruction*> stack{x};
    while (!stack.empty()) {
      const Instruction* i = stack.back();
      stack.pop_back();
      if (!inside.contains(i) || !seen.insert(i).second) continue;
      if (roots.contains(i)) return false;
      stack.insert(stack.end(), i->operands().begin(), i->operands().end());
    }
    return true;
  };
  for (size_t g = 0; g < kernel.groups.size(); ++g) {
    const Group& rider = kernel.groups[g];
    const Instruction& d = *rider.dominant;
    std::optional<CenteredSquares> centered = MatchCenteredSquares(d, half_chains);
    if (!centered || !rider.sub_dominants.empty() || !FoldsIntoPartials(rider) || !FoldsRuns(d) ||
        !from_inputs(centered->value)) {
      continue;
    }
    const int64_t run_bytes = RunLength(d) * DTypeByteSize(d.shape().dtype());
    if (run_bytes > device.onchip_bytes_per_block / 2) continue;
    for (size_t h = 0; h < g; ++h) {
      const Group& host = kernel.groups[h];
      const Instruction& r = *host.dominant;
      auto sum = [](const Instruction* i) { return i->opcode() == Opcode::kReduce && IsSum(*i); };
      const bool sums_only =
          sum(&r) && std::all_of(host.sub_dominants.begin(), host.sub_dominants.end(), sum);
      if (!sums_only || riders.contains(&r) || !FoldsIntoPartials(host) ||
          r.operand(0)->shape().dims() != d.operand(0)->shape().dims() ||
          SortedReducedDims(r) != SortedReducedDims(d)) {
        continue;
      }
      chosen.push_back({static_cast<int>(g), static_cast<int>(h)});
      riders.insert(&d);
      break;
    }
  }
  return chosen;
}

}  // namespace seam::fusion
