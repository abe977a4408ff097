// oneDNN 2.x candidates: matmul for dots, convolution primitives for
// convolutions. Operands arrive in the HLO's physical layouts (described to
// oneDNN by strides); the primitive works on the layouts it picks
// (format_tag::any), and the reorders between the two are separate ops so
// that the primitive can be timed alone.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "oneapi/dnnl/dnnl.hpp"
#include "problems.h"

namespace libbench {

// C = A * B as in GemmCase, f32 output; A and B f32 or bf16 (g.bf16).
class DnnlMatmul {
 public:
  // weights_any: B in the layout the primitive prefers, reordered once by
  // ReorderWeights(); else B as stored.
  DnnlMatmul(const dnnl::engine& engine, const GemmCase& g, bool weights_any, void* a, void* b,
             float* c);
  void Run(dnnl::stream& s);
  void ReorderWeights(dnnl::stream& s);  // a no-op unless weights_any
  std::string Impl() const;              // implementation name, weights layout

 private:
  dnnl::matmul::primitive_desc pd_;
  dnnl::matmul prim_;
  dnnl::memory a_, b_user_, b_, c_;
  bool reorder_ = false;
};

// One convolution, mapped onto convolution_forward (no input dilation),
// convolution_backward_data (input dilation: a strided convolution's data
// gradient) or convolution_backward_weights (the weight-gradient form:
// class conv_bwd_filter). Throws when the HLO window has no oneDNN form
// (negative padding, ...).
class DnnlConv {
 public:
  // in, ker, out: HLO operands in their physical orders (ConvCase's *_order).
  // plain: the primitive reads and writes activations (and weight
  // gradients) in those layouts, no reorders; else format_tag::any.
  DnnlConv(const dnnl::engine& engine, const Case& c, const float* in, const float* ker, float* out, bool plain);
  void Run(dnnl::stream& s);             // the primitive alone
  void ReorderIn(dnnl::stream& s);       // activations: plain -> primitive layouts
  void ReorderWeights(dnnl::stream& s);  // weights (fwd, bwd data): plain -> primitive layout
  void ReorderOut(dnnl::stream& s);      // result: primitive layout -> plain (into `out`)
  bool has_reorder_in() const { return !in_reorders_.empty(); }
  bool has_reorder_weights() const { return static_cast<bool>(weights_reorder_); }
  bool has_reorder_out() const { return static_cast<bool>(out_reorder_); }
  std::string Kind() const { return kind_; }  // fwd, bwd_data, bwd_weights
  std::string Impl() const { return impl_; }

 private:
  struct Operand {
    dnnl::memory user, prim;
  };
  // user -> prim (or back) when their layouts differ.
  static std::unique_ptr<dnnl::reorder> Link(Operand& o, const dnnl::engine& e,
                                             const dnnl::memory::desc& prim, bool to_user);

  std::string kind_, impl_;
  dnnl::primitive prim_;
  std::unordered_map<int, dnnl::memory> args_;
  std::vector<std::pair<std::unique_ptr<dnnl::reorder>, Operand*>> in_reorders_;
  std::unique_ptr<dnnl::reorder> weights_reorder_, out_reorder_;
  Operand src_, wei_, dst_;  // in the roles of the primitive (fwd names)
  std::vector<float> reversed_;  // the kernel, spatially flipped where oneDNN needs it
};

// The oneDNN build's version and the instruction set it dispatches to.
std::string DnnlInfo();

}  // namespace libbench
