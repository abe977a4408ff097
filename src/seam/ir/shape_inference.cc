// Shape inference after XLA's operation semantics: one helper per op family,
// each checking what the op asks of its operands and attributes before it
// builds the result. Messages name the opcode (not the instruction: the
// verifier adds that) and say what was expected.
#include "seam/ir/shape_inference.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "seam/ir/computation.h"
#include "seam/util/status_macros.h"

namespace seam {
namespace {

using Inferred = absl::StatusOr<std::optional<Shape>>;

template <typename... Args>
absl::Status Invalid(const Args&... args) {
  return absl::InvalidArgumentError(absl::StrCat(args...));
}

std::string Str(const Shape& s) { return s.ToString(/*with_layout=*/false); }
std::string List(const IntList& l) { return absl::StrCat("{", absl::StrJoin(l, ","), "}"); }
std::string Op(const Instruction& i) { return absl::StrCat("'", OpcodeName(i.opcode()), "'"); }
const Shape& In(const Instruction& i, int k) { return i.operand(k)->shape(); }
bool Contains(const IntList& l, int64_t v) { return std::find(l.begin(), l.end(), v) != l.end(); }
IntList Concat(IntList a, const IntList& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// f8 / f4 types are opaque to Seam's arithmetic but are floats to XLA.
bool FloatLike(DType t) {
  return IsFloat(t) || (DTypeKindOf(t) == DTypeKind::kOpaque && DTypeName(t)[0] == 'f');
}
bool SameIgnoringFpPrecision(DType a, DType b) { return a == b || (FloatLike(a) && FloatLike(b)); }

template <typename T>
absl::StatusOr<const T*> Require(const Instruction& i, const std::optional<T>& attr,
                                 absl::string_view name) {
  if (!attr.has_value()) return Invalid(Op(i), " requires the attribute '", name, "'");
  return &*attr;
}

// `dims` names distinct dimensions of a rank-`rank` shape.
absl::Status CheckDimList(const Instruction& i, absl::string_view what, const IntList& dims,
                          int64_t rank) {
  std::vector<bool> seen(rank, false);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank) {
      return Invalid(what, " of ", Op(i), " names dimension ", d, ", out of range for rank ", rank);
    }
    if (seen[d]) return Invalid(what, " of ", Op(i), " names dimension ", d, " twice");
    seen[d] = true;
  }
  return absl::OkStatus();
}

// For ops whose result the operands do not determine (convert's type,
// broadcast's new dims...): the declared shape supplies it, if an array.
absl::StatusOr<const Shape*> DeclaredArray(const Instruction& i) {
  if (!i.shape().IsArray()) {
    return Invalid(Op(i), " produces an array, but the instruction declares ", Str(i.shape()));
  }
  return &i.shape();
}

Shape Results(const std::vector<DType>& types, const std::vector<int64_t>& dims) {
  if (types.size() == 1) return Shape::Array(types[0], dims);
  std::vector<Shape> shapes;
  for (DType t : types) shapes.push_back(Shape::Array(t, dims));
  return Shape::Tuple(std::move(shapes));
}

bool HasUnboundedDim(const Shape& s) {
  if (s.IsTuple())
    return std::any_of(s.tuple_shapes().begin(), s.tuple_shapes().end(), HasUnboundedDim);
  return Contains(s.dims(), Shape::kUnboundedSize);
}

// Size arithmetic on attribute values, which malformed input makes anything:
// an overflow is reported rather than being undefined behaviour.
struct CheckedInt {
  int64_t value = 0;
  bool overflow = false;
  CheckedInt(int64_t v) : value(v) {}  // NOLINT: implicit, to mix with int64_t
  CheckedInt operator+(CheckedInt o) const {
    CheckedInt r(0);
    r.overflow = overflow || o.overflow || __builtin_add_overflow(value, o.value, &r.value);
    return r;
  }
  CheckedInt operator*(CheckedInt o) const {
    CheckedInt r(0);
    r.overflow = overflow || o.overflow || __builtin_mul_overflow(value, o.value, &r.value);
    return r;
  }
};

absl::Status Overflow(const Instruction& i) {
  return Invalid("a result dimension of ", Op(i), " overflows 64 bits");
}

// ---- Called computations ----------------------------------------------

absl::StatusOr<const Computation*> Called(const Instruction& i,
                                          const std::optional<ComputationRef>& ref,
                                          absl::string_view attr) {
  if (!ref.has_value() || *ref == nullptr) {
    return Invalid(Op(i), " requires the attribute '", attr, "'");
  }
  if ((*ref)->root() == nullptr) {
    return Invalid("computation '", (*ref)->name(), "' called by ", Op(i), " has no root");
  }
  return *ref;
}

std::string Signature(const Computation& c) {
  std::vector<std::string> params;
  for (const Instruction* p : c.parameters()) params.push_back(p ? Str(p->shape()) : "?");
  return absl::StrCat("(", absl::StrJoin(params, ", "), ") -> ", Str(c.root()->shape()));
}

// `c` takes parameters of exactly the `expected` shapes.
absl::Status CheckParameters(const Computation& c, const std::vector<Shape>& expected,
                             absl::string_view role) {
  if (c.parameter_count() != static_cast<int>(expected.size())) {
    return Invalid(role, " computation '", c.name(), "' takes ", c.parameter_count(),
                   " parameters, expected ", expected.size());
  }
  for (int k = 0; k < c.parameter_count(); ++k) {
    const Instruction* p = c.parameter(k);
    if (p == nullptr)
      return Invalid(role, " computation '", c.name(), "' has no parameter(", k, ")");
    if (!ShapesMatch(p->shape(), expected[k])) {
      return Invalid("parameter ", k, " of ", role, " computation '", c.name(), "' is ",
                     Str(p->shape()), ", expected ", Str(expected[k]));
    }
  }
  return absl::OkStatus();
}

// A reducer combines N accumulators with N input elements: 2N scalar
// parameters, accumulators first, and N scalar results (a tuple when N > 1).
// As in XLA, accumulators may differ from the init values, and input
// parameters from the input elements, in floating-point precision only.
// Returns the result element types.
absl::StatusOr<std::vector<DType>> CheckReducer(const Instruction& i,
                                                const std::optional<ComputationRef>& ref,
                                                absl::string_view attr,
                                                const std::vector<DType>& inits,
                                                const std::vector<DType>& inputs) {
  SEAM_ASSIGN_OR_RETURN(const Computation* f, Called(i, ref, attr));
  size_t n = inits.size();
  const Shape& root = f->root()->shape();
  std::vector<Shape> results = root.IsTuple() ? root.tuple_shapes() : std::vector<Shape>{root};
  bool ok = results.size() == n && f->parameter_count() == static_cast<int>(2 * n);
  std::vector<DType> types;
  for (size_t k = 0; ok && k < n; ++k) {
    const Instruction* acc = f->parameter(k);
    const Instruction* x = f->parameter(k + n);
    const Shape& r = results[k];
    ok = acc != nullptr && x != nullptr && r.IsArray() && r.rank() == 0 &&
         ShapesMatch(acc->shape(), r) && x->shape().IsArray() && x->shape().rank() == 0 &&
         SameIgnoringFpPrecision(r.dtype(), inits[k]) &&
         SameIgnoringFpPrecision(x->shape().dtype(), inputs[k]);
    types.push_back(r.dtype());
  }
  if (ok) return types;
  std::vector<Shape> params, outs;
  for (DType t : inits) params.push_back(Shape::Scalar(t));
  for (DType t : inputs) params.push_back(Shape::Scalar(t));
  for (DType t : inits) outs.push_back(Shape::Scalar(t));
  Shape out = n == 1 ? outs[0] : Shape::Tuple(outs);
  std::vector<std::string> texts;
  for (const Shape& p : params) texts.push_back(Str(p));
  return Invalid(attr, " computation '", f->name(), "' of ", Op(i), " is ", Signature(*f),
                 ", expected (", absl::StrJoin(texts, ", "), ") -> ", Str(out));
}

absl::StatusOr<Shape> CalleeResult(const Instruction& i, const std::optional<ComputationRef>& ref,
                                   absl::string_view attr) {
  SEAM_ASSIGN_OR_RETURN(const Computation* callee, Called(i, ref, attr));
  std::vector<Shape> args;
  for (const Instruction* operand : i.operands()) args.push_back(operand->shape());
  SEAM_RETURN_IF_ERROR(CheckParameters(*callee, args, attr));
  return callee->root()->shape();
}

// ---- Elementwise ------------------------------------------------------

DType ComplexComponent(DType t) { return t == DType::kC128 ? DType::kF64 : DType::kF32; }

absl::Status CheckSameDims(const Instruction& i, const Shape& a, const Shape& b) {
  if (a.dims() == b.dims()) return absl::OkStatus();
  return Invalid("operands of ", Op(i), " must have the same dimensions, got ", Str(a), " and ",
                 Str(b));
}

// Between types of one width only the type changes; a wider operand type
// gains a minor dimension (the ratio of widths), a narrower one loses it.
Inferred InferBitcastConvert(const Instruction& i) {
  const Shape& x = In(i, 0);
  SEAM_ASSIGN_OR_RETURN(const Shape* out, DeclaredArray(i));
  int from = DTypeBits(x.dtype()), to = DTypeBits(out->dtype());
  std::vector<int64_t> dims = x.dims();
  if (from > to) dims.push_back(from / to);
  if (from < to) {
    if (dims.empty() || dims.back() != to / from) {
      return Invalid("'bitcast-convert' from ", DTypeName(x.dtype()), " to ",
                     DTypeName(out->dtype()), " needs a last operand dimension of ", to / from,
                     ", got ", Str(x));
    }
    dims.pop_back();
  }
  return Shape::Array(out->dtype(), dims);
}

Inferred InferUnary(const Instruction& i) {
  const Shape& x = In(i, 0);
  DType t = x.dtype();
  auto fail = [&](absl::string_view what) {
    return Invalid(Op(i), " needs ", what, " operand, got ", Str(x));
  };
  DType result = t;
  switch (i.opcode()) {
    case Opcode::kConvert: {
      SEAM_ASSIGN_OR_RETURN(const Shape* out, DeclaredArray(i));
      result = out->dtype();
      break;
    }
    case Opcode::kBitcastConvert:
      return InferBitcastConvert(i);
    case Opcode::kIsFinite:
      if (!FloatLike(t)) return fail("a floating-point");
      result = DType::kPred;
      break;
    case Opcode::kAbs:
      if (IsComplex(t)) result = ComplexComponent(t);
      break;
    case Opcode::kReal:
    case Opcode::kImag:
      if (!IsComplex(t) && !FloatLike(t)) return fail("a complex or floating-point");
      if (IsComplex(t)) result = ComplexComponent(t);
      break;
    case Opcode::kNot:
      if (!IsPred(t) && !IsInteger(t)) return fail("a pred or integer");
      break;
    case Opcode::kPopcnt:
    case Opcode::kClz:
      if (!IsInteger(t)) return fail("an integer");
      break;
    case Opcode::kReducePrecision: {
      SEAM_ASSIGN_OR_RETURN(const int64_t* e, Require(i, i.attrs().exponent_bits, "exponent_bits"));
      SEAM_ASSIGN_OR_RETURN(const int64_t* m, Require(i, i.attrs().mantissa_bits, "mantissa_bits"));
      if (*e < 1 || *m < 0) {
        return Invalid("'reduce-precision' needs exponent_bits >= 1 and mantissa_bits >= 0, got ",
                       *e, " and ", *m);
      }
      if (!FloatLike(t)) return fail("a floating-point");
      break;
    }
    default:
      break;
  }
  return Shape::Array(result, x.dims());
}

Inferred InferBinary(const Instruction& i) {
  const Shape& a = In(i, 0);
  const Shape& b = In(i, 1);
  SEAM_RETURN_IF_ERROR(CheckSameDims(i, a, b));
  switch (i.opcode()) {
    case Opcode::kComplex:
      if (a.dtype() != b.dtype() || (a.dtype() != DType::kF32 && a.dtype() != DType::kF64)) {
        return Invalid("operands of 'complex' must both be f32 or both f64, got ", Str(a), " and ",
                       Str(b));
      }
      return Shape::Array(a.dtype() == DType::kF64 ? DType::kC128 : DType::kC64, a.dims());
    case Opcode::kStochasticConvert: {
      // The random bits are unsigned and as wide as the operand's type.
      if (!IsUnsigned(b.dtype()) || DTypeBits(b.dtype()) != DTypeBits(a.dtype())) {
        return Invalid("random bits of 'stochastic-convert' must be unsigned and as wide as ",
                       Str(a), ", got ", Str(b));
      }
      SEAM_ASSIGN_OR_RETURN(const Shape* out, DeclaredArray(i));
      return Shape::Array(out->dtype(), a.dims());
    }
    default:
      break;
  }
  if (a.dtype() != b.dtype()) {
    return Invalid("operands of ", Op(i), " must have the same element type, got ", Str(a), " and ",
                   Str(b));
  }
  if (i.opcode() == Opcode::kCompare) {
    SEAM_RETURN_IF_ERROR(Require(i, i.attrs().direction, "direction").status());
    return Shape::Array(DType::kPred, a.dims());
  }
  return Shape::Array(a.dtype(), a.dims());
}

// The predicate may be a scalar (choosing a whole branch) or elementwise.
Inferred InferSelect(const Instruction& i) {
  const Shape& p = In(i, 0);
  const Shape& t = In(i, 1);
  const Shape& f = In(i, 2);
  if (p.dtype() != DType::kPred)
    return Invalid("the predicate of 'select' must be pred, got ", Str(p));
  if (t.dims() != f.dims() || t.dtype() != f.dtype()) {
    return Invalid("the branches of 'select' must have the same shape, got ", Str(t), " and ",
                   Str(f));
  }
  if (p.rank() != 0 && p.dims() != t.dims()) {
    return Invalid(
        "the predicate of 'select' must be a scalar or have the branches' dimensions, got ", Str(p),
        " for ", Str(t));
  }
  return Shape::Array(t.dtype(), t.dims());
}

Inferred InferClamp(const Instruction& i) {
  const Shape& x = In(i, 1);
  for (int k : {0, 2}) {
    const Shape& bound = In(i, k);
    if (bound.dtype() != x.dtype()) {
      return Invalid("operands of 'clamp' must have the same element type, got ", Str(bound),
                     " and ", Str(x));
    }
    if (bound.rank() != 0 && bound.dims() != x.dims()) {
      return Invalid("the bounds of 'clamp' must be scalars or have the operand's dimensions, got ",
                     Str(bound), " for ", Str(x));
    }
  }
  return Shape::Array(x.dtype(), x.dims());
}

// map applies a scalar computation to the same-index elements of its operands.
Inferred InferMap(const Instruction& i) {
  std::vector<Shape> params;
  for (int k = 0; k < i.operand_count(); ++k) {
    SEAM_RETURN_IF_ERROR(CheckSameDims(i, In(i, 0), In(i, k)));
    params.push_back(Shape::Scalar(In(i, k).dtype()));
  }
  SEAM_ASSIGN_OR_RETURN(const Computation* f, Called(i, i.attrs().to_apply, "to_apply"));
  SEAM_RETURN_IF_ERROR(CheckParameters(*f, params, "to_apply"));
  const Shape& r = f->root()->shape();
  if (!r.IsArray() || r.rank() != 0) {
    return Invalid("to_apply computation '", f->name(), "' of 'map' must return a scalar, got ",
                   Str(r));
  }
  return Shape::Array(r.dtype(), In(i, 0).dims());
}

Inferred InferElementwise(const Instruction& i) {
  switch (i.opcode()) {
    case Opcode::kSelect:
      return InferSelect(i);
    case Opcode::kClamp:
      return InferClamp(i);
    case Opcode::kMap:
      return InferMap(i);
    default:
      return i.operand_count() == 1 ? InferUnary(i) : InferBinary(i);
  }
}

// ---- Data movement ----------------------------------------------------

// Operand dimension k becomes result dimension dimensions[k], same size; the
// other result dimensions are new, so their sizes come from the declaration.
Inferred InferBroadcast(const Instruction& i) {
  const Shape& x = In(i, 0);
  SEAM_ASSIGN_OR_RETURN(const Shape* out, DeclaredArray(i));
  const IntList dims = i.attrs().dimensions.value_or(IntList{});
  if (static_cast<int>(dims.size()) != x.rank()) {
    return Invalid(
        "'broadcast' needs one entry in dimensions per operand dimension, got dimensions=",
        List(dims), " for ", Str(x));
  }
  SEAM_RETURN_IF_ERROR(CheckDimList(i, "dimensions", dims, out->rank()));
  for (int k = 0; k < x.rank(); ++k) {
    if (x.dim(k) != out->dim(dims[k])) {
      return Invalid("operand dimension ", k, " of 'broadcast' (size ", x.dim(k),
                     ") maps to result dimension ", dims[k], " of size ", out->dim(dims[k]),
                     "; the sizes must be equal");
    }
  }
  return Shape::Array(x.dtype(), out->dims());
}

// reshape keeps the element count and type; bitcast only the byte size,
// since it may reinterpret anything (layouts included) in place.
Inferred InferReshapeOrBitcast(const Instruction& i) {
  const Shape& x = In(i, 0);
  SEAM_ASSIGN_OR_RETURN(const Shape* out, DeclaredArray(i));
  std::optional<int64_t> in_count = x.ElementCount();
  std::optional<int64_t> out_count = out->ElementCount();
  if (!in_count || !out_count) return std::nullopt;
  if (i.opcode() == Opcode::kReshape) {
    if (*in_count != *out_count) {
      return Invalid("'reshape' must keep the element count, but ", Str(x), " has ", *in_count,
                     " and ", Str(*out), " has ", *out_count);
    }
    return Shape::Array(x.dtype(), out->dims());
  }
  CheckedInt in_bits = CheckedInt(*in_count) * DTypeBits(x.dtype());
  CheckedInt out_bits = CheckedInt(*out_count) * DTypeBits(out->dtype());
  if (in_bits.overflow || out_bits.overflow) return std::nullopt;
  if (in_bits.value != out_bits.value) {
    return Invalid("'bitcast' must keep the size in bits, but ", Str(x), " and ", Str(*out),
                   " differ");
  }
  return *out;
}

Inferred InferTranspose(const Instruction& i) {
  const Shape& x = In(i, 0);
  SEAM_ASSIGN_OR_RETURN(const IntList* perm, Require(i, i.attrs().dimensions, "dimensions"));
  if (static_cast<int>(perm->size()) != x.rank()) {
    return Invalid("dimensions of 'transpose' must be a permutation of the operand's ", x.rank(),
                   " dimensions, got ", List(*perm));
  }
  SEAM_RETURN_IF_ERROR(CheckDimList(i, "dimensions", *perm, x.rank()));
  std::vector<int64_t> dims;
  for (int64_t d : *perm) dims.push_back(x.dim(d));
  return Shape::Array(x.dtype(), dims);
}

Inferred InferSlice(const Instruction& i) {
  const Shape& x = In(i, 0);
  SEAM_ASSIGN_OR_RETURN(const SliceRanges* ranges, Require(i, i.attrs().slice, "slice"));
  if (static_cast<int>(ranges->size()) != x.rank()) {
    return Invalid("'slice' needs one range per operand dimension, got ", ranges->size(), " for ",
                   Str(x));
  }
  std::vector<int64_t> dims;
  for (int d = 0; d < x.rank(); ++d) {
    const SliceRange& r = (*ranges)[d];
    if (r.stride < 1 || r.start < 0 || r.start > r.limit || r.limit > x.dim(d)) {
      return Invalid("range [", r.start, ":", r.limit, ":", r.stride,
                     "] of 'slice' does not fit dimension ", d, " of ", Str(x));
    }
    int64_t span = r.limit - r.start;
    dims.push_back(span / r.stride + (span % r.stride != 0 ? 1 : 0));
  }
  return Shape::Array(x.dtype(), dims);
}

// Start indices: integer scalars, or one integer vector in the old form.
absl::Status CheckStartIndices(const Instruction& i, int first) {
  for (int k = first; k < i.operand_count(); ++k) {
    const Shape& s = In(i, k);
    if (!IsInteger(s.dtype()) || s.rank() > 1 ||
        (s.rank() == 1 && i.operand_count() != first + 1)) {
      return Invalid("start indices of ", Op(i), " must be integer scalars, got ", Str(s));
    }
  }
  return absl::OkStatus();
}

Inferred InferDynamicSlice(const Instruction& i) {
  const Shape& x = In(i, 0);
  SEAM_RETURN_IF_ERROR(CheckStartIndices(i, 1));
  SEAM_ASSIGN_OR_RETURN(const IntList* sizes,
                        Require(i, i.attrs().dynamic_slice_sizes, "dynamic_slice_sizes"));
  bool fits = static_cast<int>(sizes->size()) == x.rank();
  for (int d = 0; fits && d < x.rank(); ++d) fits = (*sizes)[d] >= 0 && (*sizes)[d] <= x.dim(d);
  if (!fits) {
    return Invalid("dynamic_slice_sizes=", List(*sizes), " of 'dynamic-slice' do not fit ", Str(x));
  }
  return Shape::Array(x.dtype(), *sizes);
}

Inferred InferDynamicUpdateSlice(const Instruction& i) {
  const Shape& x = In(i, 0);
  const Shape& u = In(i, 1);
  SEAM_RETURN_IF_ERROR(CheckStartIndices(i, 2));
  bool fits = u.dtype() == x.dtype() && u.rank() == x.rank();
  for (int d = 0; fits && d < x.rank(); ++d) fits = u.dim(d) <= x.dim(d);
  if (!fits) {
    return Invalid(
        "the update of 'dynamic-update-slice' must have the operand's type and rank and fit in it, "
        "got ",
        Str(u), " for ", Str(x));
  }
  return Shape::Array(x.dtype(), x.dims());
}

Inferred InferConcatenate(const Instruction& i) {
  const Shape& x0 = In(i, 0);
  SEAM_ASSIGN_OR_RETURN(const IntList* dims, Require(i, i.attrs().dimensions, "dimensions"));
  if (dims->size() != 1)
    return Invalid("'concatenate' needs exactly one dimension, got dimensions=", List(*dims));
  SEAM_RETURN_IF_ERROR(CheckDimList(i, "dimensions", *dims, x0.rank()));
  int64_t d = dims->front();
  std::vector<int64_t> out = x0.dims();
  for (int k = 1; k < i.operand_count(); ++k) {
    const Shape& x = In(i, k);
    if (x.dtype() != x0.dtype()) {
      return Invalid("operands of 'concatenate' must have the same element type, got ", Str(x0),
                     " and ", Str(x));
    }
    std::vector<int64_t> other = x.dims();
    if (x.rank() == x0.rank()) other[d] = x0.dim(d);
    if (other != x0.dims()) {
      return Invalid("operands of 'concatenate' must agree except in dimension ", d, ", got ",
                     Str(x0), " and ", Str(x));
    }
    CheckedInt sum = CheckedInt(out[d]) + x.dim(d);
    if (sum.overflow) return Overflow(i);
    out[d] = sum.value;
  }
  return Shape::Array(x0.dtype(), out);
}

// Low and high padding may be negative (cropping); interior padding may not.
Inferred InferPad(const Instruction& i) {
  const Shape& x = In(i, 0);
  const Shape& v = In(i, 1);
  if (v.rank() != 0 || v.dtype() != x.dtype()) {
    return Invalid("the padding value of 'pad' must be a scalar of the operand's type, got ",
                   Str(v), " for ", Str(x));
  }
  SEAM_ASSIGN_OR_RETURN(const PaddingConfig* padding, Require(i, i.attrs().padding, "padding"));
  if (static_cast<int>(padding->size()) != x.rank()) {
    return Invalid("'pad' needs one padding entry per operand dimension, got ", padding->size(),
                   " for ", Str(x));
  }
  std::vector<int64_t> dims;
  for (int d = 0; d < x.rank(); ++d) {
    const PadDim& p = (*padding)[d];
    CheckedInt size = CheckedInt(p.low) + p.high + x.dim(d) +
                      CheckedInt(std::max<int64_t>(x.dim(d) - 1, 0)) * p.interior;
    if (size.overflow) return Overflow(i);
    if (p.interior < 0 || size.value < 0) {
      return Invalid("padding ", p.low, "_", p.high, "_", p.interior,
                     " of 'pad' does not fit dimension ", d, " of ", Str(x));
    }
    dims.push_back(size.value);
  }
  return Shape::Array(x.dtype(), dims);
}

Inferred InferReverse(const Instruction& i) {
  const Shape& x = In(i, 0);
  SEAM_ASSIGN_OR_RETURN(const IntList* dims, Require(i, i.attrs().dimensions, "dimensions"));
  SEAM_RETURN_IF_ERROR(CheckDimList(i, "dimensions", *dims, x.rank()));
  return Shape::Array(x.dtype(), x.dims());
}

Inferred InferIota(const Instruction& i) {
  SEAM_ASSIGN_OR_RETURN(const Shape* out, DeclaredArray(i));
  SEAM_ASSIGN_OR_RETURN(const int64_t* d, Require(i, i.attrs().iota_dimension, "iota_dimension"));
  if (*d < 0 || *d >= out->rank()) {
    return Invalid("iota_dimension=", *d, " of 'iota' is out of range for ", Str(*out));
  }
  return Shape::Array(out->dtype(), out->dims());
}

// The index vectors of gather and scatter lie along index_vector_dim of the
// indices, or are scalars when it equals the indices' rank. Returns the
// indices' other ("batch" / "scatter") dimensions.
absl::StatusOr<std::vector<int64_t>> IndexBatchDims(const Instruction& i, const Shape& indices,
                                                    int64_t vector_dim, size_t vector_size) {
  if (!IsInteger(indices.dtype()))
    return Invalid("indices of ", Op(i), " must be integers, got ", Str(indices));
  if (vector_dim < 0 || vector_dim > indices.rank()) {
    return Invalid("index_vector_dim=", vector_dim, " of ", Op(i), " is out of range for indices ",
                   Str(indices));
  }
  int64_t length = vector_dim < indices.rank() ? indices.dim(vector_dim) : 1;
  if (length != static_cast<int64_t>(vector_size)) {
    return Invalid("index vectors of ", Op(i), " have ", length, " components, but ", vector_size,
                   " operand dimensions are indexed");
  }
  std::vector<int64_t> batch = indices.dims();
  if (vector_dim < indices.rank()) batch.erase(batch.begin() + vector_dim);
  return batch;
}

Inferred InferGather(const Instruction& i) {
  const Shape& x = In(i, 0);
  const Attributes& a = i.attrs();
  SEAM_ASSIGN_OR_RETURN(const IntList* offset, Require(i, a.offset_dims, "offset_dims"));
  SEAM_ASSIGN_OR_RETURN(const IntList* sizes, Require(i, a.slice_sizes, "slice_sizes"));
  SEAM_ASSIGN_OR_RETURN(const IntList* start_map, Require(i, a.start_index_map, "start_index_map"));
  SEAM_ASSIGN_OR_RETURN(const int64_t* vector_dim,
                        Require(i, a.index_vector_dim, "index_vector_dim"));
  IntList dropped = Concat(a.collapsed_slice_dims.value_or(IntList{}),
                           a.operand_batching_dims.value_or(IntList{}));
  SEAM_ASSIGN_OR_RETURN(std::vector<int64_t> batch,
                        IndexBatchDims(i, In(i, 1), *vector_dim, start_map->size()));
  SEAM_RETURN_IF_ERROR(CheckDimList(i, "start_index_map", *start_map, x.rank()));
  SEAM_RETURN_IF_ERROR(CheckDimList(i, "collapsed and batching dimensions", dropped, x.rank()));
  if (static_cast<int>(sizes->size()) != x.rank()) {
    return Invalid("'gather' needs one slice size per operand dimension, got slice_sizes=",
                   List(*sizes), " for ", Str(x));
  }
  std::vector<int64_t> window;
  for (int d = 0; d < x.rank(); ++d) {
    int64_t s = (*sizes)[d];
    if (s < 0 || s > x.dim(d) || (Contains(dropped, d) && s > 1)) {
      return Invalid("slice size ", s, " of 'gather' does not fit dimension ", d, " of ", Str(x),
                     Contains(dropped, d) ? " (collapsed dimensions need size 1)" : "");
    }
    if (!Contains(dropped, d)) window.push_back(s);
  }
  if (offset->size() != window.size() || !std::is_sorted(offset->begin(), offset->end())) {
    return Invalid("offset_dims of 'gather' must be ", window.size(),
                   " sorted result dimensions (one per uncollapsed slice dimension), got ",
                   List(*offset));
  }
  int64_t rank = static_cast<int64_t>(batch.size() + window.size());
  SEAM_RETURN_IF_ERROR(CheckDimList(i, "offset_dims", *offset, rank));
  std::vector<int64_t> dims;
  for (int64_t d = 0, o = 0, b = 0; d < rank; ++d)
    dims.push_back(Contains(*offset, d) ? window[o++] : batch[b++]);
  return Shape::Array(x.dtype(), dims);
}

// scatter(inputs..., indices, updates...): the result has the inputs' shapes.
Inferred InferScatter(const Instruction& i) {
  int n = (i.operand_count() - 1) / 2;
  const Shape& x = In(i, 0);
  const Shape& u = In(i, n + 1);
  const Attributes& a = i.attrs();
  SEAM_ASSIGN_OR_RETURN(const IntList* window_dims,
                        Require(i, a.update_window_dims, "update_window_dims"));
  SEAM_ASSIGN_OR_RETURN(const IntList* to_operand,
                        Require(i, a.scatter_dims_to_operand_dims, "scatter_dims_to_operand_dims"));
  SEAM_ASSIGN_OR_RETURN(const int64_t* vector_dim,
                        Require(i, a.index_vector_dim, "index_vector_dim"));
  IntList inserted =
      Concat(a.inserted_window_dims.value_or(IntList{}), a.input_batching_dims.value_or(IntList{}));
  std::vector<DType> inputs, updates;
  for (int k = 0; k < n; ++k) {
    SEAM_RETURN_IF_ERROR(CheckSameDims(i, x, In(i, k)));
    SEAM_RETURN_IF_ERROR(CheckSameDims(i, u, In(i, n + 1 + k)));
    inputs.push_back(In(i, k).dtype());
    updates.push_back(In(i, n + 1 + k).dtype());
  }
  SEAM_ASSIGN_OR_RETURN(std::vector<int64_t> scatter,
                        IndexBatchDims(i, In(i, n), *vector_dim, to_operand->size()));
  SEAM_RETURN_IF_ERROR(CheckDimList(i, "scatter_dims_to_operand_dims", *to_operand, x.rank()));
  SEAM_RETURN_IF_ERROR(CheckDimList(i, "inserted and batching dimensions", inserted, x.rank()));
  std::vector<int64_t> window;  // operand dims the update windows span
  for (int d = 0; d < x.rank(); ++d) {
    if (!Contains(inserted, d)) window.push_back(x.dim(d));
  }
  if (window_dims->size() != window.size() ||
      u.rank() != static_cast<int>(scatter.size() + window.size())) {
    return Invalid("updates of 'scatter' must have ", scatter.size(), " scatter dimensions and ",
                   window.size(), " window dimensions, got ", Str(u),
                   " with update_window_dims=", List(*window_dims));
  }
  SEAM_RETURN_IF_ERROR(CheckDimList(i, "update_window_dims", *window_dims, u.rank()));
  std::vector<int64_t> update_scatter;
  for (int d = 0, w = 0; d < u.rank(); ++d) {
    if (!Contains(*window_dims, d)) {
      update_scatter.push_back(u.dim(d));
    } else if (u.dim(d) > window[w++]) {
      return Invalid("update window dimension ", d, " of 'scatter' exceeds the operand: ", Str(u),
                     " into ", Str(x));
    }
  }
  if (update_scatter != scatter) {
    return Invalid("scatter dimensions of the updates of 'scatter' must match the indices, got ",
                   Str(u), " for ", Str(In(i, n)));
  }
  SEAM_RETURN_IF_ERROR(CheckReducer(i, a.to_apply, "to_apply", inputs, updates).status());
  return Results(inputs, x.dims());
}

Inferred InferDataMovement(const Instruction& i) {
  switch (i.opcode()) {
    case Opcode::kBroadcast:
      return InferBroadcast(i);
    case Opcode::kReshape:
    case Opcode::kBitcast:
      return InferReshapeOrBitcast(i);
    case Opcode::kTranspose:
      return InferTranspose(i);
    case Opcode::kSlice:
      return InferSlice(i);
    case Opcode::kDynamicSlice:
      return InferDynamicSlice(i);
    case Opcode::kDynamicUpdateSlice:
      return InferDynamicUpdateSlice(i);
    case Opcode::kConcatenate:
      return InferConcatenate(i);
    case Opcode::kPad:
      return InferPad(i);
    case Opcode::kReverse:
      return InferReverse(i);
    case Opcode::kIota:
      return InferIota(i);
    case Opcode::kGather:
      return InferGather(i);
    case Opcode::kScatter:
      return InferScatter(i);
    case Opcode::kCopy:
      return In(i, 0);
    default:
      return std::nullopt;  // dynamic-reshape: sizes come from operand values
  }
}

// ---- Reductions -------------------------------------------------------

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

Inferred InferLibrary(const Instruction& i) {
  switch (i.opcode()) {
    case Opcode::kDot:
      return InferDot(i);
    case Opcode::kConvolution:
      return InferConvolution(i);
    default:
      return std::nullopt;  // fft, sort, topk, cholesky...: not inferred yet
  }
}

// ---- Composite ops ----------------------------------------------------

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

// ---- Control ----------------------------------------------------------

Inferred InferGetTupleElement(const Instruction& i) {
  const Shape& t = In(i, 0);
  SEAM_ASSIGN_OR_RETURN(const int64_t* index, Require(i, i.attrs().index, "index"));
  if (!t.IsTuple()) return Invalid("'get-tuple-element' needs a tuple operand, got ", Str(t));
  if (*index < 0 || *index >= static_cast<int64_t>(t.tuple_shapes().size())) {
    return Invalid("index=", *index, " of 'get-tuple-element' is out of range for ", Str(t));
  }
  return t.tuple_shapes()[*index];
}

// The loop state is the operand, the body's parameter and result, and the
// condition's parameter.
Inferred InferWhile(const Instruction& i) {
  const Shape& state = In(i, 0);
  SEAM_ASSIGN_OR_RETURN(const Computation* condition, Called(i, i.attrs().condition, "condition"));
  SEAM_ASSIGN_OR_RETURN(const Computation* body, Called(i, i.attrs().body, "body"));
  SEAM_RETURN_IF_ERROR(CheckParameters(*condition, {state}, "condition"));
  SEAM_RETURN_IF_ERROR(CheckParameters(*body, {state}, "body"));
  if (!ShapesMatch(condition->root()->shape(), Shape::Scalar(DType::kPred))) {
    return Invalid("condition computation '", condition->name(),
                   "' of 'while' must return pred[], got ", Str(condition->root()->shape()));
  }
  if (!ShapesMatch(body->root()->shape(), state)) {
    return Invalid("body computation '", body->name(), "' of 'while' must return the loop state ",
                   Str(state), ", got ", Str(body->root()->shape()));
  }
  return state;
}

// conditional(index, operands...): branch b takes operand b + 1; every
// branch returns the result shape. A pred index picks true (0) or false (1).
Inferred InferConditional(const Instruction& i) {
  const Shape& index = In(i, 0);
  const Attributes& a = i.attrs();
  std::vector<Computation*> branches;
  if (a.branch_computations.has_value()) {
    branches = *a.branch_computations;
  } else if (a.true_computation.has_value() && a.false_computation.has_value()) {
    branches = {*a.true_computation, *a.false_computation};
  }
  if (branches.empty()) {
    return Invalid(
        "'conditional' requires branch_computations or true_computation and false_computation");
  }
  bool is_pred = index.IsArray() && index.dtype() == DType::kPred;
  if (!index.IsArray() || index.rank() != 0 || (!is_pred && index.dtype() != DType::kS32) ||
      (is_pred && branches.size() != 2)) {
    return Invalid(
        "the branch index of 'conditional' must be s32[], or pred[] with two branches, got ",
        Str(index));
  }
  if (i.operand_count() != static_cast<int>(branches.size()) + 1) {
    return Invalid("'conditional' with ", branches.size(), " branches takes ", branches.size() + 1,
                   " operands, got ", i.operand_count());
  }
  std::optional<Shape> result;
  for (size_t b = 0; b < branches.size(); ++b) {
    SEAM_ASSIGN_OR_RETURN(const Computation* branch, Called(i, branches[b], "branch_computations"));
    SEAM_RETURN_IF_ERROR(CheckParameters(*branch, {In(i, static_cast<int>(b) + 1)}, "branch"));
    if (!result.has_value()) result = branch->root()->shape();
    if (!ShapesMatch(branch->root()->shape(), *result)) {
      return Invalid("branches of 'conditional' must return the same shape, got ", Str(*result),
                     " and ", Str(branch->root()->shape()), " from '", branch->name(), "'");
    }
  }
  return result;
}

Inferred InferControl(const Instruction& i) {
  switch (i.opcode()) {
    case Opcode::kParameter:
      return i.shape();  // the declaration is the definition
    case Opcode::kConstant:
      if (i.literal() == nullptr) return Invalid("'constant' has no value");
      return i.literal()->shape();
    case Opcode::kTuple: {
      std::vector<Shape> elements;
      for (const Instruction* operand : i.operands()) elements.push_back(operand->shape());
      return Shape::Tuple(std::move(elements));
    }
    case Opcode::kGetTupleElement:
      return InferGetTupleElement(i);
    case Opcode::kCall:
      return CalleeResult(i, i.attrs().to_apply, "to_apply");
    case Opcode::kFusion:
      return CalleeResult(i, i.attrs().calls, "calls");
    case Opcode::kWhile:
      return InferWhile(i);
    case Opcode::kConditional:
      return InferConditional(i);
    case Opcode::kOptimizationBarrier:
    case Opcode::kDomain:
      return In(i, 0);
    case Opcode::kAfterAll:
      for (const Instruction* operand : i.operands()) {
        if (!operand->shape().IsToken())
          return Invalid("operands of 'after-all' must be tokens, got ", Str(operand->shape()));
      }
      return Shape::Token();
    case Opcode::kAddDependency:
      if (!In(i, 1).IsToken())
        return Invalid("the second operand of 'add-dependency' must be a token, got ",
                       Str(In(i, 1)));
      return In(i, 0);
    case Opcode::kPartitionId:
    case Opcode::kReplicaId:
      return Shape::Scalar(DType::kU32);
    case Opcode::kGetDimensionSize: {
      SEAM_ASSIGN_OR_RETURN(const IntList* dims, Require(i, i.attrs().dimensions, "dimensions"));
      if (!In(i, 0).IsArray() || dims->size() != 1) {
        return Invalid("'get-dimension-size' needs an array operand and one dimension, got ",
                       Str(In(i, 0)), " and dimensions=", List(*dims));
      }
      SEAM_RETURN_IF_ERROR(CheckDimList(i, "dimensions", *dims, In(i, 0).rank()));
      return Shape::Scalar(DType::kS32);
    }
    default:
      // async-*, copy-start/done, set-dimension-size: results wrap contexts or
      // dynamic sizes Seam does not model.
      return std::nullopt;
  }
}

// Ops whose operands are all arrays: everything that computes on elements.
bool TakesArrayOperands(Opcode op) {
  switch (OpcodeCategory(op)) {
    case OpCategory::kElementwise:
    case OpCategory::kReduction:
    case OpCategory::kLibrary:
    case OpCategory::kComposite:
      return true;
    case OpCategory::kDataMovement:
      return op != Opcode::kCopy;  // copy also copies tuples
    default:
      return false;
  }
}

// Index operands of dynamic-slice / dynamic-update-slice after `lead` data
// operands: one per operand dimension, or one index vector (the old form).
absl::Status CheckIndexCount(const Instruction& i, int lead) {
  int n = i.operand_count();
  if (n < lead || !In(i, 0).IsArray()) {
    return Invalid(Op(i), " takes ", lead, " array operand(s) then start indices, got ", n,
                   " operands");
  }
  int rank = In(i, 0).rank();
  if (n == lead + rank) return absl::OkStatus();
  if (n == lead + 1 && In(i, lead).IsArray() && In(i, lead).rank() == 1 &&
      In(i, lead).dim(0) == rank) {
    return absl::OkStatus();
  }
  return Invalid(Op(i), " of ", Str(In(i, 0)), " takes ", lead + rank,
                 " operands (one start index per dimension), got ", n);
}

}  // namespace

