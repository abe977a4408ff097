#include "seam/runtime/onednn_conv.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "seam/runtime/onednn.h"
#include "seam/runtime/thread_pool.h"

namespace seam::runtime {
namespace {

enum class Form { kForward, kBackwardData, kBackwardWeights };

// The roles of a forward convolution, by which oneDNN names the arrays of
// all three forms.
enum Role { kSource = 0, kWeights = 1, kDestination = 2 };

// The HLO operands a role can be.
enum class Operand { kInput, kKernel, kOutput };

// An HLO convolution as oneDNN states it.
struct Statement {
  Form form;
  // The arrays by role, each with the strides it has in its HLO operand.
  std::array<DnnlArray, 3> arrays;
  std::array<Operand, 3> operands;
  std::vector<int64_t> strides, dilates, pad_low, pad_high;
  std::vector<bool> flip;  // spatial dimensions of the kernel read reversed
  bool depthwise = false;  // one input feature per group
};

// The execution argument of each role, by form.
int Argument(Form form, Role role) {
  static constexpr int kArguments[3][3] = {
      {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST},
      {DNNL_ARG_DIFF_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DIFF_DST},
      {DNNL_ARG_SRC, DNNL_ARG_DIFF_WEIGHTS, DNNL_ARG_DIFF_DST},
  };
  return kArguments[static_cast<int>(form)][role];
}

// The role the result is written in; the other two are read.
Role ResultRole(Form form) {
  switch (form) {
    case Form::kForward: return kDestination;
    case Form::kBackwardData: return kSource;
    case Form::kBackwardWeights: return kWeights;
  }
  return kDestination;
}

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

  HloArray(dnnl_data_type_t t, const Shape& shape) : type(t) {
    dims.assign(shape.dims().begin(), shape.dims().end());
    strides.assign(dims.size(), 1);
    for (int d = static_cast<int>(dims.size()) - 2; d >= 0; --d) strides[d] = strides[d + 1] * dims[d + 1];
  }
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
  const int64_t feature_groups = conv.attrs().feature_group_count.value_or(1);
  const int64_t batch_groups = conv.attrs().batch_group_count.value_or(1);

  bool input_dilated = false, strided = false, reversed = false;
  for (const WindowDim& w : window.dims) {
    input_dilated |= w.lhs_dilation > 1;
    strided |= w.stride > 1;
    reversed |= w.reversal;
  }
  const HloArray in(*in_type, in_shape), kernel(*kernel_type, kernel_shape),
      out(*out_type, out_shape);
  auto at = [](const IntList& dims, size_t s) { return static_cast<int64_t>(dims[s]); };

