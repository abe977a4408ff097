// Random HLO convolutions for differential tests of the library paths:
// every dim_labels order, 1-3 spatial dimensions, strides, padding, base
// and window dilation, reversal, feature groups (depthwise included) and
// batch groups, f32 / f64 / bf16.
#pragma once

#include <algorithm>
#include <array>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace seam::runtime {

struct RandomConv {
  std::string text;  // the module
  std::string description;
  // Its pieces, for modules of several: element type, operand and result
  // dimensions, the convolution's attributes.
  std::string type;
  std::vector<int64_t> in_dims, kernel_dims, out_dims;
  std::string attrs;
};

inline std::string Dims(const std::vector<int64_t>& dims) { return absl::StrJoin(dims, ","); }

// Lays `named` sizes out in a random dimension order; returns the label.
inline std::string Place(std::mt19937& rng, const std::vector<std::pair<char, int64_t>>& named,
                  std::vector<int64_t>& dims) {
  std::vector<std::pair<char, int64_t>> order = named;
  std::shuffle(order.begin(), order.end(), rng);
  std::string label;
  dims.clear();
  for (auto& [c, size] : order) {
    label += c;
    dims.push_back(size);
  }
  return label;
}

inline RandomConv GenerateConvolution(std::mt19937& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const int rank = pick(1, 3);
  const char* type = std::array{"f32", "f32", "f64", "bf16"}[pick(0, 3)];
  int64_t groups = 1, batch_groups = 1;
  int64_t kernel_in = pick(1, 5), out_per_group = pick(1, 4), batch = pick(1, 3);
  switch (pick(0, 3)) {
    case 1: groups = pick(2, 3); break;                  // grouped
    case 2: groups = pick(2, 6), kernel_in = 1; break;   // depthwise
    case 3: batch_groups = pick(2, 3); break;            // weight-gradient style
    default: break;
  }
  const int64_t in_features = kernel_in * groups;
  const int64_t out_features = out_per_group * groups * batch_groups;
  const int64_t in_batch = batch * batch_groups;
  std::vector<std::pair<char, int64_t>> in{{'b', in_batch}, {'f', in_features}};
  std::vector<std::pair<char, int64_t>> kernel{{'i', kernel_in}, {'o', out_features}};
  std::vector<std::pair<char, int64_t>> out{{'b', batch}, {'f', out_features}};
  std::vector<std::string> size, stride, pad, lhs, rhs, reversal;
  for (int s = 0; s < rank; ++s) {
    int64_t n = pick(1, rank == 3 ? 5 : 9), k = pick(1, 3), st = pick(1, 2);
    int64_t lo = pick(0, 2), hi = pick(0, 2), ld = pick(0, 3) == 0 ? 2 : 1, rd = pick(0, 3) == 0 ? 2 : 1;
    int64_t padded = (n - 1) * ld + 1 + lo + hi, window = (k - 1) * rd + 1;
    if (padded < window) hi += window - padded, padded = window;
    int64_t o = (padded - window) / st + 1;
    char digit = static_cast<char>('0' + s);
    in.push_back({digit, n});
    kernel.push_back({digit, k});
    out.push_back({digit, o});
    size.push_back(absl::StrCat(k));
    stride.push_back(absl::StrCat(st));
    pad.push_back(absl::StrCat(lo, "_", hi));
    lhs.push_back(absl::StrCat(ld));
    rhs.push_back(absl::StrCat(rd));
    reversal.push_back(pick(0, 3) == 0 ? "1" : "0");
  }
  std::vector<int64_t> in_dims, kernel_dims, out_dims;
  std::string labels = absl::StrCat(Place(rng, in, in_dims), "_", Place(rng, kernel, kernel_dims),
                                    "->", Place(rng, out, out_dims));
  std::string window = absl::StrCat(
      "size=", absl::StrJoin(size, "x"), " stride=", absl::StrJoin(stride, "x"), " pad=",
      absl::StrJoin(pad, "x"), " lhs_dilate=", absl::StrJoin(lhs, "x"), " rhs_dilate=",
      absl::StrJoin(rhs, "x"), " rhs_reversal=", absl::StrJoin(reversal, "x"));
  std::string attrs = absl::StrCat("window={", window, "}, dim_labels=", labels);
  if (groups > 1) absl::StrAppend(&attrs, ", feature_group_count=", groups);
  if (batch_groups > 1) absl::StrAppend(&attrs, ", batch_group_count=", batch_groups);
  RandomConv conv;
  conv.text = absl::StrCat("HloModule conv\n\nENTRY e {\n  a = ", type, "[", Dims(in_dims),
                           "] parameter(0)\n  b = ", type, "[", Dims(kernel_dims),
                           "] parameter(1)\n  ROOT c = ", type, "[", Dims(out_dims),
                           "] convolution(a, b), ", attrs, "\n}\n");
  conv.description = attrs;
  conv.type = type;
  conv.in_dims = in_dims;
  conv.kernel_dims = kernel_dims;
  conv.out_dims = out_dims;
  conv.attrs = attrs;
  return conv;
}

}  // namespace seam::runtime