bool ShapesMatch(const Shape& a, const Shape& b) {
  if (a.IsTuple() || b.IsTuple()) {
    if (!a.IsTuple() || !b.IsTuple() || a.tuple_shapes().size() != b.tuple_shapes().size())
      return false;
    for (size_t k = 0; k < a.tuple_shapes().size(); ++k) {
      if (!ShapesMatch(a.tuple_shapes()[k], b.tuple_shapes()[k])) return false;
    }
    return true;
  }
  if (a.dtype() != b.dtype() || a.rank() != b.rank()) return false;
  for (int d = 0; d < a.rank(); ++d) {
    if (a.dim(d) != b.dim(d) && a.dim(d) != Shape::kUnboundedSize &&
        b.dim(d) != Shape::kUnboundedSize)
      return false;
  }
  return true;
}

absl::Status CheckOperandCount(const Instruction& i) {
  int n = i.operand_count();
  int arity = OpcodeArity(i.opcode());
  if (arity != kVariadic) {
    if (n == arity) return absl::OkStatus();
    return Invalid(Op(i), " takes ", arity, arity == 1 ? " operand" : " operands", ", got ", n);
  }
  switch (i.opcode()) {
    case Opcode::kReduce:
    case Opcode::kReduceWindow:
      if (n >= 2 && n % 2 == 0) return absl::OkStatus();
      return Invalid(Op(i),
                     " takes N inputs then N init values (an even count of at least 2), got ", n,
                     " operands");
    case Opcode::kScatter:
      if (n >= 3 && n % 2 == 1) return absl::OkStatus();
      return Invalid(
          "'scatter' takes N inputs, the indices and N updates (an odd count of at least 3), got ",
          n, " operands");
    case Opcode::kConcatenate:
    case Opcode::kSort:
    case Opcode::kMap:
    case Opcode::kDynamicReshape:
    case Opcode::kConditional:
      if (n >= 1) return absl::OkStatus();
      return Invalid(Op(i), " takes at least one operand, got none");
    case Opcode::kDynamicSlice:
      return CheckIndexCount(i, 1);
    case Opcode::kDynamicUpdateSlice:
      return CheckIndexCount(i, 2);
    default:
      return absl::OkStatus();
  }
}

