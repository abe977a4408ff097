#include "seam/text/shape_text.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "seam/util/status_macros.h"

namespace seam {
namespace {

// Tuples nest at most this deep: everything that walks a shape recurses
// into its elements, and real modules nest a few levels.
constexpr int kMaxTupleDepth = 100;

absl::StatusOr<Shape> ParseShapeAt(Scanner& scanner, int depth);

absl::StatusOr<Shape> ParseTupleShape(Scanner& scanner, int depth) {
  if (depth >= kMaxTupleDepth) {
    return scanner.Error(absl::StrCat("tuple shapes nest more than ", kMaxTupleDepth,
                                      " deep here; Seam reads at most that"));
  }
  SEAM_RETURN_IF_ERROR(scanner.Expect("("));
  std::vector<Shape> elements;
  if (!scanner.TryConsume(")")) {
    do {
      SEAM_ASSIGN_OR_RETURN(Shape element, ParseShapeAt(scanner, depth + 1));
      elements.push_back(std::move(element));
    } while (scanner.TryConsume(","));
    SEAM_RETURN_IF_ERROR(scanner.Expect(")"));
  }
  return Shape::Tuple(std::move(elements));
}

absl::Status ParseDimensions(Scanner& scanner, std::vector<int64_t>& dims,
                             std::vector<bool>& dynamic) {
  SEAM_RETURN_IF_ERROR(scanner.Expect("["));
  if (scanner.TryConsume("]")) return absl::OkStatus();
  do {
    if (scanner.TryConsume("?")) {
      dims.push_back(Shape::kUnboundedSize);
      dynamic.push_back(true);
      continue;
    }
    bool is_dynamic = scanner.TryConsume("<=");
    size_t at = (scanner.SkipTrivia(), scanner.pos());
    SEAM_ASSIGN_OR_RETURN(int64_t size, scanner.Integer("a dimension size"));
    if (size < 0) return scanner.ErrorAtOffset(at, "dimension size is negative");
    dims.push_back(size);
    dynamic.push_back(is_dynamic);
  } while (scanner.TryConsume(","));
  return scanner.Expect("]");
}

// `{1,0}` or `{1,0:T(8,128)S(1)}`; the cursor is on `{`.
absl::StatusOr<Layout> ParseLayout(Scanner& scanner, int rank) {
  size_t start = scanner.pos();
  scanner.Advance();
  Layout layout;
  if (scanner.Peek() != '}' && scanner.Peek() != ':') {
    do {
      SEAM_ASSIGN_OR_RETURN(int64_t dim, scanner.Integer("a layout dimension"));
      layout.minor_to_major.push_back(dim);
    } while (scanner.TryConsume(","));
  }
  if (scanner.TryConsume(":")) {
    SEAM_ASSIGN_OR_RETURN(layout.suffix, scanner.RawUntilClosingParen());
  }
  SEAM_RETURN_IF_ERROR(scanner.Expect("}"));
  std::vector<int64_t> sorted = layout.minor_to_major;
  std::sort(sorted.begin(), sorted.end());
  bool is_permutation = static_cast<int>(sorted.size()) == rank;
  for (int i = 0; is_permutation && i < rank; ++i) {
    is_permutation = sorted[i] == i;
  }
  if (!is_permutation) {
    return scanner.ErrorAtOffset(
        start, absl::StrCat("layout {", absl::StrJoin(layout.minor_to_major, ","),
                            "} is not a permutation of the ", rank,
                            " dimensions of the shape"));
  }
  return layout;
}

}  // namespace

bool ShapeStartsHere(Scanner& scanner) {
  char c = scanner.Peek();
  if (c == '(') return true;
  size_t p = scanner.pos();
  size_t n = 0;
  while (std::isalnum(static_cast<unsigned char>(scanner.PeekRawAt(n)))) ++n;
  if (n == 0 || scanner.PeekRawAt(n) != '[') return false;
  std::string word;
  for (size_t i = 0; i < n; ++i) word += scanner.PeekRawAt(i);
  scanner.set_pos(p);
  return DTypeFromName(word).has_value();
}

absl::StatusOr<Shape> ParseShape(Scanner& scanner) { return ParseShapeAt(scanner, 0); }

namespace {

absl::StatusOr<Shape> ParseShapeAt(Scanner& scanner, int depth) {
  if (scanner.Peek() == '(') return ParseTupleShape(scanner, depth);
  size_t start = scanner.pos();
  std::string word = scanner.PeekWord();
  if (word.empty()) return scanner.Unexpected("a shape");
  std::optional<DType> dtype = DTypeFromName(word);
  if (!dtype.has_value()) {
    return scanner.ErrorAtOffset(start,
                                 absl::StrCat("unknown element type '", word, "'"));
  }
  scanner.Advance(word.size());
  std::vector<int64_t> dims;
  std::vector<bool> dynamic;
  SEAM_RETURN_IF_ERROR(ParseDimensions(scanner, dims, dynamic));
  // Element counts and byte sizes fit in int64 everywhere after this.
  int64_t bytes = std::max<int64_t>(1, DTypeByteSize(*dtype));
  for (int64_t d : dims) {
    if (d != Shape::kUnboundedSize && __builtin_mul_overflow(bytes, d, &bytes)) {
      return scanner.ErrorAtOffset(start,
                                   absl::StrCat("shape ", word, "[", absl::StrJoin(dims, ","),
                                                "] holds more than 2^63 bytes"));
    }
  }
  Shape shape = *dtype == DType::kToken && dims.empty()
                    ? Shape::Token()
                    : Shape::Array(*dtype, dims);
  for (size_t i = 0; i < dynamic.size(); ++i) {
    shape.SetDynamicDim(static_cast<int>(i), dynamic[i]);
  }
  // A layout sticks to the `]`; `f32[] {` is a shape followed by a body.
  if (scanner.PeekRaw() == '{') {
    SEAM_ASSIGN_OR_RETURN(Layout layout, ParseLayout(scanner, shape.rank()));
    shape.set_layout(std::move(layout));
  }
  return shape;
}

}  // namespace

}  // namespace seam
