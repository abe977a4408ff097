#include "seam/runtime/blas_dot.h"

#include <algorithm>
#include <numeric>

#include "seam/runtime/blas_pack.h"

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

absl::StatusOr<Literal> BlasDot(BufferPool& pool, const Instruction& dot, const Literal& lhs,
                                const Literal& rhs) {
  const Attributes& a = dot.attrs();
  IntList lb = a.lhs_batch_dims.value_or(IntList{}), rb = a.rhs_batch_dims.value_or(IntList{});
  IntList lc = a.lhs_contracting_dims.value_or(IntList{});
  IntList rc = a.rhs_contracting_dims.value_or(IntList{});
  int64_t batch = Product(lhs.shape(), lb);
  int64_t k = Product(lhs.shape(), lc);
  int64_t m = lhs.element_count() / std::max<int64_t>(1, batch * k);
  int64_t n = rhs.element_count() / std::max<int64_t>(1, batch * k);
  if (lhs.element_count() == 0 || rhs.element_count() == 0) {
    return Literal(dot.shape());  // zeros
  }
  // Each operand is read in place when its layout already is a matrix
  // stack, either way round (BLAS transposes); otherwise it is packed.
  auto choose = [](const Shape& shape, const IntList& batch, const IntList& contracting,
                   bool contracting_first) {
    std::vector<int64_t> plain = PackOrder(shape, batch, contracting, contracting_first);
    std::vector<int64_t> swapped = PackOrder(shape, batch, contracting, !contracting_first);
    bool transposed = !IsIdentity(plain) && IsIdentity(swapped);
    return std::make_pair(transposed ? swapped : plain, transposed);
  };
  auto [lhs_order, lhs_transposed] = choose(lhs.shape(), lb, lc, /*contracting_first=*/false);
  auto [rhs_order, rhs_transposed] = choose(rhs.shape(), rb, rc, /*contracting_first=*/true);
  auto run = [&](auto zero) {
    using C = decltype(zero);
    Packed<C> pa(pool, lhs, lhs_order);
    Packed<C> pb(pool, rhs, rhs_order);
    // The result of [batch, m, k] x [batch, k, n] is already in the dot's
    // dimension order: batch, lhs free, rhs free.
    std::vector<int64_t> identity(dot.shape().rank());
    std::iota(identity.begin(), identity.end(), 0);
    PackedResult<C> out(pool, dot.shape(), std::move(identity));
    for (int64_t i = 0; i < batch; ++i) {
      Gemm<C>(m, n, k, {pa.data() + i * m * k, lhs_transposed ? m : k, lhs_transposed},
              {pb.data() + i * k * n, rhs_transposed ? k : n, rhs_transposed}, out.data() + i * m * n, n);
    }
    return std::move(out).Finish();
  };
  if (dot.shape().dtype() == DType::kF64) return run(0.0);
  return run(0.0f);
}

}  // namespace seam::runtime
