// sort: every 1-D slice along `dimensions` is sorted by the comparator, and
// all operands are permuted alike. A merge sort on indices keeps equal
// elements in order (stable whether or not is_stable is set) and stays memory
// safe even when a comparator is not a strict weak order.
#include <cstring>

#include "absl/strings/str_cat.h"
#include "seam/eval/index_util.h"
#include "seam/eval/ops.h"
#include "seam/util/status_macros.h"

namespace seam {
namespace {

// Compares elements a and b of the current slice through the comparator:
// arguments are (operand0[a], operand0[b], operand1[a], operand1[b], ...).
class SliceComparator {
 public:
  SliceComparator(const Computation& comparator, Evaluator& evaluator, OperandValues operands)
      : comparator_(comparator), evaluator_(evaluator), operands_(operands) {
    for (const Literal* operand : operands) {
      scalars_.emplace_back(Shape::Scalar(operand->shape().dtype()));
      scalars_.emplace_back(Shape::Scalar(operand->shape().dtype()));
    }
    for (const Literal& s : scalars_) arguments_.push_back(&s);
  }

  absl::StatusOr<bool> Less(int64_t a, int64_t b) {
    for (size_t i = 0; i < operands_.size(); ++i) {
      int64_t size = DTypeByteSize(operands_[i]->shape().dtype());
      const uint8_t* data = operands_[i]->bytes().data();
      std::memcpy(scalars_[2 * i].mutable_bytes().data(), data + a * size, size);
      std::memcpy(scalars_[2 * i + 1].mutable_bytes().data(), data + b * size, size);
    }
    SEAM_ASSIGN_OR_RETURN(Literal result, evaluator_.Call(comparator_, arguments_));
    return result.GetBits(0) != 0;
  }

 private:
  const Computation& comparator_;
  Evaluator& evaluator_;
  OperandValues operands_;
  std::vector<Literal> scalars_;
  std::vector<const Literal*> arguments_;
};

// Stable merge sort of `items` (linear element positions).
absl::Status MergeSort(std::vector<int64_t>& items, std::vector<int64_t>& scratch,
                       SliceComparator& cmp) {
  size_t n = items.size();
  scratch.resize(n);
  for (size_t width = 1; width < n; width *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * width) {
      size_t mid = std::min(lo + width, n), hi = std::min(lo + 2 * width, n);
      size_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) {
        // Take from the right only when it is strictly less: stability.
        SEAM_ASSIGN_OR_RETURN(bool right_first, cmp.Less(items[j], items[i]));
        scratch[k++] = right_first ? items[j++] : items[i++];
      }
      while (i < mid) scratch[k++] = items[i++];
      while (j < hi) scratch[k++] = items[j++];
    }
    items.swap(scratch);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Literal> EvalSort(const Instruction& instruction, OperandValues operands,
                                 Evaluator& evaluator) {
  const Shape& shape = operands[0]->shape();
  int64_t axis = instruction.attrs().dimensions.value_or(IntList{0}).at(0);
  if (axis < 0 || axis >= std::max(shape.rank(), 1)) {
    return absl::InvalidArgumentError(absl::StrCat("sort dimension ", axis, " is out of range"));
  }
  Literal out(instruction.shape());
  std::vector<Literal*> results;
  for (size_t i = 0; i < operands.size(); ++i) {
    results.push_back(instruction.shape().IsTuple() ? &out.mutable_tuple_elements()[i] : &out);
  }
  std::vector<int64_t> strides = RowMajorStrides(shape.dims());
  int64_t length = shape.rank() == 0 ? 1 : shape.dim(static_cast<int>(axis));
  int64_t step = shape.rank() == 0 ? 1 : strides[axis];
  std::vector<int64_t> outer = shape.dims();
  if (!outer.empty()) outer[axis] = 1;
  SliceComparator cmp(**instruction.attrs().to_apply, evaluator, operands);
  std::vector<int64_t> items, scratch;
  absl::Status status;
  ForEachIndex(outer, [&](absl::Span<const int64_t> index, int64_t) {
    if (!status.ok()) return;
    int64_t base = LinearIndex(index, strides);
    items.clear();
    for (int64_t i = 0; i < length; ++i) items.push_back(base + i * step);
    status = MergeSort(items, scratch, cmp);
    for (size_t k = 0; status.ok() && k < operands.size(); ++k) {
      int64_t size = DTypeByteSize(operands[k]->shape().dtype());
      for (int64_t i = 0; i < length; ++i) {
        std::memcpy(results[k]->mutable_bytes().data() + (base + i * step) * size,
                    operands[k]->bytes().data() + items[i] * size, size);
      }
    }
  });
  if (!status.ok()) return status;
  return out;
}

}  // namespace seam
