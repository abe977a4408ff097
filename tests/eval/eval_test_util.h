// Helpers for the interpreter's per-opcode unit tests: build literals with
// exact bit patterns, run a tiny HLO module through Evaluator, and read the
// result back. Expected values in the tests are worked out by hand from XLA's
// operation semantics, never computed with the code under test.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "seam/eval/evaluator.h"
#include "seam/ir/literal.h"
#include "seam/ir/shape.h"
#include "seam/text/parser.h"

namespace seam::evaltest {

// ---------------------------------------------------------------- literals

// Elements set from two's-complement values (truncated to the element width).
inline Literal FromBits(DType type, std::vector<int64_t> dims, const std::vector<uint64_t>& bits) {
  Literal out(Shape::Array(type, std::move(dims)));
  EXPECT_EQ(out.element_count(), static_cast<int64_t>(bits.size())) << "literal size";
  for (int64_t i = 0; i < out.element_count() && i < static_cast<int64_t>(bits.size()); ++i) {
    out.SetBits(i, bits[i]);
  }
  return out;
}

inline Literal FromInts(DType type, std::vector<int64_t> dims, const std::vector<int64_t>& values) {
  std::vector<uint64_t> bits(values.begin(), values.end());
  return FromBits(type, std::move(dims), bits);
}

// A rank-1 integer (or pred) literal.
inline Literal Ints(DType type, const std::vector<int64_t>& values) {
  return FromInts(type, {static_cast<int64_t>(values.size())}, values);
}
inline Literal IntScalar(DType type, int64_t value) { return FromInts(type, {}, {value}); }

inline uint32_t F32Bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
inline float BitsF32(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// f32 elements, bit-exact (NaN payloads and signed zeros kept).
inline Literal F32(std::vector<int64_t> dims, const std::vector<float>& values) {
  std::vector<uint64_t> bits;
  for (float v : values) bits.push_back(F32Bits(v));
  return FromBits(DType::kF32, std::move(dims), bits);
}
inline Literal F32(const std::vector<float>& values) {
  return F32({static_cast<int64_t>(values.size())}, values);
}
inline Literal F32Scalar(float value) { return F32({}, {value}); }

inline Literal F64(const std::vector<double>& values) {
  std::vector<uint64_t> bits;
  for (double v : values) {
    uint64_t b;
    std::memcpy(&b, &v, 8);
    bits.push_back(b);
  }
  return FromBits(DType::kF64, {static_cast<int64_t>(values.size())}, bits);
}

// bf16 or f16 elements given as their 16 bits.
inline Literal Half(DType type, const std::vector<uint16_t>& bits) {
  return FromBits(type, {static_cast<int64_t>(bits.size())},
                  std::vector<uint64_t>(bits.begin(), bits.end()));
}

// ---------------------------------------------------------------- reading

inline std::vector<uint64_t> BitsOf(const Literal& value) {
  std::vector<uint64_t> out;
  for (int64_t i = 0; i < value.element_count(); ++i) out.push_back(value.GetBits(i));
  return out;
}
// Signed types sign-extended, unsigned types zero-extended.
inline std::vector<int64_t> IntsOf(const Literal& value) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < value.element_count(); ++i) out.push_back(value.GetInt(i));
  return out;
}
// Any float type, widened exactly to double.
inline std::vector<double> FloatsOf(const Literal& value) {
  std::vector<double> out;
  for (int64_t i = 0; i < value.element_count(); ++i) out.push_back(value.GetDouble(i));
  return out;
}

