// convolution with dim_labels, strides, padding, base (lhs) and window (rhs)
// dilation, window reversal, feature_group_count and batch_group_count, as in
// XLA's operation semantics. Operands are packed into [batch][spatial][feature]
// and [spatial][in][out] in the accumulator type so the innermost loop runs
// over contiguous output features.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "seam/eval/dense_buffer.h"
#include "seam/eval/index_util.h"
#include "seam/eval/ops.h"

namespace seam {
namespace {

struct ConvGeometry {
  int spatial_rank;
  int64_t batch, in_features, out_features, kernel_in_features;
  std::vector<int64_t> in_spatial, kernel_spatial, out_spatial;
  int64_t out_batch;
};

ConvGeometry Geometry(const ConvDimLabels& l, const Shape& in, const Shape& kernel,
                      const Shape& out) {
  ConvGeometry g;
  g.spatial_rank = static_cast<int>(l.input_spatial.size());
  g.batch = in.dim(static_cast<int>(l.input_batch));
  g.in_features = in.dim(static_cast<int>(l.input_feature));
  g.kernel_in_features = kernel.dim(static_cast<int>(l.kernel_input_feature));
  g.out_features = kernel.dim(static_cast<int>(l.kernel_output_feature));
  g.out_batch = out.dim(static_cast<int>(l.output_batch));
  for (int s = 0; s < g.spatial_rank; ++s) {
    g.in_spatial.push_back(in.dim(static_cast<int>(l.input_spatial[s])));
    g.kernel_spatial.push_back(kernel.dim(static_cast<int>(l.kernel_spatial[s])));
    g.out_spatial.push_back(out.dim(static_cast<int>(l.output_spatial[s])));
  }
  return g;
}

// Packs a literal into the order given by `dims` (outermost first).
template <typename Acc>
std::vector<Acc> PackIn(const Literal& literal, const std::vector<int64_t>& dims) {
  std::vector<int64_t> sizes;
  for (int64_t d : dims) sizes.push_back(literal.shape().dim(static_cast<int>(d)));
  std::vector<int64_t> strides = RowMajorStrides(sizes);
  std::vector<int64_t> stride_of_dim(literal.shape().rank());
  for (size_t k = 0; k < dims.size(); ++k) stride_of_dim[dims[k]] = strides[k];
  std::vector<Acc> packed(literal.element_count());
  ForEachIndex(literal.shape().dims(), [&](absl::Span<const int64_t> index, int64_t linear) {
    packed[LinearIndex(index, stride_of_dim)] = LoadWide<Acc>(literal, linear);
  });
  return packed;
}

template <typename Acc>
Literal Convolve(const Instruction& instruction, const Literal& input, const Literal& kernel) {
  const ConvDimLabels& l = *instruction.attrs().dim_labels;
  const Window& window = *instruction.attrs().window;
  ConvGeometry g = Geometry(l, input.shape(), kernel.shape(), instruction.shape());
  int64_t feature_groups = instruction.attrs().feature_group_count.value_or(1);
  int64_t batch_groups = instruction.attrs().batch_group_count.value_or(1);

  std::vector<Acc> in = PackIn<Acc>(input, l.InputOrder());    // [n][spatial][c]
  std::vector<Acc> ker = PackIn<Acc>(kernel, l.KernelOrder());  // [spatial][ci][co]
  std::vector<int64_t> in_strides = RowMajorStrides(g.in_spatial);
  std::vector<int64_t> ker_strides = RowMajorStrides(g.kernel_spatial);
  int64_t in_spatial_size = g.spatial_rank == 0 ? 1 : in_strides[0] * g.in_spatial[0];

  int64_t out_per_fgroup = g.out_features / feature_groups;
  int64_t out_per_bgroup = g.out_features / batch_groups;
  std::vector<int64_t> out_sizes{g.out_batch};
  out_sizes.insert(out_sizes.end(), g.out_spatial.begin(), g.out_spatial.end());
  int64_t out_positions = 1;
  for (int64_t s : g.out_spatial) out_positions *= s;
  std::vector<Acc> result(static_cast<size_t>(g.out_batch * out_positions * g.out_features),
                          Acc{});
  std::vector<int64_t> in_pos(g.spatial_rank);
  ForEachIndex(out_sizes, [&](absl::Span<const int64_t> o, int64_t o_linear) {
    Acc* acc = &result[o_linear * g.out_features];
    ForEachIndex(g.kernel_spatial, [&](absl::Span<const int64_t> k, int64_t) {
      int64_t k_linear = 0;
      for (int s = 0; s < g.spatial_rank; ++s) {
        const WindowDim& w = window.dims[s];
        int64_t p = o[1 + s] * w.stride + k[s] * w.rhs_dilation - w.pad_low;
        if (p < 0 || p % w.lhs_dilation != 0) return;
        p /= w.lhs_dilation;
        if (p >= g.in_spatial[s]) return;
        in_pos[s] = p;
        int64_t kk = w.reversal ? g.kernel_spatial[s] - 1 - k[s] : k[s];
        k_linear += kk * ker_strides[s];
      }
      int64_t in_spatial_linear = LinearIndex(in_pos, in_strides);
      const Acc* k_row = &ker[k_linear * g.kernel_in_features * g.out_features];
      // Output features in [f0, f1) share one feature group and one batch
      // group, hence one input row; the innermost loop then runs over
      // contiguous output features of both the kernel and the accumulator.
      for (int64_t f0 = 0; f0 < g.out_features;) {
        int64_t fg = f0 / out_per_fgroup;
        int64_t bg = f0 / out_per_bgroup;
        int64_t f1 = std::min((fg + 1) * out_per_fgroup, (bg + 1) * out_per_bgroup);
        int64_t n = bg * g.out_batch + o[0];
        const Acc* x = &in[(n * in_spatial_size + in_spatial_linear) * g.in_features +
                           fg * g.kernel_in_features];
        for (int64_t c = 0; c < g.kernel_in_features; ++c) {
          const Acc xc = x[c];
          const Acc* w = k_row + c * g.out_features;
          for (int64_t f = f0; f < f1; ++f) acc[f] += xc * w[f];
        }
        f0 = f1;
      }
    });
  });
  // `result` is [batch][spatial][feature]; scatter it into the output layout.
  Literal out(instruction.shape());
  IntList out_order = l.OutputOrder();
  std::vector<int64_t> packed_sizes;
  for (int64_t d : out_order) packed_sizes.push_back(instruction.shape().dim(static_cast<int>(d)));
  std::vector<int64_t> packed_strides = RowMajorStrides(packed_sizes);
  std::vector<int64_t> stride_of_dim(instruction.shape().rank());
  for (size_t k = 0; k < out_order.size(); ++k) stride_of_dim[out_order[k]] = packed_strides[k];
  ForEachIndex(instruction.shape().dims(), [&](absl::Span<const int64_t> index, int64_t linear) {
    StoreWide(out, linear, result[LinearIndex(index, stride_of_dim)]);
  });
  return out;
}

}  // namespace

absl::StatusOr<Literal> EvalConvolution(const Instruction& instruction, OperandValues operands) {
  const Literal& input = *operands[0];
  const Literal& kernel = *operands[1];
  return WithAccumulator(input.shape().dtype(), kernel.shape().dtype(),
                         instruction.shape().dtype(), [&](auto acc) -> absl::StatusOr<Literal> {
                           return Convolve<decltype(acc)>(instruction, input, kernel);
                         });
}

}  // namespace seam
