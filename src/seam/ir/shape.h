// Shapes of HLO values: an array (element type, dimensions, optional layout),
// a token, or a tuple of shapes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "seam/ir/dtype.h"

namespace seam {

// Dimension order in memory, minor first, as HLO writes it: `{1,0}`. Tiling and
// memory-space suffixes (`:T(8,128)S(1)`) are not interpreted; they are kept
// verbatim so printing loses nothing.
struct Layout {
  std::vector<int64_t> minor_to_major;
  std::string suffix;  // text after ':' without the colon, or empty

  bool operator==(const Layout&) const = default;
};

class Shape {
 public:
  // A dimension whose size is not known, even as a bound (`?` in text).
  static constexpr int64_t kUnboundedSize = -1;

  Shape() = default;  // an empty tuple
  static Shape Array(DType type, std::vector<int64_t> dims);
  static Shape Scalar(DType type) { return Array(type, {}); }
  static Shape Token();
  static Shape Tuple(std::vector<Shape> elements);

  bool IsTuple() const { return is_tuple_; }
  bool IsToken() const { return !is_tuple_ && dtype_ == DType::kToken; }
  bool IsArray() const { return !is_tuple_ && dtype_ != DType::kToken; }

  DType dtype() const { return dtype_; }
  void set_dtype(DType t) { dtype_ = t; }
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t dim(int i) const { return dims_[i]; }
  int rank() const { return static_cast<int>(dims_.size()); }
  // Number of elements, or nullopt when a dimension is unbounded or the
  // product overflows int64.
  std::optional<int64_t> ElementCount() const;
  // Elements of an array shape for counting traffic and work: 0 for tuples,
  // tokens, unbounded or overflowing shapes.
  int64_t ArrayElementCount() const { return IsArray() ? ElementCount().value_or(0) : 0; }

  // Bounded dynamic dimensions (`<=N`) keep N in dims().
  bool IsDynamicDim(int i) const { return dynamic_[i]; }
  void SetDynamicDim(int i, bool dynamic) { dynamic_[i] = dynamic; }
  bool HasDynamicDims() const;

  const std::optional<Layout>& layout() const { return layout_; }
  void set_layout(std::optional<Layout> layout) { layout_ = std::move(layout); }

  const std::vector<Shape>& tuple_shapes() const { return tuple_; }
  std::vector<Shape>& mutable_tuple_shapes() { return tuple_; }

  // Exact equality, layouts included.
  bool operator==(const Shape& other) const = default;
  // Equal ignoring layouts (element types, dimensions, dynamism, nesting).
  bool Compatible(const Shape& other) const { return SameForm(other, true); }
  // Equal ignoring layouts and which sizes are bounds (`<=N`): values of
  // either shape hold the same elements at the same indices.
  bool CompatibleIgnoringDynamism(const Shape& other) const { return SameForm(other, false); }

  // HLO text, e.g. `f32[2,<=3]{1,0}` or `(f32[], s32[4])`.
  std::string ToString(bool with_layout = true) const;

 private:
  bool SameForm(const Shape& other, bool with_dynamism) const;

  bool is_tuple_ = true;
  DType dtype_ = DType::kPred;
  std::vector<int64_t> dims_;
  std::vector<bool> dynamic_;
  std::optional<Layout> layout_;
  std::vector<Shape> tuple_;
};

// The descending layout {rank-1,...,0} (row-major).
Layout RowMajorLayout(int rank);

// Whether two shapes lay their arrays out alike, element by element of a
// tuple; a missing layout is row-major. Element types and dimensions are
// not compared.
bool SameLayouts(const Shape& a, const Shape& b);

}  // namespace seam
