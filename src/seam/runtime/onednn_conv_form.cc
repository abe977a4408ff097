#include "seam/runtime/onednn_conv_form.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "seam/eval/index_util.h"

namespace seam::runtime::onednn_conv {
namespace {

std::optional<dnnl_data_type_t> DnnlType(DType t) {
  if (t == DType::kF32) return dnnl_f32;
  if (t == DType::kBF16) return dnnl_bf16;
  return std::nullopt;
}

// One HLO array: its type, its dimensions and the row-major strides of
// each, so that roles can name its dimensions in any order.
struct HloArray {
  dnnl_data_type_t type;
  std::vector<int64_t> dims, strides;

  HloArray(dnnl_data_type_t t, const Shape& shape)
      : type(t), dims(shape.dims()), strides(RowMajorStrides(shape.dims())) {}
  // The array whose dimensions are `leading` (size, stride) pairs followed
  // by the operand's dimensions `spatial`.
  DnnlArray Array(std::vector<std::pair<int64_t, int64_t>> leading, const IntList& spatial) const {
    DnnlArray a{type, {}, {}};
    for (auto [size, stride] : leading) {
      a.dims.push_back(size);
      a.strides.push_back(stride);
    }
    for (int64_t d : spatial) {
      a.dims.push_back(dims[d]);
      a.strides.push_back(strides[d]);
    }
    return a;
  }
  int64_t dim(int64_t d) const { return dims[d]; }
  int64_t stride(int64_t d) const { return strides[d]; }
};

int64_t Product(const IntList& dims, const Shape& shape) {
  int64_t p = 1;
  for (int64_t d : dims) p *= shape.dim(static_cast<int>(d));
  return p;
}

}  // namespace

int Argument(Form form, Role role) {
  static constexpr int kArguments[3][3] = {
      {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST},
      {DNNL_ARG_DIFF_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DIFF_DST},
      {DNNL_ARG_SRC, DNNL_ARG_DIFF_WEIGHTS, DNNL_ARG_DIFF_DST},
  };
  return kArguments[static_cast<int>(form)][role];
}

Role ResultRole(Form form) {
  switch (form) {
    case Form::kForward: return kDestination;
    case Form::kBackwardData: return kSource;
    case Form::kBackwardWeights: return kWeights;
  }
  return kDestination;
}

const char* FormName(Form form) {
  switch (form) {
    case Form::kForward: return "forward";
    case Form::kBackwardData: return "data gradient";
    case Form::kBackwardWeights: return "weight gradient";
  }
  return "?";
}

namespace {

// A convolution's arrays, labels and window, as the three forms read them.
struct Convolution {
  const ConvDimLabels& l;
  const Window& window;
  size_t rank;  // spatial dimensions
  int64_t feature_groups, batch_groups;
  HloArray in, kernel, out;

