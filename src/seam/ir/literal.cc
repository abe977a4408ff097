#include "seam/ir/literal.h"

#include <cstdlib>
#include <cstring>

#include "seam/ir/float16.h"
#include "seam/util/status_macros.h"

namespace seam {

Literal::Literal(Shape shape) : shape_(std::move(shape)) {
  if (shape_.IsTuple()) {
    for (const Shape& element : shape_.tuple_shapes()) {
      elements_.emplace_back(element);
    }
    return;
  }
  element_count_ = shape_.ElementCount().value_or(0);
  bytes_.assign(element_count_ * DTypeByteSize(shape_.dtype()), 0);
}

Literal Literal::Tuple(Shape shape, std::vector<Literal> elements) {
  Literal literal(Shape::Tuple({}));
  literal.shape_ = std::move(shape);
  literal.elements_ = std::move(elements);
  return literal;
}

Literal Literal::Uninitialized(Shape shape) {
  Literal literal(Shape::Tuple({}));
  literal.shape_ = std::move(shape);
  literal.element_count_ = literal.shape_.ElementCount().value_or(0);
  literal.bytes_.resize(literal.element_count_ * DTypeByteSize(literal.shape_.dtype()));
  return literal;
}

Literal Literal::FromBytes(Shape shape, ByteBuffer bytes) {
  Literal literal(Shape::Tuple({}));
  literal.shape_ = std::move(shape);
  literal.element_count_ = literal.shape_.ElementCount().value_or(0);
  literal.bytes_ = std::move(bytes);
  literal.bytes_.resize(literal.element_count_ * DTypeByteSize(literal.shape_.dtype()));
  return literal;
}

Literal Literal::Elided(Shape shape) {
  Literal literal(Shape::Tuple({}));
  literal.shape_ = std::move(shape);
  literal.elided_ = true;
  return literal;
}

Literal Literal::Opaque(Shape shape, std::string text) {
  Literal literal = Elided(std::move(shape));
  literal.elided_ = false;
  literal.opaque_text_ = std::move(text);
  return literal;
}

uint64_t Literal::GetBits(int64_t i) const {
  int size = DTypeByteSize(shape_.dtype());
  SEAM_CHECK(i >= 0 && i < element_count_ && size <= 8);
  uint64_t bits = 0;
  std::memcpy(&bits, bytes_.data() + i * size, size);  // little-endian host
  return bits;
}

void Literal::SetBits(int64_t i, uint64_t bits) {
  int size = DTypeByteSize(shape_.dtype());
  SEAM_CHECK(i >= 0 && i < element_count_ && size <= 8);
  std::memcpy(bytes_.data() + i * size, &bits, size);
}

int64_t Literal::GetInt(int64_t i) const {
  uint64_t bits = GetBits(i);
  int width = DTypeByteSize(shape_.dtype()) * 8;
  if (IsSigned(shape_.dtype()) && width < 64) {
    uint64_t sign = uint64_t{1} << (width - 1);
    return static_cast<int64_t>((bits ^ sign) - sign);
  }
  return static_cast<int64_t>(bits);
}

double Literal::GetDouble(int64_t i) const {
  uint64_t bits = GetBits(i);
  switch (shape_.dtype()) {
    case DType::kBF16: return BF16ToFloat(static_cast<uint16_t>(bits));
    case DType::kF16: return HalfToFloat(static_cast<uint16_t>(bits));
    case DType::kF32: {
      float f;
      uint32_t b32 = static_cast<uint32_t>(bits);
      std::memcpy(&f, &b32, 4);
      return f;
    }
    case DType::kF64: {
      double d;
      std::memcpy(&d, &bits, 8);
      return d;
    }
    default:
      if (IsUnsigned(shape_.dtype()) || IsPred(shape_.dtype())) {
        return static_cast<double>(bits);
      }
      return static_cast<double>(GetInt(i));
  }
}

void Literal::SetDouble(int64_t i, double value) {
  switch (shape_.dtype()) {
    case DType::kBF16: SetBits(i, FloatToBF16(static_cast<float>(value))); return;
    case DType::kF16: SetBits(i, FloatToHalf(static_cast<float>(value))); return;
    case DType::kF32: {
      float f = static_cast<float>(value);
      uint32_t b32;
      std::memcpy(&b32, &f, 4);
      SetBits(i, b32);
      return;
    }
    case DType::kF64: {
      uint64_t b64;
      std::memcpy(&b64, &value, 8);
      SetBits(i, b64);
      return;
    }
    default:
      SetBits(i, static_cast<uint64_t>(static_cast<int64_t>(value)));
  }
}

std::complex<double> Literal::GetComplex(int64_t i) const {
  SEAM_CHECK(i >= 0 && i < element_count_);
  if (shape_.dtype() == DType::kC64) {
    float parts[2];
    std::memcpy(parts, bytes_.data() + i * 8, 8);
    return {parts[0], parts[1]};
  }
  double parts[2];
  std::memcpy(parts, bytes_.data() + i * 16, 16);
  return {parts[0], parts[1]};
}

void Literal::SetComplex(int64_t i, std::complex<double> value) {
  SEAM_CHECK(i >= 0 && i < element_count_);
  if (shape_.dtype() == DType::kC64) {
    float parts[2] = {static_cast<float>(value.real()),
                      static_cast<float>(value.imag())};
    std::memcpy(bytes_.data() + i * 8, parts, 8);
    return;
  }
  double parts[2] = {value.real(), value.imag()};
  std::memcpy(bytes_.data() + i * 16, parts, 16);
}

}  // namespace seam