  Statement st;
  // The weight gradient: what the HLO calls the kernel is the forward
  // convolution's output gradient, and the HLO output its weights.
  const bool weight_gradient =
      batch_groups > 1 || Product(l.kernel_spatial, kernel_shape) > Product(l.output_spatial, out_shape);
  if (weight_gradient) {
    if (input_dilated || reversed || feature_groups != 1) return std::nullopt;
    const int64_t g = batch_groups;
    const int64_t mb = in.dim(l.input_feature), ic = in.dim(l.input_batch);
    const int64_t oc = kernel.dim(l.kernel_output_feature);
    if (kernel.dim(l.kernel_input_feature) != mb || out.dim(l.output_feature) != oc ||
        out.dim(l.output_batch) * g != ic || oc % g != 0) {
      return std::nullopt;
    }
    st.form = Form::kBackwardWeights;
    st.arrays[kSource] =
        in.Array({{mb, in.stride(l.input_feature)}, {ic, in.stride(l.input_batch)}}, l.input_spatial);
    st.arrays[kDestination] = kernel.Array(
        {{mb, kernel.stride(l.kernel_input_feature)}, {oc, kernel.stride(l.kernel_output_feature)}},
        l.kernel_spatial);
    const int64_t of = out.stride(l.output_feature), ob = out.stride(l.output_batch);
    st.arrays[kWeights] =
        g > 1 ? out.Array({{g, oc / g * of}, {oc / g, of}, {ic / g, ob}}, l.output_spatial)
              : out.Array({{oc, of}, {ic, ob}}, l.output_spatial);
    st.operands = {Operand::kInput, Operand::kOutput, Operand::kKernel};
    for (size_t s = 0; s < rank; ++s) {
      const WindowDim& w = window.dims[s];
      const int64_t k = kernel.dim(at(l.kernel_spatial, s)), o = out.dim(at(l.output_spatial, s));
      const int64_t i = in.dim(at(l.input_spatial, s));
      st.strides.push_back(w.rhs_dilation);
      st.dilates.push_back(w.stride - 1);
      st.pad_low.push_back(w.pad_low);
      st.pad_high.push_back((k - 1) * w.rhs_dilation + (o - 1) * w.stride + 1 - i - w.pad_low);
      st.flip.push_back(false);
    }
  } else if (batch_groups == 1 && !input_dilated) {
    // Forward, the HLO window as it is.
    const int64_t g = feature_groups;
    const int64_t o = kernel.dim(l.kernel_output_feature), i = kernel.dim(l.kernel_input_feature);
    const int64_t ko = kernel.stride(l.kernel_output_feature), ki = kernel.stride(l.kernel_input_feature);
    st.form = Form::kForward;
    st.depthwise = g > 1 && i == 1;
    st.arrays[kSource] = in.Array(
        {{in.dim(l.input_batch), in.stride(l.input_batch)}, {in.dim(l.input_feature), in.stride(l.input_feature)}},
        l.input_spatial);
    st.arrays[kWeights] = g > 1 ? kernel.Array({{g, o / g * ko}, {o / g, ko}, {i, ki}}, l.kernel_spatial)
                                : kernel.Array({{o, ko}, {i, ki}}, l.kernel_spatial);
    st.arrays[kDestination] = out.Array({{out.dim(l.output_batch), out.stride(l.output_batch)},
                                         {out.dim(l.output_feature), out.stride(l.output_feature)}},
                                        l.output_spatial);
    st.operands = {Operand::kInput, Operand::kKernel, Operand::kOutput};
    for (const WindowDim& w : window.dims) {
      st.strides.push_back(w.stride);
      st.dilates.push_back(w.rhs_dilation - 1);
      st.pad_low.push_back(w.pad_low);
      st.pad_high.push_back(w.pad_high);
      st.flip.push_back(w.reversal);
    }
  } else if (batch_groups == 1 && !strided) {
    // The data gradient of the forward convolution whose stride is the
    // input dilation: its source gradient is the HLO output, its
    // destination gradient the HLO input, and HLO reads its kernel flipped.
    const int64_t g = feature_groups;
    const int64_t fwd_out = kernel.dim(l.kernel_input_feature) * g;  // the HLO input's features
    const int64_t fwd_in = kernel.dim(l.kernel_output_feature);      // the HLO output's
    const int64_t ko = kernel.stride(l.kernel_output_feature), ki = kernel.stride(l.kernel_input_feature);
    st.form = Form::kBackwardData;
    st.arrays[kDestination] = in.Array(
        {{in.dim(l.input_batch), in.stride(l.input_batch)}, {in.dim(l.input_feature), in.stride(l.input_feature)}},
        l.input_spatial);
    st.arrays[kWeights] =
        g > 1 ? kernel.Array({{g, fwd_in / g * ko}, {fwd_out / g, ki}, {fwd_in / g, ko}}, l.kernel_spatial)
              : kernel.Array({{fwd_out, ki}, {fwd_in, ko}}, l.kernel_spatial);
    st.arrays[kSource] = out.Array({{out.dim(l.output_batch), out.stride(l.output_batch)},
                                    {out.dim(l.output_feature), out.stride(l.output_feature)}},
                                   l.output_spatial);
    st.operands = {Operand::kOutput, Operand::kKernel, Operand::kInput};
    for (size_t s = 0; s < rank; ++s) {
      const WindowDim& w = window.dims[s];
      const int64_t k = kernel.dim(at(l.kernel_spatial, s)), o = out.dim(at(l.output_spatial, s));
      const int64_t i = in.dim(at(l.input_spatial, s));
      const int64_t low = (k - 1) * w.rhs_dilation - w.pad_low;
      st.strides.push_back(w.lhs_dilation);
      st.dilates.push_back(w.rhs_dilation - 1);
      st.pad_low.push_back(low);
      st.pad_high.push_back((i - 1) * w.lhs_dilation + (k - 1) * w.rhs_dilation + 1 - o - low);
      st.flip.push_back(!w.reversal);
    }
  } else {
    return std::nullopt;
  }
  for (size_t s = 0; s < rank; ++s) {
    if (st.pad_low[s] < 0 || st.pad_high[s] < 0) return std::nullopt;
  }
  return st;
}

std::string StatementKey(const Statement& st) {
  return absl::StrCat("convolution ", static_cast<int>(st.form), " ", ArrayKey(st.arrays[0]), " ",
                      ArrayKey(st.arrays[1]), " ", ArrayKey(st.arrays[2]), " s",
                      absl::StrJoin(st.strides, ","), " d", absl::StrJoin(st.dilates, ","), " p",
                      absl::StrJoin(st.pad_low, ","), "_", absl::StrJoin(st.pad_high, ","));
}

// A convolution's primitive, and for each role whose layout it picked
// itself, the reorder from the plain array (or, for the result, back).
struct ConvolutionPlan {
  Primitive convolution;
  std::array<dnnl_memory_desc_t, 3> plain;
  std::array<std::optional<Primitive>, 3> reorders;
};

// The primitive with `layouts` by role (plain or any).
absl::StatusOr<Primitive> Create(const OneDnn& d, const Statement& st,
                                 const std::array<dnnl_memory_desc_t, 3>& layouts) {
  const dnnl_memory_desc_t *src = &layouts[kSource], *weights = &layouts[kWeights],
                           *dst = &layouts[kDestination];
  const int64_t *strides = st.strides.data(), *dilates = st.dilates.data();
  const int64_t *low = st.pad_low.data(), *high = st.pad_high.data();
  dnnl_convolution_desc_t forward;
  const dnnl_prop_kind_t kind = st.form == Form::kForward ? dnnl_forward_inference : dnnl_forward_training;
  if (d.convolution_forward_desc_init(&forward, kind, dnnl_convolution_direct, src, weights, nullptr, dst,
                                      strides, dilates, low, high) != dnnl_success) {
    return absl::InvalidArgumentError("oneDNN: a convolution it cannot describe");
  }
  if (st.form == Form::kForward) return CreatePrimitive(d, &forward);
  // A backward pass is chosen against its forward one.
  dnnl_primitive_desc_t hint = nullptr;
  if (d.primitive_desc_create(&hint, &forward, nullptr, d.engine, nullptr) != dnnl_success) {
    return absl::UnimplementedError("oneDNN: no forward convolution to take a gradient of");
  }
  dnnl_convolution_desc_t backward;
  dnnl_status_t described =
      st.form == Form::kBackwardData
          ? d.convolution_backward_data_desc_init(&backward, dnnl_convolution_direct, src, weights, dst,
                                                  strides, dilates, low, high)
          : d.convolution_backward_weights_desc_init(&backward, dnnl_convolution_direct, src, weights,
                                                     nullptr, dst, strides, dilates, low, high);
  absl::StatusOr<Primitive> made =
      described == dnnl_success
          ? CreatePrimitive(d, &backward, hint)
          : absl::InvalidArgumentError("oneDNN: a convolution gradient it cannot describe");
  d.primitive_desc_destroy(hint);
  return made;
}

absl::StatusOr<ConvolutionPlan> MakePlan(const OneDnn& d, const Statement& st) {
  ConvolutionPlan plan;
  std::array<dnnl_memory_desc_t, 3> any;
  for (int r = 0; r < 3; ++r) {
    absl::StatusOr<dnnl_memory_desc_t> plain = DescribePlain(d, st.arrays[r]);
    absl::StatusOr<dnnl_memory_desc_t> free = DescribeAny(d, st.arrays[r].type, st.arrays[r].dims);
    if (!plain.ok()) return plain.status();
    if (!free.ok()) return free.status();
    plan.plain[r] = *plain;
    any[r] = *free;
  }
  // A forward convolution reads and writes the activations where they lie
  // if oneDNN has a kernel for that (the weights in its own layout), else
  // every array in its layouts. Gradients the other way round: on plain
  // layouts oneDNN has only im2col-based kernels for them (MobileNetV2's
  // training step: library time 9.9 s with those, 4.8 s blocked with the
  // copies).
  std::array<dnnl_memory_desc_t, 3> where_they_lie = plan.plain;
  where_they_lie[kWeights] = any[kWeights];
  std::array<std::array<dnnl_memory_desc_t, 3>, 2> preferences = {where_they_lie, any};
  if (st.form != Form::kForward) std::swap(preferences[0], preferences[1]);
  absl::StatusOr<Primitive> convolution = Create(d, st, preferences[0]);
  if (!convolution.ok()) convolution = Create(d, st, preferences[1]);
  if (!convolution.ok()) return convolution.status();
  // A depthwise convolution oneDNN would run as per-channel GEMMs (on
  // channel-major layouts) is Seam's own loop's: 1.9x faster, measured.
  const char* implementation = nullptr;
  d.primitive_desc_query(convolution->desc, dnnl_query_impl_info_str, 0, &implementation);
  if (st.depthwise && absl::string_view(implementation).find("gemm") != absl::string_view::npos) {
    DestroyPrimitive(d, *convolution);
    return absl::UnimplementedError("oneDNN runs this depthwise convolution as GEMMs");
  }
  plan.convolution = *convolution;
  const Role result = ResultRole(st.form);
  for (Role r : {kSource, kWeights, kDestination}) {
    const dnnl_memory_desc_t& chosen = plan.convolution.Layout(Argument(st.form, r));
    if (d.memory_desc_equal(&chosen, &plan.plain[r])) continue;
    absl::StatusOr<Primitive> reorder =
        r == result ? CreateReorder(d, chosen, plan.plain[r]) : CreateReorder(d, plan.plain[r], chosen);
    if (!reorder.ok()) {
      DestroyPrimitive(d, plan.convolution);
      return reorder.status();
    }
    plan.reorders[r] = *reorder;
  }
  return plan;
}

// `kernel` with the spatial dimensions in `flip` reversed, into `to`.
void FlipKernel(const Instruction& conv, const Literal& kernel, const std::vector<bool>& flip,
                uint8_t* to) {
  const Shape& shape = kernel.shape();
  const ConvDimLabels& l = *conv.attrs().dim_labels;
  const int rank = shape.rank();
  std::vector<bool> reversed(rank, false);
  for (size_t s = 0; s < flip.size(); ++s) reversed[l.kernel_spatial[s]] = flip[s];
  const size_t bytes = DTypeByteSize(shape.dtype());
  const uint8_t* from = kernel.data<uint8_t>();
  std::vector<int64_t> index(rank, 0);
  const int64_t count = kernel.element_count();
  for (int64_t e = 0; e < count; ++e) {
    int64_t target = 0;
    for (int d = 0; d < rank; ++d) {
      target = target * shape.dim(d) + (reversed[d] ? shape.dim(d) - 1 - index[d] : index[d]);
    }
    std::memcpy(to + target * bytes, from + e * bytes, bytes);
    for (int d = rank - 1; d >= 0; --d) {
      if (++index[d] < shape.dim(d)) break;
      index[d] = 0;
    }
  }
}

const char* FormName(Form form) {
  switch (form) {
    case Form::kForward: return "forward";
    case Form::kBackwardData: return "data gradient";
    case Form::kBackwardWeights: return "weight gradient";
  }
  return "?";
}

// The plan of `st` for an OpenMP team of `team` threads (oneDNN shares the
// work out among the threads there are when a primitive is created), made
// once.
absl::StatusOr<const ConvolutionPlan*> PlanOf(const OneDnn& d, const Statement& st, int team) {
  absl::StatusOr<std::shared_ptr<const ConvolutionPlan>> plan =
      Cached<std::shared_ptr<const ConvolutionPlan>>(
          absl::StrCat(StatementKey(st), " team ", team),
          [&]() -> absl::StatusOr<std::shared_ptr<const ConvolutionPlan>> {
            if (d.omp_set_num_threads != nullptr) d.omp_set_num_threads(team);
            absl::StatusOr<ConvolutionPlan> made = MakePlan(d, st);
            if (d.omp_set_num_threads != nullptr) d.omp_set_num_threads(1);
            if (!made.ok()) return made.status();
            return std::make_shared<const ConvolutionPlan>(*std::move(made));
          });
  if (!plan.ok()) return plan.status();
  return plan->get();
}

// A share of a convolution's work for one thread: the convolution it is,
// and where each of its arrays starts in the whole one's (bytes).
struct Share {
  Statement statement;
  std::array<int64_t, 3> byte_offsets{0, 0, 0};
};

int64_t ElementBytes(dnnl_data_type_t type) { return type == dnnl_f32 ? 4 : 2; }

// The shares of `st` among `threads`: its image batch when there are
// enough images; else the output features of a forward convolution when
// each share keeps at least 32 (the width of oneDNN's register blocking);
// else the whole, for oneDNN's OpenMP team. (A weight gradient sums over
// the batch; it is not shared out.)
std::vector<Share> Shares(const Statement& st, int threads) {
  const int64_t batch = st.arrays[kSource].dims[0];
  const bool ungrouped = st.arrays[kWeights].dims.size() == st.arrays[kSource].dims.size();
  const int64_t features = st.arrays[kWeights].dims[0];
  // Shares of `extent` along dimension `dim` of the roles `roles`.
  auto split = [&](int64_t extent, std::vector<std::pair<Role, int>> roles, int64_t multiple) {
    std::vector<Share> shares;
    const int64_t step = ((extent + threads - 1) / threads + multiple - 1) / multiple * multiple;
    for (int64_t lo = 0; lo < extent; lo += step) {
      Share share{st, {0, 0, 0}};
      for (auto [role, dim] : roles) {
        DnnlArray& a = share.statement.arrays[role];
        a.dims[dim] = std::min(step, extent - lo);
        share.byte_offsets[role] = lo * a.strides[dim] * ElementBytes(a.type);
      }
      shares.push_back(std::move(share));
    }
    return shares;
  };
  if (threads > 1 && st.form != Form::kBackwardWeights && batch >= threads) {
    return split(batch, {{kSource, 0}, {kDestination, 0}}, 1);
  }
  if (threads > 1 && st.form == Form::kForward && ungrouped && features >= 32 * threads) {
    return split(features, {{kWeights, 0}, {kDestination, 1}}, 16);
  }
  return {Share{st, {0, 0, 0}}};
}

// Runs one convolution of `plan`: its inputs reordered from `plain` into
// `blocked` where the primitive has its own layouts, the result reordered
// back.
absl::Status RunShare(const OneDnn& d, const ConvolutionPlan& plan, Form form,
                      const std::array<uint8_t*, 3>& plain, const std::array<uint8_t*, 3>& blocked,
                      int team) {
  const Role result = ResultRole(form);
  std::array<const dnnl_memory_desc_t*, 3> layout;
  std::array<uint8_t*, 3> data;
  for (Role r : {kSource, kWeights, kDestination}) {
    layout[r] = &plan.convolution.Layout(Argument(form, r));
    data[r] = plan.reorders[r] ? blocked[r] : plain[r];
    if (plan.reorders[r] && r != result) {
      if (absl::Status s = Execute(d, *plan.reorders[r],
                                   {{DNNL_ARG_FROM, &plan.plain[r], plain[r]}, {DNNL_ARG_TO, layout[r], data[r]}},
                                   team);
          !s.ok()) {
        return s;
      }
    }
  }
  if (absl::Status s = Execute(d, plan.convolution,
                               {{Argument(form, kSource), layout[kSource], data[kSource]},
                                {Argument(form, kWeights), layout[kWeights], data[kWeights]},
                                {Argument(form, kDestination), layout[kDestination], data[kDestination]}},
                               team);
      !s.ok()) {
    return s;
  }
  if (!plan.reorders[result]) return absl::OkStatus();
  return Execute(d, *plan.reorders[result],
                 {{DNNL_ARG_FROM, layout[result], data[result]}, {DNNL_ARG_TO, &plan.plain[result], plain[result]}},
                 team);
}

}  // namespace

