// Shape inference for reductions and windowed ops (reduce, reduce-window,
// select-and-scatter), the library ops dot and convolution, and composite
// ops (batch norm, rng).
#include <vector>

#include "seam/ir/shape_inference.h"
#include "seam/ir/shape_inference_util.h"
#include "seam/util/status_macros.h"

namespace seam::shape_inference_internal {

// ---- Reductions -------------------------------------------------------

namespace {

// One windowed dimension: the base is dilated then padded, the window
// dilated, and each stride step that fits gives one output element.
absl::StatusOr<int64_t> WindowedSize(const Instruction& i, int64_t base, const WindowDim& w) {
  if (w.size < 1 || w.stride < 1 || w.lhs_dilation < 1 || w.rhs_dilation < 1) {
    return Invalid("window of ", Op(i),
                   " needs sizes, strides and dilations of at least 1, got size ", w.size,
                   " stride ", w.stride, " dilations ", w.lhs_dilation, ",", w.rhs_dilation);
  }
  CheckedInt dilated = base == 0 ? CheckedInt(0) : CheckedInt(base - 1) * w.lhs_dilation + 1;
  CheckedInt padded = dilated + w.pad_low + w.pad_high;
  CheckedInt window = CheckedInt(w.size - 1) * w.rhs_dilation + 1;
  if (padded.overflow || window.overflow) return Overflow(i);
  if (padded.value < 0) {
    return Invalid("padding ", w.pad_low, "_", w.pad_high, " of ", Op(i),
                   " leaves a negative size of a dimension of ", base);
  }
  return padded.value < window.value ? 0 : (padded.value - window.value) / w.stride + 1;
}

absl::StatusOr<std::vector<int64_t>> WindowOutput(const Instruction& i, const Window& w,
                                                  const Shape& base) {
  if (static_cast<int>(w.dims.size()) != base.rank()) {
    return Invalid("the window of ", Op(i), " has ", w.dims.size(), " dimensions, expected ",
                   base.rank(), " for ", Str(base));
  }
  std::vector<int64_t> dims;
  for (int d = 0; d < base.rank(); ++d) {
    SEAM_ASSIGN_OR_RETURN(int64_t size, WindowedSize(i, base.dim(d), w.dims[d]));
    dims.push_back(size);
  }
  return dims;
}

// reduce(inputs..., inits...) and reduce-window: same-dims inputs, scalar
// inits. Fills the element types of both.
absl::Status CheckInputsAndInits(const Instruction& i, std::vector<DType>& inputs,
                                 std::vector<DType>& inits) {
  int n = i.operand_count() / 2;
  for (int k = 0; k < n; ++k) {
    if (In(i, k).dims() != In(i, 0).dims()) {
      return Invalid("inputs of ", Op(i), " must have the same dimensions, got ", Str(In(i, 0)),
                     " and ", Str(In(i, k)));
    }
    if (In(i, n + k).rank() != 0)
      return Invalid("init values of ", Op(i), " must be scalars, got ", Str(In(i, n + k)));
    inputs.push_back(In(i, k).dtype());
    inits.push_back(In(i, n + k).dtype());
  }
  return absl::OkStatus();
}

Inferred InferReduce(const Instruction& i) {
  const Shape& x = In(i, 0);
  std::vector<DType> inputs, inits;
  SEAM_RETURN_IF_ERROR(CheckInputsAndInits(i, inputs, inits));
  SEAM_ASSIGN_OR_RETURN(const IntList* dims, Require(i, i.attrs().dimensions, "dimensions"));
  SEAM_RETURN_IF_ERROR(CheckDimList(i, "dimensions", *dims, x.rank()));
  SEAM_ASSIGN_OR_RETURN(std::vector<DType> types,
                        CheckReducer(i, i.attrs().to_apply, "to_apply", inits, inputs));
  std::vector<int64_t> kept;
  for (int d = 0; d < x.rank(); ++d) {
    if (!Contains(*dims, d)) kept.push_back(x.dim(d));
  }
  return Results(types, kept);
}

Inferred InferReduceWindow(const Instruction& i) {
  std::vector<DType> inputs, inits;
  SEAM_RETURN_IF_ERROR(CheckInputsAndInits(i, inputs, inits));
  SEAM_ASSIGN_OR_RETURN(const Window* window, Require(i, i.attrs().window, "window"));
  SEAM_ASSIGN_OR_RETURN(std::vector<int64_t> dims, WindowOutput(i, *window, In(i, 0)));
  SEAM_ASSIGN_OR_RETURN(std::vector<DType> types,
                        CheckReducer(i, i.attrs().to_apply, "to_apply", inits, inputs));
  return Results(types, dims);
}

// select-and-scatter(operand, source, init): one source element per window
// of the operand; the result has the operand's shape.
Inferred InferSelectAndScatter(const Instruction& i) {
  const Shape& x = In(i, 0);
  const Shape& source = In(i, 1);
  const Shape& init = In(i, 2);
  SEAM_ASSIGN_OR_RETURN(const Window* window, Require(i, i.attrs().window, "window"));
  SEAM_ASSIGN_OR_RETURN(std::vector<int64_t> dims, WindowOutput(i, *window, x));
  if (source.dims() != dims) {
    return Invalid(
        "the source of 'select-and-scatter' must have the windowed operand's dimensions [",
        absl::StrJoin(dims, ","), "], got ", Str(source));
  }
  if (init.rank() != 0)
    return Invalid("the init value of 'select-and-scatter' must be a scalar, got ", Str(init));
  SEAM_ASSIGN_OR_RETURN(const Computation* select, Called(i, i.attrs().select, "select"));
  Shape element = Shape::Scalar(x.dtype());
  SEAM_RETURN_IF_ERROR(CheckParameters(*select, {element, element}, "select"));
  if (!ShapesMatch(select->root()->shape(), Shape::Scalar(DType::kPred))) {
    return Invalid("select computation '", select->name(), "' must return pred[], got ",
                   Str(select->root()->shape()));
  }
  SEAM_RETURN_IF_ERROR(
      CheckReducer(i, i.attrs().scatter, "scatter", {init.dtype()}, {source.dtype()}).status());
  return Shape::Array(x.dtype(), x.dims());
}

}  // namespace

Inferred InferReduction(const Instruction& i) {
  switch (i.opcode()) {
    case Opcode::kReduce:
      return InferReduce(i);
    case Opcode::kReduceWindow:
      return InferReduceWindow(i);
    case Opcode::kSelectAndScatter:
      return InferSelectAndScatter(i);
    default:
      return std::nullopt;
  }
}

// ---- Library ops ------------------------------------------------------

namespace {

// dot and convolution accept operands differing in floating-point precision
// and produce the declared type (XLA's preferred_element_type), which may
// widen but not narrow an integer type.
absl::StatusOr<DType> PreferredType(const Instruction& i) {
  DType lhs = In(i, 0).dtype(), rhs = In(i, 1).dtype();
  if (!SameIgnoringFpPrecision(lhs, rhs)) {
    return Invalid("operands of ", Op(i), " must have the same element type, got ", Str(In(i, 0)),
                   " and ", Str(In(i, 1)));
  }
  DType from = DTypeBits(lhs) >= DTypeBits(rhs) ? lhs : rhs;
  SEAM_ASSIGN_OR_RETURN(const Shape* out, DeclaredArray(i));
  if (!FloatLike(from) && DTypeBits(out->dtype()) < DTypeBits(from)) {
    return Invalid("the result type of ", Op(i), " must not be narrower than its operands' ",
                   DTypeName(from), ", got ", DTypeName(out->dtype()));
  }
  return out->dtype();
}

// Result: batch dims, then lhs free dims, then rhs free dims, each in order.
Inferred InferDot(const Instruction& i) {
  const Shape& lhs = In(i, 0);
  const Shape& rhs = In(i, 1);
  const Attributes& a = i.attrs();
  IntList lb = a.lhs_batch_dims.value_or(IntList{}), rb = a.rhs_batch_dims.value_or(IntList{});
  IntList lc = a.lhs_contracting_dims.value_or(IntList{}),
          rc = a.rhs_contracting_dims.value_or(IntList{});
  SEAM_RETURN_IF_ERROR(
      CheckDimList(i, "lhs batch and contracting dimensions", Concat(lb, lc), lhs.rank()));
  SEAM_RETURN_IF_ERROR(
      CheckDimList(i, "rhs batch and contracting dimensions", Concat(rb, rc), rhs.rank()));
  if (lb.size() != rb.size() || lc.size() != rc.size()) {
    return Invalid(
        "'dot' needs as many lhs as rhs batch and contracting dimensions, got lhs_batch_dims=",
        List(lb), " rhs_batch_dims=", List(rb), " lhs_contracting_dims=", List(lc),
        " rhs_contracting_dims=", List(rc));
  }
  IntList l = Concat(lb, lc), r = Concat(rb, rc);
  for (size_t k = 0; k < l.size(); ++k) {
    if (lhs.dim(l[k]) != rhs.dim(r[k])) {
      return Invalid("'dot' pairs lhs dimension ", l[k], " with rhs dimension ", r[k],
                     " but their sizes differ: ", Str(lhs), " and ", Str(rhs));
    }
  }
  SEAM_ASSIGN_OR_RETURN(DType type, PreferredType(i));
  std::vector<int64_t> dims;
  for (int64_t d : lb) dims.push_back(lhs.dim(d));
  for (int d = 0; d < lhs.rank(); ++d) {
    if (!Contains(l, d)) dims.push_back(lhs.dim(d));
  }
  for (int d = 0; d < rhs.rank(); ++d) {
    if (!Contains(r, d)) dims.push_back(rhs.dim(d));
  }
  return Shape::Array(type, dims);
}

// Checks that the dimension labels of each convolution operand name every
// dimension once.
absl::Status CheckConvLabels(const Instruction& i, const ConvDimLabels& c, int rank) {
  SEAM_RETURN_IF_ERROR(CheckDimList(
      i, "input dim_labels", Concat({c.input_batch, c.input_feature}, c.input_spatial), rank));
  SEAM_RETURN_IF_ERROR(CheckDimList(
      i, "kernel dim_labels",
      Concat({c.kernel_input_feature, c.kernel_output_feature}, c.kernel_spatial), rank));
  return CheckDimList(i, "output dim_labels",
                      Concat({c.output_batch, c.output_feature}, c.output_spatial), rank);
}

Inferred InferConvolution(const Instruction& i) {
  const Shape& in = In(i, 0);
  const Shape& kernel = In(i, 1);
  SEAM_ASSIGN_OR_RETURN(const ConvDimLabels* c, Require(i, i.attrs().dim_labels, "dim_labels"));
  const Window window = i.attrs().window.value_or(Window{});  // absent without spatial dims
  int n = static_cast<int>(c->input_spatial.size());
  if (in.rank() != n + 2 || kernel.rank() != n + 2 ||
      static_cast<int>(c->kernel_spatial.size()) != n ||
      static_cast<int>(c->output_spatial.size()) != n ||
      static_cast<int>(window.dims.size()) != n) {
    return Invalid("'convolution' with ", n, " spatial dimensions needs rank-", n + 2,
                   " operands and a ", n, "-dimensional window, got ", Str(in), " and ",
                   Str(kernel), " with a ", window.dims.size(), "-dimensional window");
  }
  SEAM_RETURN_IF_ERROR(CheckConvLabels(i, *c, n + 2));
  int64_t groups = i.attrs().feature_group_count.value_or(1);
  int64_t batch_groups = i.attrs().batch_group_count.value_or(1);
  int64_t features = in.dim(c->input_feature), out_features = kernel.dim(c->kernel_output_feature);
  int64_t batch = in.dim(c->input_batch);
  if (groups < 1 || batch_groups < 1 || features % groups != 0 ||
      features / groups != kernel.dim(c->kernel_input_feature) || out_features % groups != 0 ||
      out_features % batch_groups != 0 || batch % batch_groups != 0) {
    return Invalid("'convolution' of ", Str(in), " by ", Str(kernel),
                   " does not fit feature_group_count=", groups,
                   " and batch_group_count=", batch_groups,
                   ": input features must be the group count times the kernel input features, and "
                   "output features "
                   "and batch divisible by the group counts");
  }
  std::vector<int64_t> dims(n + 2);
  dims[c->output_batch] = batch / batch_groups;
  dims[c->output_feature] = out_features;
  for (int k = 0; k < n; ++k) {
    const WindowDim& w = window.dims[k];
    if (w.size != kernel.dim(c->kernel_spatial[k])) {
      return Invalid("window size ", w.size, " of 'convolution' in spatial dimension ", k,
                     " differs from the kernel's ", kernel.dim(c->kernel_spatial[k]));
    }
    SEAM_ASSIGN_OR_RETURN(dims[c->output_spatial[k]],
                          WindowedSize(i, in.dim(c->input_spatial[k]), w));
  }
  SEAM_ASSIGN_OR_RETURN(DType type, PreferredType(i));
  return Shape::Array(type, dims);
}

}  // namespace

namespace {

// sort(operands...): operands of one set of dimensions (any types), sorted
// along one of them by a comparator of two scalars of each operand's type
// (operand k's at parameters 2k and 2k+1) returning pred[].
Inferred InferSort(const Instruction& i) {
  const Shape& x = In(i, 0);
  std::vector<Shape> results;
  for (int k = 0; k < i.operand_count(); ++k) {
    SEAM_RETURN_IF_ERROR(CheckSameDims(i, x, In(i, k)));
    results.push_back(In(i, k));
  }
  SEAM_ASSIGN_OR_RETURN(const IntList* dims, Require(i, i.attrs().dimensions, "dimensions"));
  if (dims->size() != 1)
    return Invalid(Op(i), " sorts along one dimension, got dimensions=", List(*dims));
  if (x.rank() > 0) SEAM_RETURN_IF_ERROR(CheckDimList(i, "dimensions", *dims, x.rank()));
  if (x.rank() == 0 && (*dims)[0] != 0) {
    return Invalid("dimensions=", List(*dims), " of ", Op(i), " is out of range for ", Str(x));
  }
  SEAM_ASSIGN_OR_RETURN(const Computation* f, Called(i, i.attrs().to_apply, "to_apply"));
  bool ok = f->parameter_count() == 2 * i.operand_count() &&
            ShapesMatch(f->root()->shape(), Shape::Scalar(DType::kPred));
  std::vector<std::string> expected;
  for (int k = 0; k < i.operand_count(); ++k) {
    const Shape scalar = Shape::Scalar(In(i, k).dtype());
    expected.push_back(Str(scalar));
    expected.push_back(Str(scalar));
    for (int side = 0; ok && side < 2; ++side) {
      const Instruction* p = f->parameter(2 * k + side);
      ok = p != nullptr && ShapesMatch(p->shape(), scalar);
    }
  }
  if (!ok) {
    return Invalid("to_apply computation '", f->name(), "' of ", Op(i), " is ", Signature(*f),
                   ", expected (", absl::StrJoin(expected, ", "), ") -> pred[]");
  }
  return i.operand_count() == 1 ? x : Shape::Tuple(std::move(results));
}

}  // namespace

Inferred InferLibrary(const Instruction& i) {
  switch (i.opcode()) {
    case Opcode::kDot:
      return InferDot(i);
    case Opcode::kConvolution:
      return InferConvolution(i);
    case Opcode::kSort:
      return InferSort(i);
    default:
      return InferLinearAlgebra(i);  // topk, cholesky, triangular-solve, fft
  }
}

// ---- Composite ops ----------------------------------------------------

namespace {

// Scale, offset, mean and variance are vectors along feature_index.
Inferred InferBatchNorm(const Instruction& i) {
  const Shape& x = In(i, 0);
  SEAM_ASSIGN_OR_RETURN(const int64_t* f, Require(i, i.attrs().feature_index, "feature_index"));
  if (*f < 0 || *f >= x.rank())
    return Invalid("feature_index=", *f, " of ", Op(i), " is out of range for ", Str(x));
  if (!FloatLike(x.dtype())) return Invalid(Op(i), " needs a floating-point operand, got ", Str(x));
  Shape vector = Shape::Array(x.dtype(), {x.dim(*f)});
  for (int k = 1; k < i.operand_count(); ++k) {
    bool is_grad_output = i.opcode() == Opcode::kBatchNormGrad && k == 4;
    const Shape& expected = is_grad_output ? x : vector;
    if (!ShapesMatch(In(i, k), expected)) {
      return Invalid("operand ", k, " of ", Op(i), " must be ", Str(expected), ", got ",
                     Str(In(i, k)));
    }
  }
  if (i.opcode() == Opcode::kBatchNormInference) return Shape::Array(x.dtype(), x.dims());
  return Shape::Tuple({Shape::Array(x.dtype(), x.dims()), vector, vector});
}

}  // namespace

Inferred InferComposite(const Instruction& i) {
  switch (i.opcode()) {
    case Opcode::kBatchNormTraining:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormGrad:
      return InferBatchNorm(i);
    case Opcode::kRng: {
      // The operands are the distribution's parameters; the dims are free.
      const Shape& a = In(i, 0);
      if (a.rank() != 0 || !ShapesMatch(a, In(i, 1))) {
        return Invalid("operands of 'rng' must be scalars of one type, got ", Str(a), " and ",
                       Str(In(i, 1)));
      }
      SEAM_ASSIGN_OR_RETURN(const Shape* out, DeclaredArray(i));
      return Shape::Array(a.dtype(), out->dims());
    }
    case Opcode::kRngBitGenerator: {
      // (new state, random values); the values' shape is free.
      const Shape& out = i.shape();
      if (!out.IsTuple() || out.tuple_shapes().size() != 2 || !out.tuple_shapes()[1].IsArray()) {
        return Invalid(
            "'rng-bit-generator' produces (state, values), but the instruction declares ",
            Str(out));
      }
      return Shape::Tuple({In(i, 0), out.tuple_shapes()[1]});
    }
    default:
      return std::nullopt;
  }
}

}  // namespace seam::shape_inference_internal
