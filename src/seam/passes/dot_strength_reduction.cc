// dot-strength-reduction: a small dot one of whose operands is a vector
// (every non-batch, non-contracting dimension of size 1: a query against a
// KV cache at decode, [1,4,12,64] x [128,4,12,64], or the weights against
// the values) becomes
//   reduce(multiply(matrix, broadcast(vector)), add) over the contracting dims
// in the matrix's own dimension order, then a transpose/reshape to the
// dot's result, as XLA's algebraic simplifier strength-reduces such dots.
// Such a product does a few multiply-adds per element it reads, so it is
// memory-bound: as a reduction it joins the stitched kernels (which read
// the matrix once, contiguously, on every thread) instead of a library
// call with its fixed cost and its own copies of strided operands.
//
// bf16 and f16 dots multiply and sum in f32 and round once at the end, as
// the library calls do. Left alone: dots of more than kMaxWork
// multiply-adds (a large matrix-vector product, such as an LM head, is the
// library's: its blocking keeps the sum's order short and it streams the
// weights at full bandwidth), dots whose matrix the kernel would read in
// pieces shorter than a vector (ReadsRowsWhole), integer dots, sparse and
// dynamic ones.
#include <algorithm>

#include "seam/passes/expander_util.h"
#include "seam/passes/pass.h"

