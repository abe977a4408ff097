// An epilogue a library call runs on its result (fusion::Epilogue), as the
// library runners (dot, convolution) see it: a function over ranges of
// their result, applied to each piece as soon as it is written, while it
// is in the writing thread's cache.
#pragma once

#include <cstdint>

#include "absl/functional/function_ref.h"

namespace seam::runtime {

struct ResultEpilogue {
  // Computes the epilogue at the row-major positions [begin, end) of the
  // call's result, whose memory is `result`.
  absl::FunctionRef<void(void* result, int64_t begin, int64_t end)> apply;
  // Set by a runner that applied it to every piece it wrote; otherwise the
  // caller runs it over the whole result afterwards.
  bool applied = false;

  // Whether positions [lo, hi) along a dimension of `extent` positions
  // `stride` elements apart cover one row-major range of a result of
  // `elements` (the dimension is the outermost): [lo * stride, hi * stride).
  static bool Contiguous(int64_t elements, int64_t extent, int64_t stride) {
    return extent * stride == elements;
  }
};

}  // namespace seam::runtime
