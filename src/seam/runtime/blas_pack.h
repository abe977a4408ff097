// What the BLAS-backed library calls (dot, convolution) share: operands
// converted to the compute type and permuted into the order the GEMM wants
// (no copy when they already are) in pooled memory, results scattered back into the output's
// layout and type, and one row-major GEMM entry point over float or double.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <type_traits>
#include <vector>

#include "absl/functional/function_ref.h"
#include "seam/ir/float16.h"
#include "seam/ir/instruction.h"
#include "seam/ir/literal.h"
#include "seam/runtime/buffer_pool.h"
#include "seam/runtime/openblas.h"
#include "seam/runtime/thread_pool.h"

namespace seam::runtime {

// Element types served through BLAS: bf16 and f16 compute in f32 and round
// once at the end, as XLA does.
inline bool BlasType(DType t) {
  return t == DType::kF32 || t == DType::kF64 || t == DType::kBF16 || t == DType::kF16;
}

// Whether BLAS's int sizes hold every dimension and leading dimension of
// a library call on `i`: they are bounded by the element counts of its
// operands and result (an im2col matrix by the output's and the kernel's).
// Larger calls run in the interpreter, listed as fallbacks.
inline bool FitsBlasInt(const Instruction& i) {
  constexpr int64_t kMax = 2147483647;
  bool fits = i.shape().ElementCount().value_or(kMax + 1) <= kMax;
  for (const Instruction* o : i.operands()) fits &= o->shape().ElementCount().value_or(kMax + 1) <= kMax;
  return fits;
}

// The compute type of a result of type `t`.
template <typename C>
constexpr bool IsComputeTypeOf(DType t) {
  return (t == DType::kF32 && std::is_same_v<C, float>) ||
         (t == DType::kF64 && std::is_same_v<C, double>);
}

inline bool IsIdentity(const std::vector<int64_t>& order) {
  for (size_t k = 0; k < order.size(); ++k) {
    if (order[k] != static_cast<int64_t>(k)) return false;
  }
  return true;
}

// Visits the elements of `shape` in the dimension order `order` (outermost
// first), as runs along the innermost of them: fn(packed index, source
// index, run length, source stride). Runs keep the copy loops tight.
template <typename Fn>
void ForEachPermutedRun(const Shape& shape, const std::vector<int64_t>& order, Fn&& fn) {
  const int rank = shape.rank();
  if (rank == 0) {
    fn(int64_t{0}, int64_t{0}, int64_t{1}, int64_t{1});
    return;
  }
  int64_t n = 1;
  std::vector<int64_t> strides(rank, 1);
  for (int d = rank - 1; d >= 0; --d) {
    strides[d] = n;
    n *= shape.dim(d);
  }
  if (n == 0) return;
  const int64_t inner = shape.dim(static_cast<int>(order[rank - 1]));
  const int64_t inner_stride = strides[order[rank - 1]];
  std::vector<int64_t> index(rank, 0);  // over the packed order
  int64_t source = 0;
  for (int64_t p = 0; p < n; p += inner) {
    fn(p, source, inner, inner_stride);
    for (int k = rank - 2; k >= 0; --k) {
      const int64_t d = order[k];
      source += strides[d];
      if (++index[k] < shape.dim(static_cast<int>(d))) break;
      source -= strides[d] * index[k];
      index[k] = 0;
    }
  }
}

// A literal's elements as type C with its dimensions permuted to `order`
// (outermost first). Borrows the literal's memory when nothing changes;
// otherwise packs into a pool buffer.
template <typename C>
class Packed {
 public:
  Packed(BufferPool& pool, const Literal& literal, const std::vector<int64_t>& order) {
    const Shape& shape = literal.shape();
    if (IsComputeTypeOf<C>(shape.dtype()) && IsIdentity(order)) {
      data_ = literal.data<C>();
      return;
    }
    owned_.emplace(pool, static_cast<size_t>(literal.element_count()));
    C* to = owned_->data();
    data_ = to;
    auto gather = [&](const auto* from, auto convert) {
      if (IsIdentity(order)) {  // a conversion only: flat and parallel
        ThreadPool::Global().ParallelFor(
            literal.element_count(), int64_t{1} << 16, [&](int64_t begin, int64_t end, int) {
#pragma omp simd
              for (int64_t i = begin; i < end; ++i) to[i] = convert(from[i]);
            });
        return;
      }
      ForEachPermutedRun(shape, order, [&](int64_t p, int64_t s, int64_t count, int64_t stride) {
        for (int64_t j = 0; j < count; ++j) to[p + j] = convert(from[s + j * stride]);
      });
    };
    switch (shape.dtype()) {
      case DType::kF32: gather(literal.data<float>(), [](float v) { return static_cast<C>(v); }); break;
      case DType::kF64: gather(literal.data<double>(), [](double v) { return static_cast<C>(v); }); break;
      case DType::kBF16:
        gather(literal.data<uint16_t>(), [](uint16_t v) { return static_cast<C>(BF16ToFloat(v)); });
        break;
      default:
        gather(literal.data<uint16_t>(), [](uint16_t v) { return static_cast<C>(HalfToFloat(v)); });
        break;
    }
  }
  const C* data() const { return data_; }

