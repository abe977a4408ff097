// batchnorm-expander: batch-norm-training, -inference and -grad become
// reduces, broadcasts and elementwise ops, as XLA's BatchNormExpander does,
// so that no backend needs batch-norm kernels of its own and the fusion
// planner can fuse the normalisation with its neighbours.
//
// The arithmetic follows the interpreter (eval/batch_norm.cc), which is the
// oracle: the variance is the two-pass E[(x - mean)^2], not XLA's
// E[x^2] - E[x]^2, which cancels badly when the mean is large against the
// spread. The interpreter works in double and rounds once; the expansion
// works in f32 for f16/bf16 operands (and in the operand's type for f32 and
// f64) and converts back, so results agree within the rewrite tolerance.
#include "seam/passes/expander_util.h"
#include "seam/passes/pass.h"

namespace seam {
namespace {

// Builds the expansion of one batch-norm instruction in its computation.
// No call takes two arguments that both create instructions: the order of
// creation names the new instructions, and C++ leaves the order in which a
// call's arguments are evaluated to the compiler.
class BatchNormBuilder {
 public:
  BatchNormBuilder(expand::Rewriter& rewriter, Instruction* bn)
      : rewriter_(rewriter), b_(rewriter.Builder(*bn->parent())), bn_(bn) {
    const Shape& x = bn->operand(0)->shape();
    type_ = x.dtype();
    compute_ = (type_ == DType::kF32 || type_ == DType::kF64) ? type_ : DType::kF32;
    dims_ = x.dims();
    feature_ = bn->attrs().feature_index.value_or(0);
    features_ = x.dim(static_cast<int>(feature_));
    for (int d = 0; d < x.rank(); ++d) {
      if (d != feature_) reduce_dims_.push_back(d);
    }
    per_feature_ = features_ == 0 ? 0 : *x.ElementCount() / features_;
    epsilon_ = bn->attrs().epsilon.value_or(0.0);
  }

  Instruction* Build() {
    switch (bn_->opcode()) {
      case Opcode::kBatchNormTraining: return Training();
      case Opcode::kBatchNormInference: return Inference();
      default: return Grad();
    }
  }

 private:
  Instruction* In(int k) {
    Instruction* x = bn_->operand(k);
    return compute_ == type_ ? x : b_.Convert(x, compute_);
  }
  Instruction* Out(Instruction* x) { return compute_ == type_ ? x : b_.Convert(x, type_); }
  // A per-feature vector broadcast along feature_index.
  Instruction* Spread(Instruction* v) { return b_.Broadcast(v, dims_, {feature_}); }
  Instruction* Vector(double value) { return expand::SplatValue(b_, compute_, {features_}, value); }
  // Per-feature sum of an operand-shaped value.
  Instruction* Sum(Instruction* x) {
    if (zero_ == nullptr) zero_ = b_.ScalarConstant(compute_, 0);
    return b_.Reduce(x, zero_, reduce_dims_, rewriter_.ScalarReducer(Opcode::kAdd, compute_));
  }
  Instruction* Bin(Opcode op, Instruction* a, Instruction* c) { return b_.Binary(op, a, c); }
  Instruction* Rsqrt(Instruction* x) { return b_.Unary(Opcode::kRsqrt, x); }
  // x - mean, the mean spread along the feature dimension.
  Instruction* Centered(Instruction* mean) {
    Instruction* spread_mean = Spread(mean);
    return Bin(Opcode::kSubtract, In(0), spread_mean);
  }
  // centered * factor + offset, factor and offset spread.
  Instruction* Normalized(Instruction* centered, Instruction* factor) {
    Instruction* offset = Spread(In(2));
    Instruction* scaled = Bin(Opcode::kMultiply, centered, Spread(factor));
    return Bin(Opcode::kAdd, scaled, offset);
  }
  Instruction* Tuple(Instruction* a, Instruction* c, Instruction* d) {
    return b_.Tuple({Out(a), Out(c), Out(d)});
  }

