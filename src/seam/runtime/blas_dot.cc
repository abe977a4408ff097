#include "seam/runtime/blas_dot.h"

#include <cblas.h>

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "seam/ir/float16.h"

namespace seam::runtime {
namespace {

bool BlasType(DType t) {
  return t == DType::kF32 || t == DType::kF64 || t == DType::kBF16 || t == DType::kF16;
}

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

// `literal` as compute values of type C, its dimensions permuted to `order`.
template <typename C>
std::vector<C> Pack(const Literal& literal, const std::vector<int64_t>& order) {
  const Shape& shape = literal.shape();
  int64_t n = literal.element_count();
  std::vector<C> out(static_cast<size_t>(n));
  auto load = [&](int64_t i) -> C {
    switch (shape.dtype()) {
      case DType::kF32: return static_cast<C>(literal.data<float>()[i]);
      case DType::kF64: return static_cast<C>(literal.data<double>()[i]);
      case DType::kBF16: return static_cast<C>(BF16ToFloat(literal.data<uint16_t>()[i]));
      default: return static_cast<C>(HalfToFloat(literal.data<uint16_t>()[i]));
    }
  };
  bool identity = true;
  for (size_t k = 0; k < order.size(); ++k) identity &= order[k] == static_cast<int64_t>(k);
  if (identity) {
    for (int64_t i = 0; i < n; ++i) out[i] = load(i);
    return out;
  }
  int rank = shape.rank();
  std::vector<int64_t> strides(rank, 1);
  for (int d = rank - 2; d >= 0; --d) strides[d] = strides[d + 1] * shape.dim(d + 1);
  std::vector<int64_t> index(rank, 0);  // over the packed order
  for (int64_t o = 0; o < n; ++o) {
    int64_t source = 0;
    for (int k = 0; k < rank; ++k) source += index[k] * strides[order[k]];
    out[o] = load(source);
    for (int k = rank - 1; k >= 0; --k) {
      if (++index[k] < shape.dim(static_cast<int>(order[k]))) break;
      index[k] = 0;
    }
  }
  return out;
}

int64_t Product(const Shape& shape, const IntList& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= shape.dim(static_cast<int>(d));
  return p;
}

template <typename C>
void Gemm(int64_t batch, int64_t m, int64_t n, int64_t k, const C* a, const C* b, C* c) {
  for (int64_t i = 0; i < batch; ++i) {
    if constexpr (std::is_same_v<C, float>) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a + i * m * k, k,
                  b + i * k * n, n, 0.0f, c + i * m * n, n);
    } else {
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, a + i * m * k, k,
                  b + i * k * n, n, 0.0, c + i * m * n, n);
    }
  }
}

}  // namespace

bool BlasHandles(const Instruction& dot) {
  if (dot.opcode() != Opcode::kDot || !dot.shape().IsArray() || dot.shape().HasDynamicDims()) {
    return false;
  }
  DType out = dot.shape().dtype();
  DType a = dot.operand(0)->shape().dtype(), b = dot.operand(1)->shape().dtype();
  return BlasType(out) && BlasType(a) && BlasType(b) &&
         dot.attrs().FindVerbatim("sparsity") == nullptr;
}

absl::StatusOr<Literal> BlasDot(const Instruction& dot, const Literal& lhs, const Literal& rhs) {
  const Attributes& a = dot.attrs();
  IntList lb = a.lhs_batch_dims.value_or(IntList{}), rb = a.rhs_batch_dims.value_or(IntList{});
  IntList lc = a.lhs_contracting_dims.value_or(IntList{});
  IntList rc = a.rhs_contracting_dims.value_or(IntList{});
  int64_t batch = Product(lhs.shape(), lb);
  int64_t k = Product(lhs.shape(), lc);
  int64_t m = lhs.element_count() / std::max<int64_t>(1, batch * k);
  int64_t n = rhs.element_count() / std::max<int64_t>(1, batch * k);
  Literal out(dot.shape());
  if (out.element_count() == 0) return out;
  auto run = [&](auto zero) {
    using C = decltype(zero);
    std::vector<C> pa = Pack<C>(lhs, PackOrder(lhs.shape(), lb, lc, /*free_second=*/false));
    std::vector<C> pb = Pack<C>(rhs, PackOrder(rhs.shape(), rb, rc, /*free_second=*/true));
    std::vector<C> pc(static_cast<size_t>(batch * m * n));
    Gemm<C>(batch, m, n, k, pa.data(), pb.data(), pc.data());
    DType t = dot.shape().dtype();
    if ((t == DType::kF32 && std::is_same_v<C, float>) || (t == DType::kF64 && std::is_same_v<C, double>)) {
      std::memcpy(out.mutable_bytes().data(), pc.data(), pc.size() * sizeof(C));
      return;
    }
    for (int64_t i = 0; i < out.element_count(); ++i) out.SetDouble(i, static_cast<double>(pc[i]));
  };
  if (dot.shape().dtype() == DType::kF64) {
    run(0.0);
  } else {
    run(0.0f);
  }
  return out;
}

}  // namespace seam::runtime
