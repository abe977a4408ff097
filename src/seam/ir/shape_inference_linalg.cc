// Shape inference for the library ops outside dots and convolutions, as
// XLA's operation semantics define them:
//   topk(x), k:             (T[..., k], s32[..., k]), k at most x's last dimension
//   cholesky(a):            a, whose last two dimensions are equal
//   triangular-solve(a, b): b, a square in its last two dimensions matching
//                           b's (the second last with left_side, else the last)
//   fft(x), fft_length=L:   FFT/IFFT keep the complex x; RFFT takes real x,
//                           its last dimension becoming L[-1]/2+1 complex
//                           values; IRFFT the inverse. x's trailing
//                           dimensions are L (IRFFT: with L[-1]/2+1 last).
#include <algorithm>

#include "seam/ir/shape_inference_util.h"
#include "seam/util/status_macros.h"

namespace seam::shape_inference_internal {
namespace {

Inferred InferTopK(const Instruction& i) {
  const Shape& x = In(i, 0);
  SEAM_ASSIGN_OR_RETURN(const int64_t* k, Require(i, i.attrs().k, "k"));
  if (!x.IsArray() || x.rank() == 0)
    return Invalid(Op(i), " needs an array of rank 1 or more, got ", Str(x));
  const int64_t last = x.dim(x.rank() - 1);
  if (*k < 0 || *k > last) {
    return Invalid("k=", *k, " of ", Op(i), " is outside [0, ", last, "], the last dimension of ",
                   Str(x));
  }
  std::vector<int64_t> dims = x.dims();
  dims.back() = *k;
  return Shape::Tuple({Shape::Array(x.dtype(), dims), Shape::Array(DType::kS32, dims)});
}

// A batch of square matrices in the last two dimensions.
absl::Status CheckSquare(const Instruction& i, const Shape& a, absl::string_view what) {
  if (!a.IsArray() || a.rank() < 2 || a.dim(a.rank() - 1) != a.dim(a.rank() - 2) ||
      !(IsFloat(a.dtype()) || IsComplex(a.dtype()))) {
    return Invalid(what, " of ", Op(i),
                   " must be float or complex matrices, square in the last two dimensions, got ",
                   Str(a));
  }
  return absl::OkStatus();
}

Inferred InferCholesky(const Instruction& i) {
  SEAM_RETURN_IF_ERROR(CheckSquare(i, In(i, 0), "the operand"));
  return In(i, 0);
}

Inferred InferTriangularSolve(const Instruction& i) {
  const Shape& a = In(i, 0);
  const Shape& b = In(i, 1);
  SEAM_RETURN_IF_ERROR(CheckSquare(i, a, "operand 0"));
  const bool left = i.attrs().left_side.value_or(false);
  const int64_t n = a.dim(a.rank() - 1);
  const bool fits = b.IsArray() && b.dtype() == a.dtype() && b.rank() == a.rank() &&
                    std::equal(a.dims().begin(), a.dims().end() - 2, b.dims().begin()) &&
                    b.dim(b.rank() - (left ? 2 : 1)) == n;
  if (!fits) {
    return Invalid("operand 1 of ", Op(i), " must be ", DTypeName(a.dtype()), " with ", Str(a),
                   "'s batch dimensions and ", n, " in its ", left ? "second last" : "last",
                   " dimension (left_side=", left ? "true" : "false", "), got ", Str(b));
  }
  return b;
}

Inferred InferFft(const Instruction& i) {
  const Shape& x = In(i, 0);
  SEAM_ASSIGN_OR_RETURN(const Identifier* type, Require(i, i.attrs().fft_type, "fft_type"));
  SEAM_ASSIGN_OR_RETURN(const IntList* lengths, Require(i, i.attrs().fft_length, "fft_length"));
  const int64_t n = static_cast<int64_t>(lengths->size());
  if (!x.IsArray() || n < 1 || n > 3 || x.rank() < n) {
    return Invalid(Op(i), " transforms 1 to 3 trailing dimensions of an array: fft_length=",
                   List(*lengths), " on ", Str(x));
  }
  const bool real_in = type->text == "RFFT", real_out = type->text == "IRFFT";
  if (!real_in && !real_out && type->text != "FFT" && type->text != "IFFT") {
    return Invalid("fft_type=", type->text, " of ", Op(i), " is not FFT, IFFT, RFFT or IRFFT");
  }
  if (real_in ? !(x.dtype() == DType::kF32 || x.dtype() == DType::kF64) : !IsComplex(x.dtype())) {
    return Invalid(type->text, " of ", Op(i), " takes ", real_in ? "f32 or f64" : "c64 or c128",
                   ", got ", Str(x));
  }
  // The trailing dimensions the transform reads, and those it writes.
  std::vector<int64_t> in = *lengths, out = *lengths;
  const int64_t half = lengths->back() / 2 + 1;
  if (real_in) out.back() = half;
  if (real_out) in.back() = half;
  for (int64_t k = 0; k < n; ++k) {
    if (x.dim(static_cast<int>(x.rank() - n + k)) != in[k]) {
      return Invalid(type->text, " of ", Op(i), " with fft_length=", List(*lengths),
                     " needs trailing dimensions ", List(in), ", got ", Str(x));
    }
  }
  std::vector<int64_t> dims = x.dims();
  std::copy(out.begin(), out.end(), dims.end() - n);
  DType result = x.dtype();
  if (real_in) result = x.dtype() == DType::kF32 ? DType::kC64 : DType::kC128;
  if (real_out) result = x.dtype() == DType::kC64 ? DType::kF32 : DType::kF64;
  return Shape::Array(result, dims);
}

}  // namespace

Inferred InferLinearAlgebra(const Instruction& i) {
  switch (i.opcode()) {
    case Opcode::kTopK:
      return InferTopK(i);
    case Opcode::kCholesky:
      return InferCholesky(i);
    case Opcode::kTriangularSolve:
      return InferTriangularSolve(i);
    case Opcode::kFft:
      return InferFft(i);
    default:
      return std::nullopt;
  }
}

}  // namespace seam::shape_inference_internal