  Instruction* Training() {
    Instruction* x = In(0);
    Instruction* n = Vector(static_cast<double>(per_feature_));
    Instruction* mean = Bin(Opcode::kDivide, Sum(x), n);
    Instruction* centered = Bin(Opcode::kSubtract, x, Spread(mean));
    Instruction* var = Bin(Opcode::kDivide, Sum(Bin(Opcode::kMultiply, centered, centered)), n);
    Instruction* rstd = Rsqrt(Bin(Opcode::kAdd, var, Vector(epsilon_)));
    Instruction* factor = Bin(Opcode::kMultiply, In(1), rstd);
    return Tuple(Normalized(centered, factor), mean, var);
  }

  Instruction* Inference() {
    Instruction* centered = Centered(In(3));
    Instruction* epsilon = Vector(epsilon_);
    Instruction* rstd = Rsqrt(Bin(Opcode::kAdd, In(4), epsilon));
    Instruction* factor = Bin(Opcode::kMultiply, In(1), rstd);
    return Out(Normalized(centered, factor));
  }

  // dx = scale * rstd * (dy - sum(dy) / n - (x - mean) * sum(dy * (x - mean)) / (n * (var + eps)))
  Instruction* Grad() {
    Instruction* dy = In(4);
    Instruction* centered = Centered(In(2));
    Instruction* sum_dy = Sum(dy);
    Instruction* sum_dy_centered = Sum(Bin(Opcode::kMultiply, dy, centered));
    Instruction* epsilon = Vector(epsilon_);
    Instruction* var_eps = Bin(Opcode::kAdd, In(3), epsilon);
    Instruction* rstd = Rsqrt(var_eps);
    Instruction* n = Vector(static_cast<double>(per_feature_));
    Instruction* mean_dy = Bin(Opcode::kDivide, sum_dy, n);
    Instruction* k = Bin(Opcode::kDivide, sum_dy_centered, Bin(Opcode::kMultiply, var_eps, n));
    Instruction* correction = Bin(Opcode::kMultiply, centered, Spread(k));
    Instruction* inner =
        Bin(Opcode::kSubtract, Bin(Opcode::kSubtract, dy, Spread(mean_dy)), correction);
    Instruction* dx = Bin(Opcode::kMultiply, Spread(Bin(Opcode::kMultiply, In(1), rstd)), inner);
    Instruction* dscale = Bin(Opcode::kMultiply, sum_dy_centered, rstd);
    return Tuple(dx, dscale, sum_dy);
  }

  expand::Rewriter& rewriter_;
  HloBuilder b_;
  Instruction* bn_;
  DType type_, compute_;
  std::vector<int64_t> dims_;
  int64_t feature_ = 0, features_ = 0, per_feature_ = 0;
  IntList reduce_dims_;
  double epsilon_ = 0;
  Instruction* zero_ = nullptr;
};

bool Expandable(const Instruction& i) {
  if (i.opcode() != Opcode::kBatchNormTraining && i.opcode() != Opcode::kBatchNormInference &&
      i.opcode() != Opcode::kBatchNormGrad) {
    return false;
  }
  const Shape& x = i.operand(0)->shape();
  int64_t f = i.attrs().feature_index.value_or(-1);
  if (!expand::IsStaticArray(x) || !IsFloat(x.dtype()) || f < 0 || f >= x.rank()) return false;
  for (const Instruction* operand : i.operands()) {
    if (!expand::IsStaticArray(operand->shape()) || operand->shape().dtype() != x.dtype()) {
      return false;
    }
  }
  return true;
}

// Gives the fresh outputs of a tuple the declared element shapes (layouts).
void AdoptElementShapes(Instruction* tuple, const Shape& declared) {
  if (!declared.IsTuple()) return;
  for (int k = 0; k < tuple->operand_count(); ++k) {
    tuple->operand(k)->mutable_shape() = declared.tuple_shapes()[k];
  }
}

class BatchNormExpanderPass : public Pass {
 public:
  absl::StatusOr<bool> Run(Module& module) override {
    expand::Rewriter rewriter(module);
    bool changed = false;
    for (Instruction* i : rewriter.Instructions(std::nullopt)) {
      if (!Expandable(*i)) continue;
      Instruction* expansion = BatchNormBuilder(rewriter, i).Build();
      AdoptElementShapes(expansion, i->shape());
      rewriter.ReplaceWithNew(i, expansion);
      changed = true;
    }
    rewriter.Flush();
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeBatchnormExpanderPass() {
  return std::make_unique<BatchNormExpanderPass>();
}

}  // namespace seam
