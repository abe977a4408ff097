// batch-norm-training, -inference and -grad, computed per feature in double
// and rounded once to the element type. Variance is the biased (population)
// variance, as in XLA's operation semantics.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "seam/eval/index_util.h"
#include "seam/eval/ops.h"

namespace seam {
namespace {

// Feature index of every element of a shape whose feature dimension is `f`.
struct FeatureLayout {
  int64_t features;
  int64_t inner;  // elements after the feature dim in row-major order
  int64_t per_feature;
  int64_t FeatureOf(int64_t linear) const { return (linear / inner) % features; }
};

FeatureLayout LayoutOf(const Shape& shape, int64_t feature_index) {
  FeatureLayout l;
  l.features = shape.dim(static_cast<int>(feature_index));
  l.inner = 1;
  for (int d = static_cast<int>(feature_index) + 1; d < shape.rank(); ++d) l.inner *= shape.dim(d);
  l.per_feature = l.features == 0 ? 0 : shape.ElementCount().value_or(0) / l.features;
  return l;
}

std::vector<double> ToDoubles(const Literal& literal) {
  std::vector<double> v(literal.element_count());
  for (int64_t i = 0; i < literal.element_count(); ++i) v[i] = literal.GetDouble(i);
  return v;
}

Literal FromDoubles(const Shape& shape, const std::vector<double>& values) {
  Literal out(shape);
  for (int64_t i = 0; i < out.element_count(); ++i) out.SetDouble(i, values[i]);
  return out;
}

// Per-feature mean and biased variance of `x`.
void Moments(const std::vector<double>& x, const FeatureLayout& l, std::vector<double>& mean,
             std::vector<double>& var) {
  mean.assign(l.features, 0.0);
  var.assign(l.features, 0.0);
  for (size_t i = 0; i < x.size(); ++i) mean[l.FeatureOf(i)] += x[i];
  for (double& m : mean) m /= static_cast<double>(l.per_feature);
  for (size_t i = 0; i < x.size(); ++i) {
    double d = x[i] - mean[l.FeatureOf(i)];
    var[l.FeatureOf(i)] += d * d;
  }
  for (double& v : var) v /= static_cast<double>(l.per_feature);
}

Literal Training(const Instruction& instruction, OperandValues operands, double eps,
                 const FeatureLayout& l) {
  std::vector<double> x = ToDoubles(*operands[0]);
  std::vector<double> scale = ToDoubles(*operands[1]);
  std::vector<double> offset = ToDoubles(*operands[2]);
  std::vector<double> mean, var;
  Moments(x, l, mean, var);
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t f = l.FeatureOf(i);
    y[i] = (x[i] - mean[f]) * scale[f] / std::sqrt(var[f] + eps) + offset[f];
  }
  const auto& shapes = instruction.shape().tuple_shapes();
  Literal out(instruction.shape());
  out.mutable_tuple_elements()[0] = FromDoubles(shapes[0], y);
  out.mutable_tuple_elements()[1] = FromDoubles(shapes[1], mean);
  out.mutable_tuple_elements()[2] = FromDoubles(shapes[2], var);
  return out;
}

Literal Inference(const Instruction& instruction, OperandValues operands, double eps,
                  const FeatureLayout& l) {
  std::vector<double> x = ToDoubles(*operands[0]);
  std::vector<double> scale = ToDoubles(*operands[1]);
  std::vector<double> offset = ToDoubles(*operands[2]);
  std::vector<double> mean = ToDoubles(*operands[3]);
  std::vector<double> var = ToDoubles(*operands[4]);
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t f = l.FeatureOf(i);
    x[i] = (x[i] - mean[f]) * scale[f] / std::sqrt(var[f] + eps) + offset[f];
  }
  return FromDoubles(instruction.shape(), x);
}

Literal Grad(const Instruction& instruction, OperandValues operands, double eps,
             const FeatureLayout& l) {
  std::vector<double> x = ToDoubles(*operands[0]);
  std::vector<double> scale = ToDoubles(*operands[1]);
  std::vector<double> mean = ToDoubles(*operands[2]);
  std::vector<double> var = ToDoubles(*operands[3]);
  std::vector<double> dy = ToDoubles(*operands[4]);
  std::vector<double> sum_dy(l.features, 0.0), sum_dy_xc(l.features, 0.0);
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t f = l.FeatureOf(i);
    sum_dy[f] += dy[i];
    sum_dy_xc[f] += dy[i] * (x[i] - mean[f]);
  }
  double n = static_cast<double>(l.per_feature);
  std::vector<double> dx(x.size()), dscale(l.features);
  for (int64_t f = 0; f < l.features; ++f) dscale[f] = sum_dy_xc[f] / std::sqrt(var[f] + eps);
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t f = l.FeatureOf(i);
    double inv_std = 1.0 / std::sqrt(var[f] + eps);
    dx[i] = scale[f] * inv_std / n *
            (n * dy[i] - sum_dy[f] - (x[i] - mean[f]) * sum_dy_xc[f] / (var[f] + eps));
  }
  const auto& shapes = instruction.shape().tuple_shapes();
  Literal out(instruction.shape());
  out.mutable_tuple_elements()[0] = FromDoubles(shapes[0], dx);
  out.mutable_tuple_elements()[1] = FromDoubles(shapes[1], dscale);
  out.mutable_tuple_elements()[2] = FromDoubles(shapes[2], sum_dy);
  return out;
}

}  // namespace

absl::StatusOr<Literal> EvalBatchNorm(const Instruction& instruction, OperandValues operands) {
  double eps = instruction.attrs().epsilon.value_or(0.0);
  int64_t feature_index = instruction.attrs().feature_index.value_or(0);
  const Shape& x = operands[0]->shape();
  if (feature_index < 0 || feature_index >= x.rank()) {
    return absl::InvalidArgumentError(absl::StrCat("feature_index ", feature_index,
                                                   " is out of range for ", x.ToString(false)));
  }
  FeatureLayout l = LayoutOf(x, feature_index);
  switch (instruction.opcode()) {
    case Opcode::kBatchNormTraining: return Training(instruction, operands, eps, l);
    case Opcode::kBatchNormInference: return Inference(instruction, operands, eps, l);
    default: return Grad(instruction, operands, eps, l);
  }
}

}  // namespace seam
