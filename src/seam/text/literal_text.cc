#include "seam/text/literal_text.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "seam/ir/float16.h"
#include "seam/util/status_macros.h"

namespace seam {
namespace {

// True when finite `v` rounds to infinity in `dtype` (IEEE overflow). The
// f32 bound is checked first: casting a larger double to float is undefined.
bool Overflows(DType dtype, double v) {
  if (!std::isfinite(v) || dtype == DType::kF64 || dtype == DType::kC128) return false;
  constexpr double kF32Overflow = 0x1.ffffffp127;  // halfway from FLT_MAX to 2^128
  if (std::fabs(v) >= kF32Overflow) return true;
  float f = static_cast<float>(v);
  if (dtype == DType::kBF16) return std::isinf(BF16ToFloat(FloatToBF16(f)));
  if (dtype == DType::kF16) return std::isinf(HalfToFloat(FloatToHalf(f)));
  return false;
}

// A float element of `dtype` (or a part of a complex one); `inf` must be
// written as such, not as a number too large for the type.
absl::StatusOr<double> ParseFloat(Scanner& scanner, DType dtype) {
  size_t start = (scanner.SkipTrivia(), scanner.pos());
  SEAM_ASSIGN_OR_RETURN(double v, scanner.Double(DTypeName(dtype)));
  if (Overflows(dtype, v)) {
    return scanner.ErrorAtOffset(
        start, absl::StrCat("'", scanner.Text(start, scanner.pos()),
                            "' is out of range for ", DTypeName(dtype)));
  }
  return v;
}

std::string Plural(int64_t n, absl::string_view word) {
  return absl::StrCat(n, " ", word, n == 1 ? "" : "s");
}

absl::Status ParseElement(Scanner& scanner, Literal& literal, int64_t index) {
  DType dtype = literal.shape().dtype();
  size_t start = (scanner.SkipTrivia(), scanner.pos());
  if (dtype == DType::kPred) {
    if (scanner.TryConsume("true")) return literal.SetBits(index, 1), absl::OkStatus();
    if (scanner.TryConsume("false")) return literal.SetBits(index, 0), absl::OkStatus();
    SEAM_ASSIGN_OR_RETURN(int64_t v, scanner.Integer("true, false, 0 or 1"));
    if (v != 0 && v != 1) return scanner.ErrorAtOffset(start, "pred value must be 0 or 1");
    literal.SetBits(index, static_cast<uint64_t>(v));
    return absl::OkStatus();
  }
  if (IsComplex(dtype)) {
    SEAM_RETURN_IF_ERROR(scanner.Expect("("));
    DType part = dtype == DType::kC64 ? DType::kF32 : DType::kF64;
    SEAM_ASSIGN_OR_RETURN(double re, ParseFloat(scanner, part));
    SEAM_RETURN_IF_ERROR(scanner.Expect(","));
    SEAM_ASSIGN_OR_RETURN(double im, ParseFloat(scanner, part));
    SEAM_RETURN_IF_ERROR(scanner.Expect(")"));
    literal.SetComplex(index, {re, im});
    return absl::OkStatus();
  }
  if (IsFloat(dtype)) {
    SEAM_ASSIGN_OR_RETURN(double v, ParseFloat(scanner, dtype));
    literal.SetDouble(index, v);
    return absl::OkStatus();
  }
  // Integers: exact, range-checked against the element type.
  SEAM_ASSIGN_OR_RETURN(std::string text, scanner.NumberText());
  int bits = DTypeBits(dtype);
  if (IsUnsigned(dtype)) {
    uint64_t v = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || ptr != text.data() + text.size() ||
        (bits < 64 && v >> bits) != 0) {
      return scanner.ErrorAtOffset(
          start, absl::StrCat("'", text, "' is not a valid ", DTypeName(dtype), " value"));
    }
    literal.SetBits(index, v);
    return absl::OkStatus();
  }
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  int64_t limit = bits < 64 ? int64_t{1} << (bits - 1) : 0;
  if (ec != std::errc() || ptr != text.data() + text.size() ||
      (bits < 64 && (v < -limit || v >= limit))) {
    return scanner.ErrorAtOffset(
        start, absl::StrCat("'", text, "' is not a valid ", DTypeName(dtype), " value"));
  }
  literal.SetBits(index, static_cast<uint64_t>(v));
  return absl::OkStatus();
}

// Parses the nested braces for dimensions [dim, rank); `index` is the linear
// index of the first element of this sub-array.
absl::Status ParseNested(Scanner& scanner, Literal& literal, int dim,
                         int64_t index, int64_t stride) {
  const Shape& shape = literal.shape();
  if (dim == shape.rank()) return ParseElement(scanner, literal, index);
  size_t start = (scanner.SkipTrivia(), scanner.pos());
  SEAM_RETURN_IF_ERROR(scanner.Expect("{"));
  int64_t size = shape.dim(dim);
  int64_t inner = size == 0 ? 0 : stride / size;
  int64_t count = 0;
  if (!scanner.TryConsume("}")) {
    do {
      if (count < size) {
        SEAM_RETURN_IF_ERROR(
            ParseNested(scanner, literal, dim + 1, index + count * inner, inner));
      } else {
        return scanner.ErrorAtOffset(
            start, absl::StrCat("literal has more than ", Plural(size, "element"),
                                " in dimension ", dim));
      }
      ++count;
    } while (scanner.TryConsume(","));
    SEAM_RETURN_IF_ERROR(scanner.Expect("}"));
  }
  if (count != size) {
    return scanner.ErrorAtOffset(
        start, absl::StrCat("literal has ", Plural(count, "element"), " in dimension ",
                            dim, ", expected ", size));
  }
  return absl::OkStatus();
}

// The shortest decimal that reads back to the same value of `dtype`.
std::string FormatFloat(DType dtype, double value) {
  char buffer[64];
  if (dtype == DType::kF64) {
    return std::string(buffer, std::to_chars(buffer, buffer + sizeof(buffer), value).ptr);
  }
  float f = static_cast<float>(value);
  if (dtype == DType::kBF16 || dtype == DType::kF16) {
    auto narrow = [dtype](float x) {
      return dtype == DType::kBF16 ? FloatToBF16(x) : FloatToHalf(x);
    };
    if (std::isfinite(f)) {
      for (int digits = 1; digits < 9; ++digits) {
        std::snprintf(buffer, sizeof(buffer), "%.*g", digits, f);
        if (narrow(std::strtof(buffer, nullptr)) == narrow(f)) return buffer;
      }
    }
  }
  return std::string(buffer, std::to_chars(buffer, buffer + sizeof(buffer), f).ptr);
}

std::string PrintElement(const Literal& literal, int64_t i) {
  DType dtype = literal.shape().dtype();
  if (dtype == DType::kPred) return literal.GetBits(i) ? "true" : "false";
  if (IsComplex(dtype)) {
    std::complex<double> v = literal.GetComplex(i);
    DType part = dtype == DType::kC64 ? DType::kF32 : DType::kF64;
    return absl::StrCat("(", FormatFloat(part, v.real()), ", ",
                        FormatFloat(part, v.imag()), ")");
  }
  if (IsFloat(dtype)) return FormatFloat(dtype, literal.GetDouble(i));
  if (IsUnsigned(dtype)) return absl::StrCat(literal.GetBits(i));
  return absl::StrCat(literal.GetInt(i));
}

void PrintNested(const Literal& literal, int dim, int64_t index, int64_t stride,
                 std::string& out) {
  const Shape& shape = literal.shape();
  if (dim == shape.rank()) {
    out += PrintElement(literal, index);
    return;
  }
  bool innermost = dim + 1 == shape.rank();
  int64_t size = shape.dim(dim);
  int64_t inner = size == 0 ? 0 : stride / size;
  out += innermost ? "{" : "{ ";
  for (int64_t i = 0; i < size; ++i) {
    if (i > 0) out += ", ";
    PrintNested(literal, dim + 1, index + i * inner, inner, out);
  }
  out += innermost ? "}" : " }";
}

}  // namespace

