#include "seam/runtime/onednn_conv.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "seam/eval/index_util.h"
#include "seam/runtime/onednn.h"
#include "seam/runtime/onednn_block_copy.h"
#include "seam/runtime/onednn_conv_form.h"
#include "seam/runtime/thread_pool.h"

namespace seam::runtime {
namespace {

using onednn_conv::Argument;
using onednn_conv::Form;
using onednn_conv::FormName;
using onednn_conv::Operand;
using onednn_conv::ResultRole;
using onednn_conv::Role;
using onednn_conv::State;
using onednn_conv::Statement;
using onednn_conv::StatementKey;
using enum onednn_conv::Role;

// A convolution's primitive, and for each role whose layout it picked
// itself, how the plain array gets into it (or, for the result, back): a
// copy by whole blocks where that layout is the plain one blocked along
// its contiguous dimension, else oneDNN's reorder.
struct ConvolutionPlan {
  Primitive convolution;
  std::array<dnnl_memory_desc_t, 3> plain;
  std::array<std::optional<Primitive>, 3> reorders;
  std::array<bool, 3> copies_into_blocks{false, false, false};

  // Whether role `r` runs on a copy in the primitive's layout.
  bool Converts(Role r) const { return reorders[r].has_value() || copies_into_blocks[r]; }
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
  // Activations are read and written where they lie (the weights in
  // oneDNN's own layout) when oneDNN has a direct kernel for that: every
  // form on channels-last activations (MobileNetV2's training step after
  // channels-last: library time 2.30 -> 1.41 s against blocked layouts with
  // copies). Where it has only its im2col-based `gemm:jit` kernel
  // (channel-major activations), gradients and depthwise convolutions take
  // its blocked layouts and direct kernels with the copies (MobileNetV2's
  // gradients: 9.9 s -> 4.8 s; depthwise: 4.7 -> 3.0 s); other forward
  // convolutions keep `gemm:jit`, which beat the blocked kernel plus the
  // copies there (library time 4.7 s the other way).
  std::array<dnnl_memory_desc_t, 3> where_they_lie = plan.plain;
  where_they_lie[kWeights] = any[kWeights];
  absl::StatusOr<Primitive> convolution = Create(d, st, where_they_lie);
  if (!convolution.ok()) convolution = Create(d, st, any);
  if (!convolution.ok()) return convolution.status();
  if ((st.form != Form::kForward || st.depthwise) &&
      absl::StrContains(convolution->Implementation(), "gemm")) {
    if (absl::StatusOr<Primitive> blocked = Create(d, st, any); blocked.ok()) {
      DestroyPrimitive(d, *convolution);
      convolution = blocked;
    }
  }
  plan.convolution = *convolution;
  const Role result = ResultRole(st.form);
  for (Role r : {kSource, kWeights, kDestination}) {
    const dnnl_memory_desc_t& chosen = plan.convolution.Layout(Argument(st.form, r));
    if (d.memory_desc_equal(&chosen, &plan.plain[r])) continue;
    if (r != result && CopiesIntoBlocks(plan.plain[r], chosen)) {
      plan.copies_into_blocks[r] = true;
      continue;
    }
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
  ForEachIndex(shape.dims(), [&](absl::Span<const int64_t> index, int64_t linear) {
    int64_t target = 0;
    for (int d = 0; d < rank; ++d) {
      target = target * shape.dim(d) + (reversed[d] ? shape.dim(d) - 1 - index[d] : index[d]);
    }
    std::memcpy(to + target * bytes, from + linear * bytes, bytes);
  });
}

// The plan of `st` for an OpenMP team of `team` threads (oneDNN shares the
// work out among the threads there are when a primitive is created), made
// once.
absl::StatusOr<const ConvolutionPlan*> PlanOf(const OneDnn& d, const Statement& st, int team) {
  absl::StatusOr<std::shared_ptr<const ConvolutionPlan>> plan =
      Cached<std::shared_ptr<const ConvolutionPlan>>(
          absl::StrCat(StatementKey(st), " team ", team),
          [&]() -> absl::StatusOr<std::shared_ptr<const ConvolutionPlan>> {
            absl::StatusOr<ConvolutionPlan> made =
                CreatedForTeam<ConvolutionPlan>(d, team, [&] { return MakePlan(d, st); });
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

// Bands of output rows (the first spatial dimension) of a forward
// convolution, one per thread: each reads the input rows its band's window
// covers, the padding where the band meets an edge, and the weights whole.
// None when a band would read padding alone.
std::vector<Share> RowBands(const Statement& st, int threads) {
  const DnnlArray& src = st.arrays[kSource];
  const DnnlArray& dst = st.arrays[kDestination];
  const DnnlArray& weights = st.arrays[kWeights];
  const int64_t rows = dst.dims[2], input_rows = src.dims[2];
  const int64_t taps = weights.dims[weights.dims.size() - st.strides.size()];
  const int64_t stride = st.strides[0], dilation = st.dilates[0] + 1;
  const int64_t step = (rows + threads - 1) / threads;
  std::vector<Share> shares;
  for (int64_t o0 = 0; o0 < rows; o0 += step) {
    const int64_t o1 = std::min(rows, o0 + step);
    // The input rows under the band's first and last taps.
    const int64_t first = o0 * stride - st.pad_low[0];
    const int64_t last = (o1 - 1) * stride - st.pad_low[0] + (taps - 1) * dilation;
    const int64_t lo = std::max<int64_t>(0, first), hi = std::min(input_rows, last + 1);
    if (hi <= lo) return {};
    Share share{st, {0, 0, 0}};
    share.statement.arrays[kSource].dims[2] = hi - lo;
    share.byte_offsets[kSource] = lo * src.strides[2] * src.element_bytes();
    share.statement.arrays[kDestination].dims[2] = o1 - o0;
    share.byte_offsets[kDestination] = o0 * dst.strides[2] * dst.element_bytes();
    share.statement.pad_low[0] = lo - first;
    share.statement.pad_high[0] = last + 1 - hi;
    shares.push_back(std::move(share));
  }
  return shares;
}

// The shares of `st` among `threads`: its image batch when there are
// enough images; else, for a forward convolution whose input outweighs its
// weights, bands of output rows (resnet50's 7x7 stem reads 159K floats
// through 9K of weights: shares of features each read the whole input, 1.9
// ms against the library's 0.85); else the output features of a forward
// convolution when each share keeps at least 32 (the width of oneDNN's
// register blocking); else the whole, for oneDNN's OpenMP team. (A weight
// gradient sums over the batch; it is not shared out.)
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
        share.byte_offsets[role] = lo * a.strides[dim] * a.element_bytes();
      }
      shares.push_back(std::move(share));
    }
    return shares;
  };
  if (threads > 1 && st.form != Form::kBackwardWeights && batch >= threads) {
    return split(batch, {{kSource, 0}, {kDestination, 0}}, 1);
  }
  if (threads > 1 && st.form == Form::kForward && st.arrays[kDestination].dims[2] >= 2 * threads &&
      st.arrays[kWeights].element_count() < st.arrays[kSource].element_count()) {
    if (std::vector<Share> bands = RowBands(st, threads); !bands.empty()) return bands;
  }
  if (threads > 1 && st.form == Form::kForward && ungrouped && features >= 32 * threads) {
    return split(features, {{kWeights, 0}, {kDestination, 1}}, 16);
  }
  return {Share{st, {0, 0, 0}}};
}

// Runs the convolution primitive `p` on arrays already in its layouts,
// by role.
absl::Status RunConvolution(const OneDnn& d, const Primitive& p, Form form,
                            const std::array<uint8_t*, 3>& data, int team) {
  const int src = Argument(form, kSource), weights = Argument(form, kWeights),
            dst = Argument(form, kDestination);
  return Execute(d, p,
                 {{src, &p.Layout(src), data[kSource]},
                  {weights, &p.Layout(weights), data[kWeights]},
                  {dst, &p.Layout(dst), data[kDestination]}},
                 team);
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
    data[r] = plan.Converts(r) ? blocked[r] : plain[r];
    if (plan.copies_into_blocks[r]) {
      CopyIntoBlocks(plan.plain[r], plain[r], *layout[r], data[r]);
    } else if (plan.reorders[r] && r != result) {
      if (absl::Status s = Execute(d, *plan.reorders[r],
                                   {{DNNL_ARG_FROM, &plan.plain[r], plain[r]}, {DNNL_ARG_TO, layout[r], data[r]}},
                                   team);
          !s.ok()) {
        return s;
      }
    }
  }
  if (absl::Status s = RunConvolution(d, plan.convolution, form, data, team); !s.ok()) return s;
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
  std::vector<std::string> copied;
  const char* kRoleNames[3] = {"source", "weights", "destination"};
  for (int r = 0; r < 3; ++r) {
    if ((*plan)->Converts(static_cast<Role>(r))) copied.push_back(kRoleNames[r]);
  }
  return absl::StrCat(FormName(st->form), " ", (*plan)->convolution.Implementation(),
                      copied.empty() ? "" : ", reordering ", absl::StrJoin(copied, " and "));
}

absl::StatusOr<std::function<absl::Status()>> OneDnnConvolutionAlone(const Instruction& conv) {
  absl::StatusOr<const OneDnn*> library = LoadOneDnn();
  if (!library.ok()) return library.status();
  const OneDnn& d = **library;
  const std::optional<Statement> st = State(conv);
  if (!st) return absl::UnimplementedError("oneDNN has no form of this convolution");
  const int team = ThreadPool::Global().size();
  std::array<dnnl_memory_desc_t, 3> any;
  for (Role r : {kSource, kWeights, kDestination}) {
    absl::StatusOr<dnnl_memory_desc_t> md = DescribeAny(d, st->arrays[r].type, st->arrays[r].dims);
    if (!md.ok()) return md.status();
    any[r] = *md;
  }
  absl::StatusOr<Primitive> primitive =
      CreatedForTeam<Primitive>(d, team, [&] { return Create(d, *st, any); });
  if (!primitive.ok()) return primitive.status();
  auto memory = std::make_shared<std::array<std::vector<uint8_t>, 3>>();
  for (Role r : {kSource, kWeights, kDestination}) {
    (*memory)[r].assign(d.memory_desc_get_size(&primitive->Layout(Argument(st->form, r))), 0);
  }
  const Form form = st->form;
  const Primitive p = *primitive;  // kept for the process, like every primitive
  return std::function<absl::Status()>([&d, p, form, memory, team]() {
    return RunConvolution(d, p, form, {(*memory)[kSource].data(), (*memory)[kWeights].data(),
                                       (*memory)[kDestination].data()},
                          team);
  });
}

absl::StatusOr<Literal> OneDnnConvolution(BufferPool& pool, const Instruction& conv,
                                          const Literal& input, const Literal& kernel,
                                          ResultEpilogue* epilogue) {
  const std::optional<Statement> st = State(conv);
  if (!st) return absl::UnimplementedError("oneDNN has no form of this convolution");
  absl::StatusOr<const OneDnn*> library = LoadOneDnn();
  if (!library.ok()) return library.status();
  const OneDnn& d = **library;
  ThreadPool& threads = ThreadPool::Global();
  const int parallelism = threads.Parallelism();
  const std::vector<Share> shares = Shares(*st, parallelism);
  // One share runs on oneDNN's OpenMP team; several on Seam's threads,
  // one each.
  const int team = shares.size() == 1 ? parallelism : 1;
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
      if (!plans[i]->Converts(r)) continue;
      blocked[i][r].emplace(pool, d.memory_desc_get_size(&plans[i]->convolution.Layout(Argument(st->form, r))));
    }
  }
  // Shares of images of a result whose batch is outermost are row-major
  // ranges of it, shares of output features one whose features are
  // innermost (NHWC) ranges of its last dimension: the epilogue follows
  // each.
  const Role result = ResultRole(st->form);
  const DnnlArray& whole = st->arrays[result];
  const int64_t elements = out.element_count();
  const bool by_images = result != kWeights && shares[0].statement.arrays[result].dims[0] < whole.dims[0];
  const bool by_features = result == kDestination && shares[0].statement.arrays[result].dims[1] < whole.dims[1];
  const bool by_rows =
      result == kDestination && shares[0].statement.arrays[result].dims[2] < whole.dims[2];
  const bool fused =
      epilogue != nullptr && shares.size() > 1 &&
      ((by_images && ResultEpilogue::Contiguous(elements, whole.dims[0], whole.strides[0])) ||
       (by_rows && ResultEpilogue::Contiguous(elements, whole.dims[2], whole.strides[2])) ||
       (by_features && whole.strides[1] == 1 && whole.dims[1] == epilogue->columns));
  auto run = [&](size_t i) {
    std::array<uint8_t*, 3> share_plain, share_blocked;
    for (Role r : {kSource, kWeights, kDestination}) {
      share_plain[r] = plain[r] + shares[i].byte_offsets[r];
      share_blocked[r] = blocked[i][r] ? blocked[i][r]->data() : nullptr;
    }
    absl::Status s = RunShare(d, *plans[i], st->form, share_plain, share_blocked, team);
    if (s.ok() && fused) {
      const DnnlArray& share = shares[i].statement.arrays[result];
      const int64_t begin = shares[i].byte_offsets[result] / whole.element_bytes();
      if (by_images) {
        epilogue->ApplyRange(plain[result], begin, begin + share.dims[0] * whole.strides[0]);
      } else if (by_rows) {
        epilogue->ApplyRange(plain[result], begin, begin + share.dims[2] * whole.strides[2]);
      } else {
        epilogue->ApplyColumns(plain[result], elements, begin, begin + share.dims[1]);
      }
    }
    return s;
  };
  if (shares.size() == 1) {
    if (absl::Status s = run(0); !s.ok()) return s;
    return out;
  }
  if (absl::Status s = threads.ParallelForEach(static_cast<int64_t>(shares.size()),
                                               [&](int64_t i) { return run(static_cast<size_t>(i)); });
      !s.ok()) {
    return s;
  }
  if (fused) epilogue->applied = true;
  return out;
}

}  // namespace seam::runtime