absl::StatusOr<std::optional<Shape>> InferShape(const Instruction& i) {
  for (int k = 0; k < i.operand_count(); ++k) {
    if (i.operand(k) == nullptr) return Invalid("operand ", k, " of ", Op(i), " is missing");
  }
  SEAM_RETURN_IF_ERROR(CheckOperandCount(i));
  bool unbounded = HasUnboundedDim(i.shape());
  for (int k = 0; k < i.operand_count(); ++k) {
    if (TakesArrayOperands(i.opcode()) && !In(i, k).IsArray()) {
      return Invalid("operand ", k, " of ", Op(i), " must be an array, got ", Str(In(i, k)));
    }
    unbounded = unbounded || HasUnboundedDim(In(i, k));
  }
  // Unbounded sizes (`?`) follow XLA's dynamic-shape rules, not modelled here.
  if (unbounded) return std::nullopt;
  switch (OpcodeCategory(i.opcode())) {
    case OpCategory::kElementwise:
      return InferElementwise(i);
    case OpCategory::kDataMovement:
      return InferDataMovement(i);
    case OpCategory::kReduction:
      return InferReduction(i);
    case OpCategory::kLibrary:
      return InferLibrary(i);
    case OpCategory::kComposite:
      return InferComposite(i);
    case OpCategory::kControl:
      return InferControl(i);
    default:
      return std::nullopt;  // collectives and opaque ops (custom-call, infeed...)
  }
}

}  // namespace seam
