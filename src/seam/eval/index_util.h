// Index arithmetic over row-major (logical order) arrays, shared by the
// interpreter's op families.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "seam/ir/shape.h"

namespace seam {

// Row-major strides in elements: strides[rank-1] == 1.
std::vector<int64_t> RowMajorStrides(absl::Span<const int64_t> dims);

// Calls fn(index, linear) for every multi-index of `dims` in row-major order,
// with `index` a span of size dims.size() and `linear` its position.
template <typename Fn>
void ForEachIndex(absl::Span<const int64_t> dims, Fn&& fn) {
  int rank = static_cast<int>(dims.size());
  for (int64_t d : dims) {
    if (d == 0) return;
  }
  std::vector<int64_t> index(rank, 0);
  int64_t linear = 0;
  while (true) {
    fn(absl::Span<const int64_t>(index), linear);
    ++linear;
    int d = rank - 1;
    while (d >= 0 && ++index[d] == dims[d]) index[d--] = 0;
    if (d < 0) return;
  }
}

inline int64_t LinearIndex(absl::Span<const int64_t> index,
                           absl::Span<const int64_t> strides) {
  int64_t linear = 0;
  for (size_t i = 0; i < index.size(); ++i) linear += index[i] * strides[i];
  return linear;
}

}  // namespace seam