  int64_t InSpatial(size_t s) const { return in.dim(l.input_spatial[s]); }
  int64_t KernelSpatial(size_t s) const { return kernel.dim(l.kernel_spatial[s]); }
  int64_t OutSpatial(size_t s) const { return out.dim(l.output_spatial[s]); }
};

// The weight gradient: what the HLO calls the kernel is the forward
// convolution's output gradient, and the HLO output its weights.
std::optional<Statement> WeightGradient(const Convolution& c) {
  const ConvDimLabels& l = c.l;
  const int64_t g = c.batch_groups;
  const int64_t mb = c.in.dim(l.input_feature), ic = c.in.dim(l.input_batch);
  const int64_t oc = c.kernel.dim(l.kernel_output_feature);
  if (c.kernel.dim(l.kernel_input_feature) != mb || c.out.dim(l.output_feature) != oc ||
      c.out.dim(l.output_batch) * g != ic || oc % g != 0) {
    return std::nullopt;
  }
  Statement st;
  st.form = Form::kBackwardWeights;
  st.arrays[kSource] = c.in.Array(
      {{mb, c.in.stride(l.input_feature)}, {ic, c.in.stride(l.input_batch)}}, l.input_spatial);
  st.arrays[kDestination] = c.kernel.Array({{mb, c.kernel.stride(l.kernel_input_feature)},
                                            {oc, c.kernel.stride(l.kernel_output_feature)}},
                                           l.kernel_spatial);
  const int64_t of = c.out.stride(l.output_feature), ob = c.out.stride(l.output_batch);
  st.arrays[kWeights] =
      g > 1 ? c.out.Array({{g, oc / g * of}, {oc / g, of}, {ic / g, ob}}, l.output_spatial)
            : c.out.Array({{oc, of}, {ic, ob}}, l.output_spatial);
  st.operands = {Operand::kInput, Operand::kOutput, Operand::kKernel};
  for (size_t s = 0; s < c.rank; ++s) {
    const WindowDim& w = c.window.dims[s];
    const int64_t k = c.KernelSpatial(s), o = c.OutSpatial(s), i = c.InSpatial(s);
    st.strides.push_back(w.rhs_dilation);
    st.dilates.push_back(w.stride - 1);
    st.pad_low.push_back(w.pad_low);
    st.pad_high.push_back((k - 1) * w.rhs_dilation + (o - 1) * w.stride + 1 - i - w.pad_low);
    st.flip.push_back(false);
  }
  return st;
}

// Forward, the HLO window as it is.
Statement Forward(const Convolution& c) {
  const ConvDimLabels& l = c.l;
  const int64_t g = c.feature_groups;
  const int64_t o = c.kernel.dim(l.kernel_output_feature), i = c.kernel.dim(l.kernel_input_feature);
  const int64_t ko = c.kernel.stride(l.kernel_output_feature),
                ki = c.kernel.stride(l.kernel_input_feature);
  Statement st;
  st.form = Form::kForward;
  st.depthwise = g > 1 && i == 1;
  st.arrays[kSource] = c.in.Array({{c.in.dim(l.input_batch), c.in.stride(l.input_batch)},
                                   {c.in.dim(l.input_feature), c.in.stride(l.input_feature)}},
                                  l.input_spatial);
  st.arrays[kWeights] =
      g > 1 ? c.kernel.Array({{g, o / g * ko}, {o / g, ko}, {i, ki}}, l.kernel_spatial)
            : c.kernel.Array({{o, ko}, {i, ki}}, l.kernel_spatial);
  st.arrays[kDestination] =
      c.out.Array({{c.out.dim(l.output_batch), c.out.stride(l.output_batch)},
                   {c.out.dim(l.output_feature), c.out.stride(l.output_feature)}},
                  l.output_spatial);
  st.operands = {Operand::kInput, Operand::kKernel, Operand::kOutput};
  for (const WindowDim& w : c.window.dims) {
    st.strides.push_back(w.stride);
    st.dilates.push_back(w.rhs_dilation - 1);
    st.pad_low.push_back(w.pad_low);
    st.pad_high.push_back(w.pad_high);
    st.flip.push_back(w.reversal);
  }
  return st;
}

// The data gradient of the forward convolution whose stride is the input
// dilation: its source gradient is the HLO output, its destination
// gradient the HLO input, and HLO reads its kernel flipped.
Statement DataGradient(const Convolution& c) {
  const ConvDimLabels& l = c.l;
  const int64_t g = c.feature_groups;
  const int64_t fwd_out = c.kernel.dim(l.kernel_input_feature) * g;  // the HLO input's features
  const int64_t fwd_in = c.kernel.dim(l.kernel_output_feature);      // the HLO output's
  const int64_t ko = c.kernel.stride(l.kernel_output_feature),
                ki = c.kernel.stride(l.kernel_input_feature);
  Statement st;
  st.form = Form::kBackwardData;
  st.arrays[kDestination] = c.in.Array({{c.in.dim(l.input_batch), c.in.stride(l.input_batch)},
                                        {c.in.dim(l.input_feature), c.in.stride(l.input_feature)}},
                                       l.input_spatial);
  st.arrays[kWeights] =
      g > 1 ? c.kernel.Array({{g, fwd_in / g * ko}, {fwd_out / g, ki}, {fwd_in / g, ko}},
                             l.kernel_spatial)
            : c.kernel.Array({{fwd_out, ki}, {fwd_in, ko}}, l.kernel_spatial);
  st.arrays[kSource] = c.out.Array({{c.out.dim(l.output_batch), c.out.stride(l.output_batch)},
                                    {c.out.dim(l.output_feature), c.out.stride(l.output_feature)}},
                                   l.output_spatial);
  st.operands = {Operand::kOutput, Operand::kKernel, Operand::kInput};
  for (size_t s = 0; s < c.rank; ++s) {
    const WindowDim& w = c.window.dims[s];
    const int64_t k = c.KernelSpatial(s), o = c.OutSpatial(s), i = c.InSpatial(s);
    const int64_t low = (k - 1) * w.rhs_dilation - w.pad_low;
    st.strides.push_back(w.lhs_dilation);
    st.dilates.push_back(w.rhs_dilation - 1);
    st.pad_low.push_back(low);
    st.pad_high.push_back((i - 1) * w.lhs_dilation + (k - 1) * w.rhs_dilation + 1 - o - low);
    st.flip.push_back(!w.reversal);
  }
  return st;
}

}  // namespace

std::optional<Statement> State(const Instruction& conv) {
  if (conv.opcode() != Opcode::kConvolution || !conv.shape().IsArray() ||
      conv.shape().HasDynamicDims() || !conv.attrs().dim_labels || !conv.attrs().window) {
    return std::nullopt;
  }
  const Shape& in_shape = conv.operand(0)->shape();
  const Shape& kernel_shape = conv.operand(1)->shape();
  const Shape& out_shape = conv.shape();
  const std::optional<dnnl_data_type_t> in_type = DnnlType(in_shape.dtype()),
                                        kernel_type = DnnlType(kernel_shape.dtype()),
                                        out_type = DnnlType(out_shape.dtype());
  if (!in_type || !kernel_type || !out_type || *in_type != *kernel_type ||
      (*in_type == dnnl_f32 && *out_type != dnnl_f32)) {
    return std::nullopt;
  }
  if (in_shape.ElementCount().value_or(0) == 0 || kernel_shape.ElementCount().value_or(0) == 0 ||
      out_shape.ElementCount().value_or(0) == 0) {
    return std::nullopt;
  }
  const ConvDimLabels& l = *conv.attrs().dim_labels;
  const Window& window = *conv.attrs().window;
  const size_t rank = l.input_spatial.size();
  if (rank < 1 || rank > 3 || window.dims.size() != rank) return std::nullopt;
  const Convolution c{l,
                      window,
                      rank,
                      conv.attrs().feature_group_count.value_or(1),
                      conv.attrs().batch_group_count.value_or(1),
                      HloArray(*in_type, in_shape),
                      HloArray(*kernel_type, kernel_shape),
                      HloArray(*out_type, out_shape)};
  bool input_dilated = false, strided = false, reversed = false;
  for (const WindowDim& w : window.dims) {
    input_dilated |= w.lhs_dilation > 1;
    strided |= w.stride > 1;
    reversed |= w.reversal;
  }
  std::optional<Statement> st;
  const bool weight_gradient = c.batch_groups > 1 || Product(l.kernel_spatial, kernel_shape) >
                                                         Product(l.output_spatial, out_shape);
  if (weight_gradient) {
    if (input_dilated || reversed || c.feature_groups != 1) return std::nullopt;
    st = WeightGradient(c);
  } else if (c.batch_groups == 1 && !input_dilated) {
    st = Forward(c);
  } else if (c.batch_groups == 1 && !strided) {
    st = DataGradient(c);
  }
  if (!st) return std::nullopt;
  for (size_t s = 0; s < rank; ++s) {
    if (st->pad_low[s] < 0 || st->pad_high[s] < 0) return std::nullopt;
  }
  return st;
}

std::string StatementKey(const Statement& st) {
  return absl::StrCat("convolution ", static_cast<int>(st.form), " ", ArrayKey(st.arrays[0]), " ",
                      ArrayKey(st.arrays[1]), " ", ArrayKey(st.arrays[2]), " s",
                      absl::StrJoin(st.strides, ","), " d", absl::StrJoin(st.dilates, ","), " p",
                      absl::StrJoin(st.pad_low, ","), "_", absl::StrJoin(st.pad_high, ","));
}

}  // namespace seam::runtime::onednn_conv
