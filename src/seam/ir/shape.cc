#include "seam/ir/shape.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace seam {

Shape Shape::Array(DType type, std::vector<int64_t> dims) {
  Shape s;
  s.is_tuple_ = false;
  s.dtype_ = type;
  s.dynamic_.assign(dims.size(), false);
  s.dims_ = std::move(dims);
  return s;
}

Shape Shape::Token() { return Array(DType::kToken, {}); }

Shape Shape::Tuple(std::vector<Shape> elements) {
  Shape s;
  s.tuple_ = std::move(elements);
  return s;
}

std::optional<int64_t> Shape::ElementCount() const {
  int64_t n = 1;
  for (int64_t d : dims_) {
    if (d < 0) return std::nullopt;
    if (d != 0 && n > INT64_MAX / d) return std::nullopt;
    n *= d;
  }
  return n;
}

bool Shape::HasDynamicDims() const {
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (dynamic_[i] || dims_[i] == kUnboundedSize) return true;
  }
  return false;
}

bool Shape::SameForm(const Shape& other, bool with_dynamism) const {
  if (is_tuple_ != other.is_tuple_) return false;
  if (is_tuple_) {
    if (tuple_.size() != other.tuple_.size()) return false;
    for (size_t i = 0; i < tuple_.size(); ++i) {
      if (!tuple_[i].SameForm(other.tuple_[i], with_dynamism)) return false;
    }
    return true;
  }
  return dtype_ == other.dtype_ && dims_ == other.dims_ &&
         (!with_dynamism || dynamic_ == other.dynamic_);
}

std::string Shape::ToString(bool with_layout) const {
  if (is_tuple_) {
    std::string out = "(";
    for (size_t i = 0; i < tuple_.size(); ++i) {
      if (i > 0) out += ", ";
      // XLA marks every fifth element of long tuples; readers rely on it.
      if (i > 0 && i % 5 == 0) absl::StrAppend(&out, "/*index=", i, "*/");
      out += tuple_[i].ToString(with_layout);
    }
    return out + ")";
  }
  std::string out(DTypeName(dtype_));
  out += '[';
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i > 0) out += ',';
    if (dims_[i] == kUnboundedSize) {
      out += '?';
    } else {
      if (dynamic_[i]) out += "<=";
      absl::StrAppend(&out, dims_[i]);
    }
  }
  out += ']';
  if (with_layout && layout_.has_value()) {
    absl::StrAppend(&out, "{", absl::StrJoin(layout_->minor_to_major, ","));
    if (!layout_->suffix.empty()) absl::StrAppend(&out, ":", layout_->suffix);
    out += '}';
  }
  return out;
}

Layout RowMajorLayout(int rank) {
  Layout layout;
  for (int i = rank - 1; i >= 0; --i) layout.minor_to_major.push_back(i);
  return layout;
}



bool SameLayouts(const Shape& a, const Shape& b) {
  if (a.IsTuple() != b.IsTuple()) return false;
  if (a.IsTuple()) {
    if (a.tuple_shapes().size() != b.tuple_shapes().size()) return false;
    for (size_t k = 0; k < a.tuple_shapes().size(); ++k) {
      if (!SameLayouts(a.tuple_shapes()[k], b.tuple_shapes()[k])) return false;
    }
    return true;
  }
  if (!a.IsArray() || !b.IsArray()) return true;
  return a.layout().value_or(RowMajorLayout(a.rank())) ==
         b.layout().value_or(RowMajorLayout(b.rank()));
}

}  // namespace seam
