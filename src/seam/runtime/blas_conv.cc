#include "seam/runtime/blas_conv.h"

#include <algorithm>

#include "seam/runtime/blas_pack.h"

namespace seam::runtime {
namespace {

// Every size a convolution needs, read once from its operands and labels.
struct ConvGeometry {
  int64_t in_features = 0, kernel_in = 0, out_batch = 0, out_features = 0;
  int64_t feature_groups = 1, batch_groups = 1;
  std::vector<int64_t> in_spatial, kernel_spatial, out_spatial;
  int64_t in_positions = 1, kernel_positions = 1, out_positions = 1;
};

ConvGeometry Geometry(const Instruction& conv, const Shape& in, const Shape& kernel) {
  const ConvDimLabels& l = *conv.attrs().dim_labels;
  const Shape& out = conv.shape();
  ConvGeometry g;
  g.in_features = in.dim(static_cast<int>(l.input_feature));
  g.kernel_in = kernel.dim(static_cast<int>(l.kernel_input_feature));
  g.out_features = kernel.dim(static_cast<int>(l.kernel_output_feature));
  g.out_batch = out.dim(static_cast<int>(l.output_batch));
  g.feature_groups = conv.attrs().feature_group_count.value_or(1);
  g.batch_groups = conv.attrs().batch_group_count.value_or(1);
  for (size_t s = 0; s < l.input_spatial.size(); ++s) {
    g.in_spatial.push_back(in.dim(static_cast<int>(l.input_spatial[s])));
    g.kernel_spatial.push_back(kernel.dim(static_cast<int>(l.kernel_spatial[s])));
    g.out_spatial.push_back(out.dim(static_cast<int>(l.output_spatial[s])));
    g.in_positions *= g.in_spatial.back();
    g.kernel_positions *= g.kernel_spatial.back();
    g.out_positions *= g.out_spatial.back();
  }
  return g;
}

// For every (output position, kernel element): the input position its
// window reads, or -1 where it falls into padding or between dilated
// input elements. Kernel elements are indexed as stored (reversal applied).
std::vector<int64_t> WindowOffsets(const ConvGeometry& g, const Window& window) {
  int rank = static_cast<int>(g.in_spatial.size());
  std::vector<int64_t> offsets(static_cast<size_t>(g.out_positions * g.kernel_positions));
  std::vector<int64_t> o(rank, 0);
  for (int64_t op = 0; op < g.out_positions; ++op) {
    std::vector<int64_t> k(rank, 0);
    for (int64_t kp = 0; kp < g.kernel_positions; ++kp) {
      int64_t linear = 0, stored = 0;
      bool inside = true;
      for (int s = 0; s < rank; ++s) {
        const WindowDim& w = window.dims[s];
        stored = stored * g.kernel_spatial[s] + (w.reversal ? g.kernel_spatial[s] - 1 - k[s] : k[s]);
        int64_t p = o[s] * w.stride + k[s] * w.rhs_dilation - w.pad_low;
        if (p < 0 || p % w.lhs_dilation != 0 || p / w.lhs_dilation >= g.in_spatial[s]) inside = false;
        if (inside) linear = linear * g.in_spatial[s] + p / w.lhs_dilation;
      }
      offsets[op * g.kernel_positions + stored] = inside ? linear : -1;
      for (int s = rank - 1; s >= 0; --s) {
        if (++k[s] < g.kernel_spatial[s]) break;
        k[s] = 0;
      }
    }
    for (int s = rank - 1; s >= 0; --s) {
      if (++o[s] < g.out_spatial[s]) break;
      o[s] = 0;
    }
  }
  return offsets;
}

// A 1x1 window with unit strides and no padding or dilation: the packed
// input already is the GEMM's left matrix.
bool IsPointwise(const ConvGeometry& g, const Window& window) {
  for (size_t s = 0; s < g.in_spatial.size(); ++s) {
    const WindowDim& w = window.dims[s];
    if (g.kernel_spatial[s] != 1 || w.stride != 1 || w.pad_low != 0 || w.pad_high != 0 ||
        w.lhs_dilation != 1 || g.in_spatial[s] != g.out_spatial[s]) {
      return false;
    }
  }
  return true;
}

// Rows of the GEMM are (output batch, output position); columns of the
// left matrix are (kernel element, input feature of the group).
template <typename C>
void ConvolveByGemm(BufferPool& pool, const ConvGeometry& g, const std::vector<int64_t>& offsets,
                    bool pointwise, const C* in, const C* kernel, C* out) {
  const int64_t rows = g.out_batch * g.out_positions;
  const int64_t depth = g.kernel_positions * g.kernel_in;
  if (rows == 0) return;
  const int64_t per_feature_group = g.out_features / g.feature_groups;
  const int64_t per_batch_group = g.out_features / g.batch_groups;
  // Row chunks keep the column matrix near 32 MB.
  const int64_t chunk = std::clamp<int64_t>((int64_t{8} << 20) / std::max<int64_t>(1, depth), 1, rows);
  PooledArray<C> columns(pool, pointwise ? 0 : static_cast<size_t>(chunk * depth));
  // Output features [f0, f1) share one feature group and one batch group.
  for (int64_t f0 = 0; f0 < g.out_features;) {
    const int64_t fg = f0 / per_feature_group, bg = f0 / per_batch_group;
    const int64_t f1 = std::min((fg + 1) * per_feature_group, (bg + 1) * per_batch_group);
    const C* weights = kernel + f0;  // [depth][out_features] from column f0
    const C* group_in = in + bg * g.out_batch * g.in_positions * g.in_features + fg * g.kernel_in;
    if (pointwise) {
      Gemm<C>(rows, f1 - f0, depth, {group_in, g.in_features}, {weights, g.out_features}, out + f0,
              g.out_features);
      f0 = f1;
      continue;
    }
    for (int64_t r0 = 0; r0 < rows; r0 += chunk) {
      const int64_t r1 = std::min(rows, r0 + chunk);
      ThreadPool::Global().ParallelFor(r1 - r0, 16, [&](int64_t begin, int64_t end, int) {
        for (int64_t r = r0 + begin; r < r0 + end; ++r) {
          const int64_t ob = r / g.out_positions, op = r % g.out_positions;
          const C* image = group_in + ob * g.in_positions * g.in_features;
          C* column = columns.data() + (r - r0) * depth;
          for (int64_t kp = 0; kp < g.kernel_positions; ++kp) {
            int64_t at = offsets[op * g.kernel_positions + kp];
            C* to = column + kp * g.kernel_in;
            if (at < 0) {
              std::fill(to, to + g.kernel_in, C{0});
            } else {
              std::copy(image + at * g.in_features, image + at * g.in_features + g.kernel_in, to);
            }
          }
        }
      });
      Gemm<C>(r1 - r0, f1 - f0, depth, {columns.data(), depth}, {weights, g.out_features},
              out + r0 * g.out_features + f0, g.out_features);
    }
    f0 = f1;
  }
}

// One input feature per group (depthwise): per-group GEMMs would be
// matrix-vector products over strided memory, so accumulate directly,
// vectorized over the contiguous output features.
template <typename C>
void ConvolveDepthwise(const ConvGeometry& g, const std::vector<int64_t>& offsets, const C* in,
                       const C* kernel, C* out) {
  const int64_t multiplier = g.out_features / g.feature_groups;
  const int64_t rows = g.out_batch * g.out_positions;
  ThreadPool::Global().ParallelFor(rows, 4, [&](int64_t begin, int64_t end, int) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t ob = r / g.out_positions, op = r % g.out_positions;
      C* acc = out + r * g.out_features;
      std::fill(acc, acc + g.out_features, C{0});
      for (int64_t kp = 0; kp < g.kernel_positions; ++kp) {
        int64_t at = offsets[op * g.kernel_positions + kp];
        if (at < 0) continue;
        const C* x = in + (ob * g.in_positions + at) * g.in_features;
        const C* w = kernel + kp * g.out_features;
        if (multiplier == 1) {
#pragma omp simd
          for (int64_t f = 0; f < g.out_features; ++f) acc[f] += x[f] * w[f];
        } else {
          for (int64_t f = 0; f < g.out_features; ++f) acc[f] += x[f / multiplier] * w[f];
        }
      }
    }
  });
}