absl::StatusOr<Literal> ParseLiteral(Scanner& scanner, const Shape& shape) {
  if (shape.IsTuple()) {
    // Element by element as the text holds them: a tuple allocated whole
    // first would allocate each element before its text is checked.
    SEAM_RETURN_IF_ERROR(scanner.Expect("("));
    std::vector<Literal> elements;
    for (size_t i = 0; i < shape.tuple_shapes().size(); ++i) {
      if (i > 0) SEAM_RETURN_IF_ERROR(scanner.Expect(","));
      SEAM_ASSIGN_OR_RETURN(Literal element, ParseLiteral(scanner, shape.tuple_shapes()[i]));
      elements.push_back(std::move(element));
    }
    SEAM_RETURN_IF_ERROR(scanner.Expect(")"));
    return Literal::Tuple(shape, std::move(elements));
  }
  if (scanner.TryConsume("{...}")) return Literal::Elided(shape);
  if (DTypeKindOf(shape.dtype()) == DTypeKind::kOpaque ||
      shape.dtype() == DType::kToken) {
    const size_t start = scanner.pos();
    SEAM_ASSIGN_OR_RETURN(std::string raw, scanner.RawUntilClosingParen());
    if (absl::StripAsciiWhitespace(raw).empty()) {
      return scanner.ErrorAtOffset(start, "a constant needs a value");
    }
    return Literal::Opaque(shape, raw);
  }
  if (!shape.ElementCount().has_value()) {
    return scanner.Error("a constant must have a static shape");
  }
  // Every element takes a character of text at least: a shape the text
  // cannot fill is refused before its buffer is allocated.
  const int64_t count = *shape.ElementCount();
  if (static_cast<uint64_t>(count) > scanner.remaining()) {
    return scanner.Error(absl::StrCat("a constant of shape ", shape.ToString(false), " has ", count,
                                      " elements; the text holds fewer"));
  }
  Literal literal(shape);
  SEAM_RETURN_IF_ERROR(ParseNested(scanner, literal, 0, 0, count));
  return literal;
}

std::string PrintLiteral(const Literal& literal) {
  if (literal.is_elided()) return "{...}";
  if (literal.is_opaque()) return literal.opaque_text();
  const Shape& shape = literal.shape();
  if (shape.IsTuple()) {
    std::string out = "(";
    for (size_t i = 0; i < literal.tuple_elements().size(); ++i) {
      if (i > 0) out += ", ";
      out += PrintLiteral(literal.tuple_elements()[i]);
    }
    return out + ")";
  }
  std::string out;
  PrintNested(literal, 0, 0, literal.element_count(), out);
  return out;
}

}  // namespace seam