// Float vectors equal element for element: NaN matches any NaN, zeros must
// have the same sign, everything else compares exactly.
inline ::testing::AssertionResult SameFloats(const std::vector<double>& got,
                                             const std::vector<double>& want) {
  if (got.size() != want.size()) {
    return ::testing::AssertionFailure()
           << "got " << got.size() << " elements, want " << want.size();
  }
  std::string diffs;
  for (size_t i = 0; i < got.size(); ++i) {
    double g = got[i], w = want[i];
    bool same = std::isnan(w) ? std::isnan(g) : (g == w && std::signbit(g) == std::signbit(w));
    if (!same) absl::StrAppend(&diffs, absl::StrFormat("\n  [%d]: got %.17g, want %.17g", i, g, w));
  }
  if (diffs.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "elements differ:" << diffs;
}

inline ::testing::AssertionResult SameFloats(const Literal& got, const std::vector<double>& want) {
  return SameFloats(FloatsOf(got), want);
}

// ---------------------------------------------------------------- running

// Parses `text` (one module) and runs its entry on `arguments`.
inline absl::StatusOr<Literal> RunHlo(const std::string& text,
                                      const std::vector<Literal>& arguments) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text, "test.hlo");
  if (!module.ok()) return module.status();
  if (absl::Status status = CheckInterpretable(**module); !status.ok()) return status;
  Evaluator evaluator;
  return evaluator.Run(**module, arguments);
}

// Runs a module whose entry is
//   p<i> = <shape of arguments[i]> parameter(i)
//   ROOT r = <result_shape> <op>(p0, p1, ...)<attributes>
// preceded by `computations` (e.g. a comparator named in the attributes).
inline std::string OpModule(const std::string& result_shape, const std::string& op,
                            const std::vector<Literal>& arguments,
                            const std::string& attributes = "",
                            const std::string& computations = "") {
  std::string text = absl::StrCat("HloModule test\n\n", computations, "\nENTRY e {\n");
  std::string operands;
  for (size_t i = 0; i < arguments.size(); ++i) {
    absl::StrAppend(&text, "  p", i, " = ", arguments[i].shape().ToString(false), " parameter(", i,
                    ")\n");
    absl::StrAppend(&operands, i ? ", " : "", "p", i);
  }
  absl::StrAppend(&text, "  ROOT r = ", result_shape, " ", op, "(", operands, ")",
                  attributes.empty() ? "" : ", ", attributes, "\n}\n");
  return text;
}

inline absl::StatusOr<Literal> RunOp(const std::string& result_shape, const std::string& op,
                                     const std::vector<Literal>& arguments,
                                     const std::string& attributes = "",
                                     const std::string& computations = "") {
  return RunHlo(OpModule(result_shape, op, arguments, attributes, computations), arguments);
}

// Unwraps a run that must succeed; on failure records it and returns an empty
// tuple, so the caller's comparisons fail too.
inline Literal Ok(absl::StatusOr<Literal> result) {
  EXPECT_TRUE(result.ok()) << result.status();
  if (!result.ok()) return Literal(Shape::Tuple({}));
  return *std::move(result);
}

// Named scalar computations for to_apply= and comparator attributes.
inline std::string BinaryComputation(const std::string& name, const std::string& type,
                                     const std::string& op) {
  return absl::StrCat(name, " {\n  a = ", type, "[] parameter(0)\n  b = ", type,
                      "[] parameter(1)\n  ROOT c = ", type, "[] ", op, "(a, b)\n}\n");
}
// A sort comparator on operand 0 only (further operands ride along).
inline std::string Comparator(const std::string& name, const std::vector<std::string>& types,
                              const std::string& direction, const std::string& compare_type = "") {
  std::string text = absl::StrCat(name, " {\n");
  for (size_t i = 0; i < types.size(); ++i) {
    absl::StrAppend(&text, "  x", 2 * i, " = ", types[i], "[] parameter(", 2 * i, ")\n", "  x",
                    2 * i + 1, " = ", types[i], "[] parameter(", 2 * i + 1, ")\n");
  }
  absl::StrAppend(&text, "  ROOT lt = pred[] compare(x0, x1), direction=", direction,
                  compare_type.empty() ? "" : ", type=", compare_type, "\n}\n");
  return text;
}

// Frequently used values.
inline const float kInf = INFINITY;
inline const float kNaN = NAN;
inline const double kInfD = INFINITY;
inline const double kNaND = NAN;

}  // namespace seam::evaltest