bool OneDnnConvolutionServes(const Instruction& conv) { return State(conv).has_value(); }

absl::StatusOr<std::string> OneDnnConvolutionImplementation(const Instruction& conv) {
  absl::StatusOr<const OneDnn*> library = LoadOneDnn();
  if (!library.ok()) return library.status();
  const std::optional<Statement> st = State(conv);
  if (!st) return absl::UnimplementedError("oneDNN has no form of this convolution");
  absl::StatusOr<const ConvolutionPlan*> plan = PlanOf(**library, *st, ThreadPool::Global().size());
  if (!plan.ok()) return plan.status();
  const char* implementation = nullptr;
  (*library)->primitive_desc_query((*plan)->convolution.desc, dnnl_query_impl_info_str, 0, &implementation);
  std::vector<std::string> copied;
  const char* kRoleNames[3] = {"source", "weights", "destination"};
  for (int r = 0; r < 3; ++r) {
    if ((*plan)->reorders[r]) copied.push_back(kRoleNames[r]);
  }
  return absl::StrCat(FormName(st->form), " ", implementation ? implementation : "?",
                      copied.empty() ? "" : ", reordering ", absl::StrJoin(copied, " and "));
}

absl::StatusOr<Literal> OneDnnConvolution(BufferPool& pool, const Instruction& conv,
                                          const Literal& input, const Literal& kernel) {
  absl::StatusOr<const OneDnn*> library = LoadOneDnn();
  if (!library.ok()) return library.status();
  const OneDnn& d = **library;
  const std::optional<Statement> st = State(conv);
  if (!st) return absl::UnimplementedError("oneDNN has no form of this convolution");
  ThreadPool& threads = ThreadPool::Global();
  const std::vector<Share> shares = Shares(*st, threads.size());
  // One share runs on oneDNN's OpenMP team; several on Seam's threads,
  // one each.
  const int team = shares.size() == 1 ? threads.size() : 1;
  std::vector<const ConvolutionPlan*> plans;
  for (const Share& share : shares) {
    absl::StatusOr<const ConvolutionPlan*> plan = PlanOf(d, share.statement, team);
    if (!plan.ok()) return plan.status();
    plans.push_back(*plan);
  }

  Literal out = pool.TakeLiteral(conv.shape());
  std::optional<PooledArray<uint8_t>> flipped;
  const uint8_t* kernel_data = kernel.data<uint8_t>();
  if (std::find(st->flip.begin(), st->flip.end(), true) != st->flip.end()) {
    flipped.emplace(pool, kernel.bytes().size());
    FlipKernel(conv, kernel, st->flip, flipped->data());
    kernel_data = flipped->data();
  }
  std::array<uint8_t*, 3> plain;
  for (Role r : {kSource, kWeights, kDestination}) {
    switch (st->operands[r]) {
      case Operand::kInput: plain[r] = const_cast<uint8_t*>(input.data<uint8_t>()); break;
      case Operand::kKernel: plain[r] = const_cast<uint8_t*>(kernel_data); break;
      case Operand::kOutput: plain[r] = out.mutable_data<uint8_t>(); break;
    }
  }
  // Memory for the copies in the primitives' layouts, taken here: the
  // pool is the calling thread's.
  std::vector<std::array<std::optional<PooledArray<uint8_t>>, 3>> blocked(shares.size());
  for (size_t i = 0; i < shares.size(); ++i) {
    for (Role r : {kSource, kWeights, kDestination}) {
      if (!plans[i]->reorders[r]) continue;
      blocked[i][r].emplace(pool, d.memory_desc_get_size(&plans[i]->convolution.Layout(Argument(st->form, r))));
    }
  }
  auto run = [&](size_t i) {
    std::array<uint8_t*, 3> share_plain, share_blocked;
    for (Role r : {kSource, kWeights, kDestination}) {
      share_plain[r] = plain[r] + shares[i].byte_offsets[r];
      share_blocked[r] = blocked[i][r] ? blocked[i][r]->data() : nullptr;
    }
    return RunShare(d, *plans[i], st->form, share_plain, share_blocked, team);
  };
  if (shares.size() == 1) {
    if (absl::Status s = run(0); !s.ok()) return s;
    return out;
  }
  std::mutex mu;
  absl::Status status;
  threads.ParallelFor(static_cast<int64_t>(shares.size()), 1, [&](int64_t begin, int64_t end, int) {
    for (int64_t i = begin; i < end; ++i) {
      if (absl::Status s = run(static_cast<size_t>(i)); !s.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        status = s;
      }
    }
  });
  if (!status.ok()) return status;
  return out;
}

}  // namespace seam::runtime
