#include "seam/fusion/online_softmax.h"

#include <algorithm>

#include "seam/fusion/op_class.h"

namespace seam::fusion {
namespace {

// Whether broadcast `b` lays its operand out in row-major order over
// exactly the dimensions of its shape that `reduced` leaves: constant
// along the reduced ones, the kept ones in order.
bool SpreadsAlongReduced(const Instruction& b, const IntList& reduced) {
  if (b.opcode() != Opcode::kBroadcast) return false;
  IntList kept;
  for (int64_t d = 0; d < b.shape().rank(); ++d) {
    if (std::find(reduced.begin(), reduced.end(), d) == reduced.end()) kept.push_back(d);
  }
  return b.attrs().dimensions.value_or(IntList{}) == kept;
}

// `i` through reshapes and broadcasts that keep its elements in row-major
// order (size-1 dimensions added or dropped): what it was made from.
const Instruction* ThroughLayoutChanges(const Instruction* i) {
  const int64_t elements = i->shape().ArrayElementCount();
  while (i->operand_count() == 1 && i->operand(0)->shape().ArrayElementCount() == elements) {
    if (i->opcode() == Opcode::kBroadcast) {
      const IntList& dims = i->attrs().dimensions.value_or(IntList{});
      if (!std::is_sorted(dims.begin(), dims.end())) break;
    } else if (i->opcode() != Opcode::kReshape) {
      break;
    }
    i = i->operand(0);
  }
  return i;
}

// The group whose only dominant is `d`, or -1.
int GroupLedBy(const Kernel& kernel, const Instruction* d) {
  for (size_t g = 0; g < kernel.groups.size(); ++g) {
    if (kernel.groups[g].dominant == d && kernel.groups[g].sub_dominants.empty()) {
      return static_cast<int>(g);
    }
  }
  return -1;
}

// Whether the groups fold the same whole rows, a task's rows in one loop.
bool SameWholeRows(const ThreadMapping& a, const ThreadMapping& b) {
  return a.kind == MappingKind::kRow && b.kind == MappingKind::kRow && a.rows == b.rows &&
         a.row_length == b.row_length && a.blocks_per_row == 1 && b.blocks_per_row == 1 &&
         a.rows_per_block == b.rows_per_block;
}

// Group g when it is a sum of shifted exps whose max leads a group of its
// own over the same whole rows: that group (`host`) and the exps.
struct SumBeside {
  int host = -1;
  const Instruction* exp = nullptr;
};
std::optional<SumBeside> SumBesideItsMax(const Kernel& kernel, size_t g) {
  const Group& sum = kernel.groups[g];
  std::optional<ShiftedExpSum> matched = MatchShiftedExpSum(*sum.dominant);
  if (!matched) return std::nullopt;
  const int host = GroupLedBy(kernel, matched->max);
  if (host < 0 || !SameWholeRows(kernel.groups[host].mapping, sum.mapping)) return std::nullopt;
  return SumBeside{host, matched->exp};
}

}  // namespace

std::optional<ShiftedExpSum> MatchShiftedExpSum(const Instruction& reduce) {
  if (reduce.opcode() != Opcode::kReduce || reduce.operand_count() != 2 ||
      ReduceCombiner(reduce) != Opcode::kAdd) {
    return std::nullopt;
  }
  const DType type = reduce.shape().dtype();
  if (type != DType::kF32 && type != DType::kF64) return std::nullopt;
  const Instruction* exp = reduce.operand(0);
  if (exp->opcode() != Opcode::kExp || exp->operand(0)->opcode() != Opcode::kSubtract) {
    return std::nullopt;
  }
  const Instruction* shifted = exp->operand(0);
  const Instruction* x = shifted->operand(0);
  const IntList reduced = SortedReducedDims(reduce);
  if (!SpreadsAlongReduced(*shifted->operand(1), reduced)) return std::nullopt;
  const Instruction* max = ThroughLayoutChanges(shifted->operand(1)->operand(0));
  if (max->opcode() != Opcode::kReduce || max->operand_count() != 2 ||
      ReduceCombiner(*max) != Opcode::kMaximum || max->operand(0) != x ||
      SortedReducedDims(*max) != reduced || max->shape().dtype() != type) {
    return std::nullopt;
  }
  return ShiftedExpSum{exp, max};
}

absl::flat_hash_set<const Instruction*> OnlineSoftmaxExps(const Kernel& kernel,
                                                          const target::DeviceSpec& device) {
  absl::flat_hash_set<const Instruction*> exps;
  if (device.is_gpu()) return exps;
  for (size_t g = 0; g < kernel.groups.size(); ++g) {
    std::optional<SumBeside> sum = SumBesideItsMax(kernel, g);
    if (sum &&
        std::find(kernel.outputs.begin(), kernel.outputs.end(), sum->exp) == kernel.outputs.end()) {
      exps.insert(sum->exp);
    }
  }
  return exps;
}

std::vector<OnlineSoftmax> ChooseOnlineSoftmax(const Kernel& kernel,
                                               const target::DeviceSpec& device) {
  std::vector<OnlineSoftmax> chosen;
  if (device.is_gpu()) return chosen;
  for (size_t g = 0; g < kernel.groups.size(); ++g) {
    std::optional<SumBeside> sum = SumBesideItsMax(kernel, g);
    if (!sum || !kernel.groups[g].sub_dominants.empty() || sum->host >= static_cast<int>(g)) {
      continue;
    }
    // The exps are recomputed where they are read, not passed on.
    const bool passed_on = std::any_of(kernel.groups.begin(), kernel.groups.end(), [&](auto& h) {
      return h.dominant == sum->exp || std::find(h.sub_dominants.begin(), h.sub_dominants.end(),
                                                 sum->exp) != h.sub_dominants.end();
    });
    if (!passed_on) chosen.push_back({static_cast<int>(g), sum->host});
  }
  return chosen;
}

}  // namespace seam::fusion
