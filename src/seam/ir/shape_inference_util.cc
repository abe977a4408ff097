// The helpers shape inference's op families share: attribute and dimension
// checks, and the checks on called computations (reducers, loop bodies...).
#include "seam/ir/shape_inference_util.h"

#include "seam/ir/shape_inference.h"
#include "seam/util/status_macros.h"

namespace seam::shape_inference_internal {

absl::Status MissingAttribute(const Instruction& i, absl::string_view name) {
  return Invalid(Op(i), " requires the attribute '", name, "'");
}

absl::Status Overflow(const Instruction& i) {
  return Invalid("a result dimension of ", Op(i), " overflows 64 bits");
}

bool FloatLike(DType t) {
  return IsFloat(t) || (DTypeKindOf(t) == DTypeKind::kOpaque && DTypeName(t)[0] == 'f');
}

bool SameIgnoringFpPrecision(DType a, DType b) { return a == b || (FloatLike(a) && FloatLike(b)); }

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

absl::Status CheckSameDims(const Instruction& i, const Shape& a, const Shape& b) {
  if (a.dims() == b.dims()) return absl::OkStatus();
  return Invalid("operands of ", Op(i), " must have the same dimensions, got ", Str(a), " and ",
                 Str(b));
}

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

// ---- Called computations ----------------------------------------------

absl::StatusOr<const Computation*> Called(const Instruction& i,
                                          const std::optional<ComputationRef>& ref,
                                          absl::string_view attr) {
  if (!ref.has_value() || *ref == nullptr) return MissingAttribute(i, attr);
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

}  // namespace seam::shape_inference_internal