template <typename C>
Literal Convolve(BufferPool& pool, const Instruction& conv, const Literal& input,
                 const Literal& kernel) {
  const ConvDimLabels& l = *conv.attrs().dim_labels;
  const Window& window = *conv.attrs().window;
  ConvGeometry g = Geometry(conv, input.shape(), kernel.shape());
  Packed<C> in(pool, input, l.InputOrder());            // [batch][positions][features]
  Packed<C> weights(pool, kernel, l.KernelOrder());  // [kernel positions][in][out]
  PackedResult<C> out(pool, conv.shape(), l.OutputOrder());
  bool pointwise = IsPointwise(g, window);
  std::vector<int64_t> offsets = pointwise ? std::vector<int64_t>{} : WindowOffsets(g, window);
  if (g.kernel_in == 1 && g.batch_groups == 1 && !pointwise) {
    ConvolveDepthwise<C>(g, offsets, in.data(), weights.data(), out.data());
  } else {
    ConvolveByGemm<C>(pool, g, offsets, pointwise, in.data(), weights.data(), out.data());
  }
  return std::move(out).Finish();
}

}  // namespace

bool BlasConvolutionHandles(const Instruction& conv) {
  if (conv.opcode() != Opcode::kConvolution || !conv.shape().IsArray() ||
      conv.shape().HasDynamicDims() || !conv.attrs().dim_labels || !conv.attrs().window) {
    return false;
  }
  const ConvDimLabels& l = *conv.attrs().dim_labels;
  if (conv.attrs().window->dims.size() != l.input_spatial.size()) return false;
  return BlasType(conv.shape().dtype()) && BlasType(conv.operand(0)->shape().dtype()) &&
         BlasType(conv.operand(1)->shape().dtype()) && FitsBlasInt(conv);
}

absl::StatusOr<Literal> BlasConvolution(BufferPool& pool, const Instruction& conv,
                                        const Literal& input, const Literal& kernel) {
  if (absl::Status loaded = LoadOpenBlas().status(); !loaded.ok()) return loaded;
  if (input.element_count() == 0 || kernel.element_count() == 0) return Literal(conv.shape());
  if (conv.shape().dtype() == DType::kF64) return Convolve<double>(pool, conv, input, kernel);
  return Convolve<float>(pool, conv, input, kernel);
}

}  // namespace seam::runtime
