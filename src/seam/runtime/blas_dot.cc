#include "seam/runtime/blas_dot.h"

#include <algorithm>
#include <numeric>
#include <tuple>

#include "seam/runtime/blas_pack.h"
#include "seam/runtime/onednn_dot.h"

namespace seam::runtime {
namespace {

// The operand's dimensions in the order [batch..., first..., second...]:
// the permutation packing it as a 3-D [B, X, Y] matrix stack.
std::vector<int64_t> PackOrder(const Shape& shape, const IntList& batch, const IntList& second,
                               bool free_second) {
  std::vector<int64_t> order(batch.begin(), batch.end());
  std::vector<int64_t> free;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
        std::find(second.begin(), second.end(), d) == second.end()) {
      free.push_back(d);
    }
  }
  if (free_second) {
    order.insert(order.end(), second.begin(), second.end());
    order.insert(order.end(), free.begin(), free.end());
  } else {
    order.insert(order.end(), free.begin(), free.end());
    order.insert(order.end(), second.begin(), second.end());
  }
  return order;
}

int64_t Product(const Shape& shape, const IntList& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= shape.dim(static_cast<int>(d));
  return p;
}

}  // namespace

bool BlasHandles(const Instruction& dot) {
  if (dot.opcode() != Opcode::kDot || !dot.shape().IsArray() || dot.shape().HasDynamicDims()) {
    return false;
  }
  DType out = dot.shape().dtype();
  DType a = dot.operand(0)->shape().dtype(), b = dot.operand(1)->shape().dtype();
  return BlasType(out) && BlasType(a) && BlasType(b) && FitsBlasInt(dot) &&
         dot.attrs().FindVerbatim("sparsity") == nullptr;
}

bool DotAsGemm::InPlace() const { return IsIdentity(lhs_order) && IsIdentity(rhs_order); }

DotAsGemm GemmOfDot(const Instruction& dot) {
  const Attributes& a = dot.attrs();
  const Shape& lhs = dot.operand(0)->shape();
  const Shape& rhs = dot.operand(1)->shape();
  IntList lb = a.lhs_batch_dims.value_or(IntList{}), rb = a.rhs_batch_dims.value_or(IntList{});
  IntList lc = a.lhs_contracting_dims.value_or(IntList{});
  IntList rc = a.rhs_contracting_dims.value_or(IntList{});
  DotAsGemm g;
  g.batch = Product(lhs, lb);
  g.k = Product(lhs, lc);
  g.m = lhs.ElementCount().value_or(0) / std::max<int64_t>(1, g.batch * g.k);
  g.n = rhs.ElementCount().value_or(0) / std::max<int64_t>(1, g.batch * g.k);
  // Each operand is read in place when its layout already is a matrix
  // stack, either way round; otherwise it is packed.
  auto choose = [](const Shape& shape, const IntList& batch, const IntList& contracting,
                   bool contracting_first) {
    std::vector<int64_t> plain = PackOrder(shape, batch, contracting, contracting_first);
    std::vector<int64_t> swapped = PackOrder(shape, batch, contracting, !contracting_first);
    bool transposed = !IsIdentity(plain) && IsIdentity(swapped);
    return std::make_pair(transposed ? swapped : plain, transposed);
  };
  std::tie(g.lhs_order, g.lhs_transposed) = choose(lhs, lb, lc, /*contracting_first=*/false);
  std::tie(g.rhs_order, g.rhs_transposed) = choose(rhs, rb, rc, /*contracting_first=*/true);
  return g;
}

absl::StatusOr<Literal> BlasDot(BufferPool& pool, const Instruction& dot, const Literal& lhs,
                                const Literal& rhs, ResultEpilogue* epilogue) {
  if (absl::Status loaded = LoadOpenBlas().status(); !loaded.ok()) return loaded;
  if (lhs.element_count() == 0 || rhs.element_count() == 0) {
    return Literal(dot.shape());  // zeros
  }
  // oneDNN where it takes the dot (bf16 read as it is, f32 dots OpenBLAS
  // would need copies for); OpenBLAS otherwise, and without oneDNN.
  if (absl::StatusOr<Literal> direct = OneDnnDot(pool, dot, lhs, rhs, epilogue); direct.ok()) {
    return direct;
  }
  const DotAsGemm g = GemmOfDot(dot);
  const int64_t batch = g.batch, m = g.m, n = g.n, k = g.k;
  const bool lhs_transposed = g.lhs_transposed, rhs_transposed = g.rhs_transposed;
  auto run = [&](auto zero) {
    using C = decltype(zero);
    Packed<C> pa(pool, lhs, g.lhs_order);
    Packed<C> pb(pool, rhs, g.rhs_order);
    std::vector<int64_t> identity(dot.shape().rank());
    std::iota(identity.begin(), identity.end(), 0);
    PackedResult<C> out(pool, dot.shape(), std::move(identity));
    // The epilogue runs on each piece of a product as it is written, when
    // the pieces are the result's own and their columns its last
    // dimension's (or whole rows).
    const bool fused = epilogue != nullptr && out.InPlace() && epilogue->columns == n;
    C* const c = out.data();
    auto products = [&](int64_t begin, int64_t end, int) {
      for (int64_t i = begin; i < end; ++i) {
        auto piece = [&](int64_t row_lo, int64_t row_hi, int64_t column_lo, int64_t column_hi) {
          epilogue->apply(c, (i * m + row_lo) * n, (i * m + row_hi) * n, column_lo, column_hi);
        };
        const PieceWritten written(piece);
        Gemm<C>(m, n, k, {pa.data() + i * m * k, lhs_transposed ? m : k, lhs_transposed},
                {pb.data() + i * k * n, rhs_transposed ? k : n, rhs_transposed}, c + i * m * n, n,
                fused ? &written : nullptr);
      }
    };
    // Many products, or small ones, go to threads whole; a few large ones
    // are split each.
    ThreadPool& threads = ThreadPool::Global();
    if (batch >= 4 * threads.size() || (batch > 1 && m * n * k < kSerialGemmWork)) {
      threads.ParallelFor(batch, 1, products);
    } else {
      products(0, batch, 0);
    }
    if (fused) epilogue->applied = true;
    return std::move(out).Finish();
  };
  if (dot.shape().dtype() == DType::kF64) return run(0.0);
  return run(0.0f);
}

}  // namespace seam::runtime
