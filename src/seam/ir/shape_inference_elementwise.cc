// Shape inference for elementwise ops (unary, binary, select, clamp, map)
// and for the data movement that rearranges one array: broadcast, reshape,
// transpose, slices, concatenate, pad, reverse, iota. Gather and scatter,
// also data movement, are in shape_inference_gather_scatter.cc.
#include <algorithm>
#include <vector>

#include "seam/ir/shape_inference_util.h"
#include "seam/util/status_macros.h"

namespace seam::shape_inference_internal {

// ---- Elementwise ------------------------------------------------------

namespace {

DType ComplexComponent(DType t) { return t == DType::kC128 ? DType::kF64 : DType::kF32; }

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
      result = DType::kPred;
      break;
    case Opcode::kAbs:
      if (IsComplex(t)) result = ComplexComponent(t);
      break;
    case Opcode::kReal:
    case Opcode::kImag:
      if (IsComplex(t)) result = ComplexComponent(t);
      break;
    case Opcode::kReducePrecision: {
      SEAM_ASSIGN_OR_RETURN(const int64_t* e, Require(i, i.attrs().exponent_bits, "exponent_bits"));
      SEAM_ASSIGN_OR_RETURN(const int64_t* m, Require(i, i.attrs().mantissa_bits, "mantissa_bits"));
      if (*e < 1 || *m < 0) {
        return Invalid("'reduce-precision' needs exponent_bits >= 1 and mantissa_bits >= 0, got ",
                       *e, " and ", *m);
      }
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
    SEAM_ASSIGN_OR_RETURN(const ComparisonDirection* direction,
                          Require(i, i.attrs().direction, "direction"));
    if (IsComplex(a.dtype()) && *direction != ComparisonDirection::kEq &&
        *direction != ComparisonDirection::kNe) {
      return Invalid("complex numbers have no order: 'compare' on ", Str(a),
                     " takes direction EQ or NE");
    }
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

// The opcode table's element types, checked on the operands holding values
// (not select's predicate nor stochastic-convert's random bits).
absl::Status CheckOperandTypes(const Instruction& i) {
  if (OpcodeOperandTypes(i.opcode()) == OperandTypes::kAnyType) return absl::OkStatus();
  for (int k = 0; k < i.operand_count(); ++k) {
    const Shape& x = In(i, k);
    if (!AcceptsOperandType(i.opcode(), x.dtype())) {
      return Invalid(Op(i), " needs ", OperandTypesName(OpcodeOperandTypes(i.opcode())),
                     " operand, got ", Str(x));
    }
  }
  return absl::OkStatus();
}

}  // namespace

Inferred InferElementwise(const Instruction& i) {
  SEAM_RETURN_IF_ERROR(CheckOperandTypes(i));
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

namespace {

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

}  // namespace

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

}  // namespace seam::shape_inference_internal
