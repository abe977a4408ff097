#include "onednn_ops.h"

#include <stdexcept>

#include "oneapi/dnnl/dnnl_version.h"

namespace libbench {

using dnnl::memory;
using dt = memory::data_type;
using tag = memory::format_tag;

namespace {

// Strides (in elements) of each label in a packed array of `order`.
std::map<char, int64_t> LabelStrides(const std::string& order, const std::map<char, int64_t>& extent) {
  std::map<char, int64_t> stride;
  int64_t s = 1;
  for (int i = static_cast<int>(order.size()) - 1; i >= 0; --i) {
    stride[order[i]] = s;
    s *= extent.at(order[i]);
  }
  return stride;
}

// A copy of a 4-D array with the labels in `flip` reversed.
std::vector<float> Flipped(const float* src, const std::string& order, const std::map<char, int64_t>& extent,
                           const std::string& flip) {
  int64_t e[4], total = 1;
  for (int i = 0; i < 4; ++i) total *= (e[i] = extent.at(order[i]));
  std::vector<float> out(static_cast<size_t>(total));
  bool f[4];
  for (int i = 0; i < 4; ++i) f[i] = flip.find(order[i]) != std::string::npos;
  int64_t at = 0;
  for (int64_t i0 = 0; i0 < e[0]; ++i0) {
    for (int64_t i1 = 0; i1 < e[1]; ++i1) {
      for (int64_t i2 = 0; i2 < e[2]; ++i2) {
        for (int64_t i3 = 0; i3 < e[3]; ++i3, ++at) {
          int64_t j0 = f[0] ? e[0] - 1 - i0 : i0, j1 = f[1] ? e[1] - 1 - i1 : i1;
          int64_t j2 = f[2] ? e[2] - 1 - i2 : i2, j3 = f[3] ? e[3] - 1 - i3 : i3;
          out[static_cast<size_t>(((j0 * e[1] + j1) * e[2] + j2) * e[3] + j3)] = src[at];
        }
      }
    }
  }
  return out;
}

std::string Describe(const memory::desc& d) {
  // The blocking, as oneDNN's verbose prints it, is not in the C++ API of
  // 2.x: report the inner blocks, enough to tell plain from blocked.
  const auto& b = d.data.format_desc.blocking;
  if (d.data.format_kind != dnnl_blocked) return "non-blocked";
  std::string s = b.inner_nblks == 0 ? "plain" : "blocked";
  for (int i = 0; i < b.inner_nblks; ++i) {
    s += (i ? "x" : ":") + std::to_string(b.inner_blks[i]) + static_cast<char>('a' + b.inner_idxs[i]);
  }
  return s;
}

}  // namespace

DnnlMatmul::DnnlMatmul(const dnnl::engine& engine, const GemmCase& g, bool weights_any, void* a, void* b,
                       float* c) {
  const dt in_type = g.bf16 ? dt::bf16 : dt::f32;
  memory::dims ad, bd, cd, as, bs, cs;
  if (g.batch > 1) {
    ad = {g.batch, g.m, g.k}, bd = {g.batch, g.k, g.n}, cd = {g.batch, g.m, g.n};
    as = g.ta ? memory::dims{g.m * g.k, 1, g.m} : memory::dims{g.m * g.k, g.k, 1};
    bs = g.tb ? memory::dims{g.k * g.n, 1, g.k} : memory::dims{g.k * g.n, g.n, 1};
    cs = {g.m * g.n, g.n, 1};
  } else {
    ad = {g.m, g.k}, bd = {g.k, g.n}, cd = {g.m, g.n};
    as = g.ta ? memory::dims{1, g.m} : memory::dims{g.k, 1};
    bs = g.tb ? memory::dims{1, g.k} : memory::dims{g.n, 1};
    cs = {g.n, 1};
  }
  memory::desc a_md(ad, in_type, as), b_user_md(bd, in_type, bs), c_md(cd, dt::f32, cs);
  memory::desc b_md = weights_any ? memory::desc(bd, in_type, tag::any) : b_user_md;
  pd_ = dnnl::matmul::primitive_desc(dnnl::matmul::desc(a_md, b_md, c_md), engine);
  prim_ = dnnl::matmul(pd_);
  a_ = memory(a_md, engine, a);
  b_user_ = memory(b_user_md, engine, b);
  c_ = memory(c_md, engine, c);
  reorder_ = pd_.weights_desc() != b_user_md;
  b_ = reorder_ ? memory(pd_.weights_desc(), engine) : b_user_;
}

void DnnlMatmul::ReorderWeights(dnnl::stream& s) {
  if (!reorder_) return;
  dnnl::reorder(b_user_, b_).execute(s, b_user_, b_);
  s.wait();
}

void DnnlMatmul::Run(dnnl::stream& s) {
  prim_.execute(s, {{DNNL_ARG_SRC, a_}, {DNNL_ARG_WEIGHTS, b_}, {DNNL_ARG_DST, c_}});
  s.wait();
}

std::string DnnlMatmul::Impl() const { return std::string(pd_.impl_info_str()) + "; B " + Describe(pd_.weights_desc()); }

std::unique_ptr<dnnl::reorder> DnnlConv::Link(Operand& o, const dnnl::engine& e, const memory::desc& prim,
                                              bool to_user) {
  if (prim == o.user.get_desc()) {
    o.prim = o.user;
    return nullptr;
  }
  o.prim = memory(prim, e);
  return to_user ? std::make_unique<dnnl::reorder>(o.prim, o.user) : std::make_unique<dnnl::reorder>(o.user, o.prim);
}

DnnlConv::DnnlConv(const dnnl::engine& engine, const Case& cs, const float* in, const float* ker, float* out,
                   bool plain) {
  const ConvCase& c = cs.conv;
  const auto is = LabelStrides(c.in_order, InputExtent(c));
  const auto ks = LabelStrides(c.ker_order, KernelExtent(c));
  const auto os = LabelStrides(c.out_order, OutputExtent(c));
  auto any = [](const memory::dims& d) { return memory::desc(d, dt::f32, tag::any); };
  // Activations (everything but forward weights): the plain layouts as they
  // are when `plain`, else whatever the primitive prefers.
  auto act = [&](const Operand& o, const memory::dims& d) { return plain ? o.user.get_desc() : any(d); };
  auto user = [&](const memory::dims& d, const memory::dims& s, const float* p) {
    return memory(memory::desc(d, dt::f32, s), engine, const_cast<float*>(p));
  };
  // Weights memory for groups g: dims (G, O/G, I/G, H, W), else (O, I, H, W).
  auto weights_dims = [](int64_t g, int64_t o, int64_t i, int64_t h, int64_t w) {
    return g > 1 ? memory::dims{g, o / g, i / g, h, w} : memory::dims{o, i, h, w};
  };
  const float* kernel = ker;
  auto flip = [&](bool fh, bool fw) {
    if (!fh && !fw) return;
    reversed_ = Flipped(ker, c.ker_order, KernelExtent(c), std::string(fh ? "0" : "") + (fw ? "1" : ""));
    kernel = reversed_.data();
  };
  const auto prop = dnnl::prop_kind::forward_training;
  const auto algo = dnnl::algorithm::convolution_direct;

  if (cs.cls == "conv_bwd_filter") {
    // diff_weights = bwd_weights(src, diff_dst) of the forward convolution
    // whose stride is the HLO rhs dilation and whose dilation the HLO stride.
    if (c.lh != 1 || c.lw != 1 || c.fgc != 1 || c.rh || c.rw) throw std::runtime_error("no bwd-weights form");
    kind_ = "bwd_weights";
    const int64_t g = c.bgc, ic = c.n, oc = c.co, mb = c.ci;
    const memory::dims strides{c.dh, c.dw}, dil{c.sh - 1, c.sw - 1}, pl{c.plh, c.plw};
    const memory::dims pr{(c.kh - 1) * c.dh + (c.oh - 1) * c.sh + 1 - c.h - c.plh,
                          (c.kw - 1) * c.dw + (c.ow - 1) * c.sw + 1 - c.w - c.plw};
    if (pl[0] < 0 || pl[1] < 0 || pr[0] < 0 || pr[1] < 0) throw std::runtime_error("negative padding");
    const memory::dims src_d{mb, ic, c.h, c.w}, ddst_d{mb, oc, c.kh, c.kw};
    const memory::dims dw_d = weights_dims(g, oc, ic, c.oh, c.ow);
    src_.user = user(src_d, {is.at('f'), is.at('b'), is.at('0'), is.at('1')}, in);
    wei_.user = user(ddst_d, {ks.at('i'), ks.at('o'), ks.at('0'), ks.at('1')}, ker);
    memory::dims dws = g > 1 ? memory::dims{oc / g * os.at('f'), os.at('f'), os.at('b'), os.at('0'), os.at('1')}
                             : memory::dims{os.at('f'), os.at('b'), os.at('0'), os.at('1')};
    dst_.user = user(dw_d, dws, out);
    dnnl::convolution_forward::desc fd(prop, algo, act(src_, src_d), act(dst_, dw_d), act(wei_, ddst_d), strides, dil,
                                       pl, pr);
    dnnl::convolution_forward::primitive_desc fpd(fd, engine);
    dnnl::convolution_backward_weights::desc bd(algo, act(src_, src_d), act(dst_, dw_d), act(wei_, ddst_d), strides,
                                                dil, pl, pr);
    dnnl::convolution_backward_weights::primitive_desc pd(bd, engine, fpd);
    if (auto r = Link(src_, engine, pd.src_desc(), false)) in_reorders_.emplace_back(std::move(r), &src_);
    if (auto r = Link(wei_, engine, pd.diff_dst_desc(), false)) in_reorders_.emplace_back(std::move(r), &wei_);
    out_reorder_ = Link(dst_, engine, pd.diff_weights_desc(), true);
    prim_ = dnnl::convolution_backward_weights(pd);
    args_ = {{DNNL_ARG_SRC, src_.prim}, {DNNL_ARG_DIFF_DST, wei_.prim}, {DNNL_ARG_DIFF_WEIGHTS, dst_.prim}};
    impl_ = std::string(pd.impl_info_str()) + "; src " + Describe(pd.src_desc()) + ", diff_dst " +
            Describe(pd.diff_dst_desc()) + ", diff_wei " + Describe(pd.diff_weights_desc());
    return;
  }
  if (c.bgc != 1) throw std::runtime_error("batch groups outside the weight-gradient form");
  const int64_t g = c.fgc;
  if (c.lh > 1 || c.lw > 1) {
    // diff_src = bwd_data(diff_dst, W) of the forward convolution whose
    // stride is the HLO input dilation; HLO reads the kernel flipped
    // relative to that forward convolution.
    if (c.sh != 1 || c.sw != 1) throw std::runtime_error("strided and input-dilated");
    kind_ = "bwd_data";
    flip(!c.rh, !c.rw);
    const int64_t oc = c.ci, ic = c.co;  // forward channels: out = HLO input's, in = HLO output's
    const memory::dims strides{c.lh, c.lw}, dil{c.dh - 1, c.dw - 1};
    const memory::dims pl{(c.kh - 1) * c.dh - c.plh, (c.kw - 1) * c.dw - c.plw};
    const memory::dims pr{(c.h - 1) * c.lh + (c.kh - 1) * c.dh + 1 - c.oh - pl[0],
                          (c.w - 1) * c.lw + (c.kw - 1) * c.dw + 1 - c.ow - pl[1]};
    if (pl[0] < 0 || pl[1] < 0 || pr[0] < 0 || pr[1] < 0) throw std::runtime_error("negative padding");
    const memory::dims ddst_d{c.n, oc, c.h, c.w}, dsrc_d{c.on, ic, c.oh, c.ow};
    const memory::dims w_d = weights_dims(g, oc, ic, c.kh, c.kw);
    src_.user = user(ddst_d, {is.at('b'), is.at('f'), is.at('0'), is.at('1')}, in);
    memory::dims wsd = g > 1 ? memory::dims{ic / g * ks.at('o'), ks.at('i'), ks.at('o'), ks.at('0'), ks.at('1')}
                             : memory::dims{ks.at('i'), ks.at('o'), ks.at('0'), ks.at('1')};
    wei_.user = user(w_d, wsd, kernel);
    dst_.user = user(dsrc_d, {os.at('b'), os.at('f'), os.at('0'), os.at('1')}, out);
    dnnl::convolution_forward::desc fd(prop, algo, act(dst_, dsrc_d), any(w_d), act(src_, ddst_d), strides, dil, pl,
                                       pr);
    dnnl::convolution_forward::primitive_desc fpd(fd, engine);
    dnnl::convolution_backward_data::desc bd(algo, act(dst_, dsrc_d), any(w_d), act(src_, ddst_d), strides, dil, pl,
                                             pr);
    dnnl::convolution_backward_data::primitive_desc pd(bd, engine, fpd);
    if (auto r = Link(src_, engine, pd.diff_dst_desc(), false)) in_reorders_.emplace_back(std::move(r), &src_);
    weights_reorder_ = Link(wei_, engine, pd.weights_desc(), false);
    out_reorder_ = Link(dst_, engine, pd.diff_src_desc(), true);
    prim_ = dnnl::convolution_backward_data(pd);
    args_ = {{DNNL_ARG_DIFF_DST, src_.prim}, {DNNL_ARG_WEIGHTS, wei_.prim}, {DNNL_ARG_DIFF_SRC, dst_.prim}};
    impl_ = std::string(pd.impl_info_str()) + "; diff_dst " + Describe(pd.diff_dst_desc()) + ", wei " +
            Describe(pd.weights_desc()) + ", diff_src " + Describe(pd.diff_src_desc());
    return;
  }
  // Forward, exactly the HLO window.
  kind_ = "fwd";
  flip(c.rh, c.rw);
  const memory::dims strides{c.sh, c.sw}, dil{c.dh - 1, c.dw - 1}, pl{c.plh, c.plw}, pr{c.phh, c.phw};
  if (c.plh < 0 || c.plw < 0 || c.phh < 0 || c.phw < 0) throw std::runtime_error("negative padding");
  const memory::dims src_d{c.n, c.ci, c.h, c.w}, dst_d{c.on, c.co, c.oh, c.ow};
  const memory::dims w_d = weights_dims(g, c.co, c.ci, c.kh, c.kw);
  src_.user = user(src_d, {is.at('b'), is.at('f'), is.at('0'), is.at('1')}, in);
  memory::dims wsd = g > 1 ? memory::dims{c.co / g * ks.at('o'), ks.at('o'), ks.at('i'), ks.at('0'), ks.at('1')}
                           : memory::dims{ks.at('o'), ks.at('i'), ks.at('0'), ks.at('1')};
  wei_.user = user(w_d, wsd, kernel);
  dst_.user = user(dst_d, {os.at('b'), os.at('f'), os.at('0'), os.at('1')}, out);
  dnnl::convolution_forward::desc fd(dnnl::prop_kind::forward_inference, algo, act(src_, src_d), any(w_d),
                                     act(dst_, dst_d), strides, dil, pl, pr);
  dnnl::convolution_forward::primitive_desc pd(fd, engine);
  if (auto r = Link(src_, engine, pd.src_desc(), false)) in_reorders_.emplace_back(std::move(r), &src_);
  weights_reorder_ = Link(wei_, engine, pd.weights_desc(), false);
  out_reorder_ = Link(dst_, engine, pd.dst_desc(), true);
  prim_ = dnnl::convolution_forward(pd);
  args_ = {{DNNL_ARG_SRC, src_.prim}, {DNNL_ARG_WEIGHTS, wei_.prim}, {DNNL_ARG_DST, dst_.prim}};
  impl_ = std::string(pd.impl_info_str()) + "; src " + Describe(pd.src_desc()) + ", wei " +
          Describe(pd.weights_desc()) + ", dst " + Describe(pd.dst_desc());
}

void DnnlConv::Run(dnnl::stream& s) {
  prim_.execute(s, args_);
  s.wait();
}

void DnnlConv::ReorderIn(dnnl::stream& s) {
  for (auto& [r, o] : in_reorders_) r->execute(s, o->user, o->prim);
  s.wait();
}

void DnnlConv::ReorderWeights(dnnl::stream& s) {
  if (weights_reorder_) weights_reorder_->execute(s, wei_.user, wei_.prim);
  s.wait();
}

void DnnlConv::ReorderOut(dnnl::stream& s) {
  if (out_reorder_) out_reorder_->execute(s, dst_.prim, dst_.user);
  s.wait();
}

std::string DnnlInfo() {
  const dnnl_version_t* v = dnnl_version();
  std::string isa;
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::avx512_core_amx: isa = "avx512_core_amx"; break;
    case dnnl::cpu_isa::avx512_core_bf16: isa = "avx512_core_bf16"; break;
    case dnnl::cpu_isa::avx512_core_vnni: isa = "avx512_core_vnni"; break;
    case dnnl::cpu_isa::avx512_core: isa = "avx512_core"; break;
    case dnnl::cpu_isa::avx2: isa = "avx2"; break;
    default: isa = "other"; break;
  }
  return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch) +
         " (" + v->hash + "), cpu runtime " + (v->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP" : "other") +
         ", effective ISA " + isa;
}

}  // namespace libbench
