#include "seam/eval/random_fill.h"

#include <cmath>
#include <complex>

#include "seam/eval/scalar_ops.h"
#include "seam/ir/float16.h"
#include "seam/util/fnv1a.h"

namespace seam {
namespace {

using scalar::SplitMix64;

// Uniform in [-1, 1) from the top 53 bits.
double UnitSigned(uint64_t bits) {
  return static_cast<double>(bits >> 11) * 0x1.0p-52 - 1.0;
}

// The element bits of position i of a stream from `base`.
uint64_t ElementBits(uint64_t base, int64_t i) {
  return SplitMix64(base ^ static_cast<uint64_t>(i) * 0xd1b54a32d192ed03ull);
}

// The same values as the per-element setters, written straight into the
// array (a billion-parameter model's random inputs took seconds through
// them).
template <typename T, typename FromUnit>
void FillFloats(Literal& literal, uint64_t base, FromUnit from_unit) {
  T* data = literal.mutable_data<T>();
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    data[i] = from_unit(UnitSigned(ElementBits(base, i)));
  }
}

}  // namespace

void FillRandom(Literal& literal, uint64_t seed) {
  const Shape& shape = literal.shape();
  if (shape.IsTuple()) {
    auto& elements = literal.mutable_tuple_elements();
    for (size_t i = 0; i < elements.size(); ++i) {
      FillRandom(elements[i], SplitMix64(seed + i));
    }
    return;
  }
  if (literal.is_elided() || literal.is_opaque() || !shape.IsArray()) return;
  DType dtype = shape.dtype();
  uint64_t base = SplitMix64(seed);
  switch (dtype) {
    case DType::kF32:
      return FillFloats<float>(literal, base, [](double u) { return static_cast<float>(u); });
    case DType::kF64:
      return FillFloats<double>(literal, base, [](double u) { return u; });
    case DType::kBF16:
      return FillFloats<uint16_t>(literal, base,
                                  [](double u) { return FloatToBF16(static_cast<float>(u)); });
    default:
      break;
  }
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    uint64_t bits = ElementBits(base, i);
    if (dtype == DType::kPred) {
      literal.SetBits(i, bits >> 63);
    } else if (IsComplex(dtype)) {
      literal.SetComplex(i, {UnitSigned(bits), UnitSigned(SplitMix64(bits))});
    } else if (IsFloat(dtype)) {
      literal.SetDouble(i, UnitSigned(bits));
    } else {
      literal.SetBits(i, bits >> 61);  // [0, 8)
    }
  }
}

void NudgeByOneUlp(Literal& literal, uint64_t seed) {
  const Shape& shape = literal.shape();
  if (shape.IsTuple()) {
    auto& elements = literal.mutable_tuple_elements();
    for (size_t i = 0; i < elements.size(); ++i) NudgeByOneUlp(elements[i], SplitMix64(seed + i));
    return;
  }
  if (literal.is_elided() || literal.is_opaque() || !shape.IsArray() || !IsFloat(shape.dtype()) ||
      IsComplex(shape.dtype())) {
    return;
  }
  const int bits_wide = 8 * static_cast<int>(DTypeByteSize(shape.dtype()));
  const uint64_t magnitude_mask = (uint64_t{1} << (bits_wide - 1)) - 1;
  uint64_t base = SplitMix64(seed);
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    const double value = literal.GetDouble(i);
    if (value == 0 || !std::isfinite(value)) continue;
    const uint64_t bits = literal.GetBits(i);
    const uint64_t magnitude = bits & magnitude_mask;
    // Sign and magnitude: one more or one less in the magnitude is the next
    // representable value away from or towards zero.
    const bool up = (SplitMix64(base ^ static_cast<uint64_t>(i)) >> 63) != 0;
    literal.SetBits(i, (bits & ~magnitude_mask) | (up ? magnitude + 1 : magnitude - 1));
    if (!std::isfinite(literal.GetDouble(i))) {  // past the largest: down instead
      literal.SetBits(i, (bits & ~magnitude_mask) | (magnitude - 1));
    }
  }
}

void FillElided(Literal& literal, absl::string_view name) { FillRandom(literal, Fnv1a(name)); }

Literal ElidedConstantData(const Instruction& constant) {
  const std::string& identity = constant.literal()->elided_identity();
  Literal filled(constant.shape());
  FillElided(filled, identity.empty() ? constant.name() : identity);
  return filled;
}

void FillElidedConstants(Module& module) {
  for (const std::unique_ptr<Computation>& computation : module.computations()) {
    for (const std::unique_ptr<Instruction>& i : computation->instructions()) {
      const Literal* literal = i->literal();
      if (i->opcode() != Opcode::kConstant || literal == nullptr || !literal->is_elided()) continue;
      i->set_literal(ElidedConstantData(*i));
    }
  }
}

}  // namespace seam