namespace seam {
namespace {

// Above this many multiply-adds a dot stays a library call. GPT-2's
// per-head decode dots are 393K.
constexpr int64_t kMaxWork = int64_t{1} << 19;

int64_t IndexOf(const IntList& list, int64_t d) {
  return std::find(list.begin(), list.end(), d) - list.begin();
}

struct Side {
  Instruction* operand;
  IntList batch, contracting;
};

// Whether every dimension of `s` outside its batch and contracting dims
// has size 1.
bool IsVector(const Side& s) {
  for (int d = 0; d < s.operand->shape().rank(); ++d) {
    if (!Contains(s.batch, d) && !Contains(s.contracting, d) && s.operand->shape().dim(d) != 1) {
      return false;
    }
  }
  return true;
}

// The dot's two sides as the matrix, read as it lies, and the vector,
// broadcast along it (when both are vectors, the rhs is the matrix: either
// works). The vector is the lhs when the lhs is one.
struct MatrixAndVector {
  Side matrix, vector;
};
MatrixAndVector SidesOf(const Instruction& dot) {
  const Attributes& a = dot.attrs();
  Side lhs{dot.operand(0), a.lhs_batch_dims.value_or(IntList{}),
           a.lhs_contracting_dims.value_or(IntList{})};
  Side rhs{dot.operand(1), a.rhs_batch_dims.value_or(IntList{}),
           a.rhs_contracting_dims.value_or(IntList{})};
  if (IsVector(lhs)) return {std::move(rhs), std::move(lhs)};
  return {std::move(lhs), std::move(rhs)};
}

// Whether the stitched kernel reads the matrix `s` a vector at a time:
// when it contracts its innermost dims (sums along rows), or keeps an
// innermost dim of at least 8 elements (sums across rows, the weights
// times the values at decode: its kernel loops over that dim inside the
// others, so the vector is loaded once per run of it).
bool ReadsRowsWhole(const Side& s) {
  const int64_t rank = s.operand->shape().rank();
  bool sums_along_rows = true;
  for (int64_t d = rank - static_cast<int64_t>(s.contracting.size()); d < rank; ++d) {
    sums_along_rows &= Contains(s.contracting, d);
  }
  return sums_along_rows || (!Contains(s.contracting, rank - 1) &&
                             s.operand->shape().dim(static_cast<int>(rank - 1)) >= 8);
}

// The type the products are summed in: f64 for f64 dots, else f32.
std::optional<DType> SumType(const Instruction& dot) {
  auto half_or_single = [](DType t) {
    return t == DType::kF32 || t == DType::kBF16 || t == DType::kF16;
  };
  const DType out = dot.shape().dtype();
  const DType l = dot.operand(0)->shape().dtype(), r = dot.operand(1)->shape().dtype();
  if (out == DType::kF64 && l == DType::kF64 && r == DType::kF64) return DType::kF64;
  if (half_or_single(out) && half_or_single(l) && half_or_single(r)) return DType::kF32;
  return std::nullopt;
}

bool Reducible(const Instruction& dot) {
  if (dot.opcode() != Opcode::kDot || dot.operand_count() != 2 ||
      dot.attrs().FindVerbatim("sparsity") != nullptr || !expand::IsStaticArray(dot.shape()) ||
      !expand::IsStaticArray(dot.operand(0)->shape()) ||
      !expand::IsStaticArray(dot.operand(1)->shape()) || !SumType(dot)) {
    return false;
  }
  const auto [matrix, vector] = SidesOf(dot);
  if (matrix.contracting.empty() || matrix.batch.size() != vector.batch.size() ||
      matrix.contracting.size() != vector.contracting.size() || !IsVector(vector) ||
      !ReadsRowsWhole(matrix)) {
    return false;
  }
  // Multiply-adds: the result's elements times the contracted extent.
  int64_t k = 1;
  for (int64_t d : matrix.contracting) k *= matrix.operand->shape().dim(static_cast<int>(d));
  const std::optional<int64_t> elements = dot.shape().ElementCount();
  return elements && *elements <= kMaxWork / std::max<int64_t>(1, k);
}

Instruction* Reduce(expand::Rewriter& rewriter, HloBuilder& b, Instruction* dot) {
  const auto [matrix, vector] = SidesOf(*dot);
  const DType sum = *SumType(*dot);
  const Shape& ms = matrix.operand->shape();

  // The vector's batch and contracting dims in the order their partners
  // appear in the matrix, and where those partners are.
  std::vector<int64_t> keep;
  IntList at;
  for (int64_t d = 0; d < ms.rank(); ++d) {
    if (Contains(matrix.batch, d)) {
      keep.push_back(vector.batch[IndexOf(matrix.batch, d)]);
      at.push_back(d);
    } else if (Contains(matrix.contracting, d)) {
      keep.push_back(vector.contracting[IndexOf(matrix.contracting, d)]);
      at.push_back(d);
    }
  }
  Instruction* v = KeepDims(b, vector.operand, keep);
  Instruction* m = matrix.operand;
  if (v->shape().dtype() != sum) v = b.Convert(v, sum);
  if (m->shape().dtype() != sum) m = b.Convert(m, sum);
  Instruction* products = b.Binary(Opcode::kMultiply, m, b.Broadcast(v, ms.dims(), at));
  Instruction* sums = b.Reduce(products, b.ScalarConstant(sum, 0), matrix.contracting,
                               rewriter.ScalarReducer(Opcode::kAdd, sum));

  // `sums` holds the matrix's batch and free dims in the matrix's order;
  // the dot's result lists batch dims in the dot's order, then the free
  // ones (the vector's, all of size 1, on its side).
  IntList kept;  // matrix dims left in `sums`, in order
  for (int64_t d = 0; d < ms.rank(); ++d) {
    if (!Contains(matrix.contracting, d)) kept.push_back(d);
  }
  IntList order;
  for (int64_t d : matrix.batch) order.push_back(IndexOf(kept, d));
  for (int64_t d : kept) {
    if (!Contains(matrix.batch, d)) order.push_back(IndexOf(kept, d));
  }
  Instruction* result = expand::IsIota(order) ? sums : b.Transpose(sums, order);
  if (result->shape().dims() != dot->shape().dims()) {
    result = b.Reshape(result, dot->shape().dims());
  }
  if (dot->shape().dtype() != sum) result = b.Convert(result, dot->shape().dtype());
  return result;
}

class DotStrengthReductionPass : public Pass {
 public:
  absl::StatusOr<bool> Run(Module& module) override {
    expand::Rewriter rewriter(module);
    bool changed = false;
    for (Instruction* i : rewriter.Instructions(Opcode::kDot)) {
      if (!Reducible(*i)) continue;
      HloBuilder b = rewriter.Builder(*i->parent());
      rewriter.ReplaceWithNew(i, Reduce(rewriter, b, i));
      changed = true;
    }
    rewriter.Flush();
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeDotStrengthReductionPass() {
  return std::make_unique<DotStrengthReductionPass>();
}

}  // namespace seam