 private:
  std::optional<PooledArray<C>> owned_;
  const C* data_ = nullptr;
};

// A result computed as type C in `order`; Finish() gives it in the
// instruction's shape. Computes straight into the output when nothing
// changes.
template <typename C>
class PackedResult {
 public:
  PackedResult(BufferPool& pool, const Shape& shape, std::vector<int64_t> order)
      : out_(pool.TakeLiteral(shape)), order_(std::move(order)) {
    if (!IsComputeTypeOf<C>(shape.dtype()) || !IsIdentity(order_)) {
      owned_.emplace(pool, static_cast<size_t>(out_.element_count()));
    }
  }
  C* data() { return owned_ ? owned_->data() : out_.mutable_data<C>(); }
  // Whether data() is the result's own memory (nothing is scattered back).
  bool InPlace() const { return !owned_; }

  Literal Finish() && {
    if (!owned_) return std::move(out_);
    const C* from = owned_->data();
    auto scatter = [&](auto* to, auto convert) {
      ForEachPermutedRun(out_.shape(), order_, [&](int64_t p, int64_t t, int64_t count, int64_t stride) {
        for (int64_t j = 0; j < count; ++j) to[t + j * stride] = convert(from[p + j]);
      });
    };
    switch (out_.shape().dtype()) {
      case DType::kF32: scatter(out_.mutable_data<float>(), [](C v) { return static_cast<float>(v); }); break;
      case DType::kF64: scatter(out_.mutable_data<double>(), [](C v) { return static_cast<double>(v); }); break;
      case DType::kBF16:
        scatter(out_.mutable_data<uint16_t>(), [](C v) { return FloatToBF16(static_cast<float>(v)); });
        break;
      default:
        scatter(out_.mutable_data<uint16_t>(), [](C v) { return FloatToHalf(static_cast<float>(v)); });
        break;
    }
    return std::move(out_);
  }

 private:
  Literal out_;
  std::vector<int64_t> order_;
  std::optional<PooledArray<C>> owned_;
};

// A row-major matrix operand of a GEMM: its elements, leading dimension,
// and whether it is stored transposed.
template <typename C>
struct MatrixOperand {
  const C* data;
  int64_t ld;
  bool transposed = false;
};

// Products this small are computed directly: a BLAS call costs more than
// its arithmetic (DLRM's 6272 batched 6x8x6 products took 2-3 us a call).
constexpr int64_t kDirectGemmWork = 4096;

// c = a * b by plain loops, accumulating in C along k.
template <typename C>
void DirectGemm(int64_t m, int64_t n, int64_t k, MatrixOperand<C> a, MatrixOperand<C> b, C* c,
                int64_t ldc) {
  // Element (i, p) of a and (p, j) of b, whichever way each is stored.
  const int64_t a_row = a.transposed ? 1 : a.ld, a_col = a.transposed ? a.ld : 1;
  const int64_t b_row = b.transposed ? 1 : b.ld, b_col = b.transposed ? b.ld : 1;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      C sum = 0;
      for (int64_t p = 0; p < k; ++p) sum += a.data[i * a_row + p * a_col] * b.data[p * b_row + j * b_col];
      c[i * ldc + j] = sum;
    }
  }
}

// c[m x n] = a[m x k] * b[k x n], row-major, on the calling thread.
// OpenBLAS must have loaded (HostBlasServes checks).
template <typename C>
void SerialGemm(int64_t m, int64_t n, int64_t k, MatrixOperand<C> a, MatrixOperand<C> b, C* c,
                int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (m * n * k <= kDirectGemmWork) {
    DirectGemm(m, n, k, a, b, c, ldc);
    return;
  }
  const OpenBlas& blas = **LoadOpenBlas();
  std::unique_lock<std::mutex> serial;
  if (!blas.reentrant) serial = std::unique_lock<std::mutex>(SerialBlasCalls());
  const CBLAS_TRANSPOSE ta = a.transposed ? CblasTrans : CblasNoTrans;
  const CBLAS_TRANSPOSE tb = b.transposed ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<C, float>) {
    blas.sgemm(CblasRowMajor, ta, tb, m, n, k, 1.0f, a.data, a.ld, b.data, b.ld, 0.0f, c, ldc);
  } else {
    blas.dgemm(CblasRowMajor, ta, tb, m, n, k, 1.0, a.data, a.ld, b.data, b.ld, 0.0, c, ldc);
  }
}

