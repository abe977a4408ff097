// An epilogue a library call runs on its result (a fused epilogue), as the
// library runners (dot, convolution) see it: a function over ranges of
// their result, applied to each piece as soon as it is written, while it
// is in the writing thread's cache.
#pragma once

#include <cstdint>

#include "absl/functional/function_ref.h"

namespace seam::runtime {

struct ResultEpilogue {
  // Computes the epilogue at the row-major positions [begin, end) of the
  // call's result, whose memory is `result`, whose index along the last
  // dimension lies in [column_begin, column_end).
  absl::FunctionRef<void(void* result, int64_t begin, int64_t end, int64_t column_begin,
                         int64_t column_end)>
      apply;
  // The result's extent along its last dimension.
  int64_t columns = 1;
  // Set by a runner that applied it to every piece it wrote; otherwise the
  // caller runs it over the whole result afterwards.
  bool applied = false;

  // Over the row-major positions [begin, end).
  void ApplyRange(void* result, int64_t begin, int64_t end) const { apply(result, begin, end, 0, columns); }
  // Over columns [begin, end) of a result of `elements`.
  void ApplyColumns(void* result, int64_t elements, int64_t begin, int64_t end) const {
    apply(result, 0, elements, begin, end);
  }

  // Whether positions [lo, hi) along a dimension of `extent` positions
  // `stride` elements apart cover one row-major range of a result of
  // `elements` (the dimension is the outermost): [lo * stride, hi * stride).
  static bool Contiguous(int64_t elements, int64_t extent, int64_t stride) {
    return extent * stride == elements;
  }
};

}  // namespace seam::runtime