// Below this many multiply-adds a product is not worth splitting.
constexpr int64_t kSerialGemmWork = int64_t{1} << 20;

// Told rows [row_lo, row_hi) x columns [column_lo, column_hi) of a
// product's result as soon as they are written.
using PieceWritten =
    absl::FunctionRef<void(int64_t row_lo, int64_t row_hi, int64_t column_lo, int64_t column_hi)>;

// The same on the pool: the longer of c's sides is cut into one piece per
// thread (whole multiples of 16, what BLAS kernels block by). Small
// products, and products inside a pool loop, run on the calling thread.
// Tells `written`, when given, of every piece on the thread that wrote it,
// as it is written.
template <typename C>
void Gemm(int64_t m, int64_t n, int64_t k, MatrixOperand<C> a, MatrixOperand<C> b, C* c,
          int64_t ldc, const PieceWritten* written = nullptr) {
  ThreadPool& pool = ThreadPool::Global();
  // A long sum into a small result (a weight gradient over a batch) is
  // shared along k: each thread sums its part into a partial result of
  // its own, added up after. (DLRM's [6272,192]' x [6272,15]: 2.0x -> 1.8x
  // its library alone, by rows before.) Its only extra work is adding m x n
  // partials, so it pays from an eighth of the work a split by rows needs
  // (DLRM's [6272,8]' x [6272,8]: 14 -> 7-8 us).
  const int64_t threads = pool.Parallelism();
  const int64_t k_pieces = std::min<int64_t>(threads, k / 1024);
  if (k_pieces >= 2 && k >= 16 * std::max(m, n) && m * n * k >= kSerialGemmWork / 8) {
    const int64_t step = (k + k_pieces - 1) / k_pieces;
    std::vector<C> partial(static_cast<size_t>((k_pieces - 1) * m * n));
    pool.ParallelFor(k_pieces, 1, [&](int64_t begin, int64_t end, int) {
      for (int64_t p = begin; p < end; ++p) {
        const int64_t lo = p * step, hi = std::min(k, lo + step);
        MatrixOperand<C> a_part = a, b_part = b;
        a_part.data += a.transposed ? lo * a.ld : lo;
        b_part.data += b.transposed ? lo : lo * b.ld;
        C* out = p == 0 ? c : partial.data() + (p - 1) * m * n;
        SerialGemm(m, n, hi - lo, a_part, b_part, out, p == 0 ? ldc : n);
      }
    });
    for (int64_t p = 1; p < k_pieces; ++p) {
      const C* part = partial.data() + (p - 1) * m * n;
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) c[i * ldc + j] += part[i * n + j];
      }
    }
    if (written != nullptr) (*written)(0, m, 0, n);
    return;
  }
  const bool by_rows = m >= n;
  const int64_t side = by_rows ? m : n;
  const int64_t pieces = std::min<int64_t>(threads, side / 16);
  if (pieces < 2 || m * n * k < kSerialGemmWork) {
    SerialGemm(m, n, k, a, b, c, ldc);
    if (written != nullptr) (*written)(0, m, 0, n);
    return;
  }
  const int64_t step = ((side + pieces - 1) / pieces + 15) / 16 * 16;
  pool.ParallelFor(pieces, 1, [&](int64_t begin, int64_t end, int) {
    for (int64_t p = begin; p < end; ++p) {
      const int64_t lo = p * step, hi = std::min(side, lo + step);
      if (lo >= hi) continue;
      if (by_rows) {
        MatrixOperand<C> rows = a;
        rows.data += a.transposed ? lo : lo * a.ld;
        SerialGemm(hi - lo, n, k, rows, b, c + lo * ldc, ldc);
        if (written != nullptr) (*written)(lo, hi, 0, n);
      } else {
        MatrixOperand<C> columns = b;
        columns.data += b.transposed ? lo * b.ld : lo;
        SerialGemm(m, hi - lo, k, a, columns, c + lo, ldc);
        if (written != nullptr) (*written)(0, m, lo, hi);
      }
    }
  });
}

}  // namespace seam::runtime
