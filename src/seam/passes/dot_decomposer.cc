// dot-decomposer: puts every dot in the canonical form
//   lhs [batch..., M, K] x rhs [batch..., K, N] -> [batch..., M, N]
// (batch dimensions leading, exactly one contracting and one non-contracting
// dimension per side), with transposes and reshapes around it and a reshape
// of the result back to the original shape, as XLA's DotDecomposer does. The
// code generator and the cost model then only meet batched matrix products.
// Contracting dimensions are flattened in their listed order, which is the
// order the interpreter sums in, so results are bit-identical. A side with no
// non-contracting (or no contracting) dimension gets one of size 1.
//
// Left alone: canonical dots (so the pass is idempotent), sparse dots
// (`sparsity=`), and bounded dynamic shapes.
#include <algorithm>

#include "seam/passes/expander_util.h"
#include "seam/passes/pass.h"

namespace seam {
namespace {

IntList FreeDims(int rank, const IntList& batch, const IntList& contracting) {
  IntList free;
  for (int d = 0; d < rank; ++d) {
    if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
        std::find(contracting.begin(), contracting.end(), d) == contracting.end()) {
      free.push_back(d);
    }
  }
  return free;
}

int64_t Product(const Shape& shape, const IntList& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= shape.dim(static_cast<int>(d));
  return n;
}

IntList Join(std::initializer_list<const IntList*> lists) {
  IntList all;
  for (const IntList* list : lists) all.insert(all.end(), list->begin(), list->end());
  return all;
}

struct DotDims {
  IntList lb, lc, rb, rc;
  explicit DotDims(const Attributes& a)
      : lb(a.lhs_batch_dims.value_or(IntList{})),
        lc(a.lhs_contracting_dims.value_or(IntList{})),
        rb(a.rhs_batch_dims.value_or(IntList{})),
        rc(a.rhs_contracting_dims.value_or(IntList{})) {}
};

bool IsCanonical(const Instruction& dot) {
  DotDims d(dot.attrs());
  int64_t nb = static_cast<int64_t>(d.lb.size());
  return dot.operand(0)->shape().rank() == nb + 2 && dot.operand(1)->shape().rank() == nb + 2 &&
         expand::IsIota(d.lb) && expand::IsIota(d.rb) && d.lc == IntList{nb + 1} &&
         d.rc == IntList{nb};
}

bool Decomposable(const Instruction& dot) {
  if (dot.opcode() != Opcode::kDot || dot.operand_count() != 2 ||
      dot.attrs().FindVerbatim("sparsity") != nullptr || !expand::IsStaticArray(dot.shape()) ||
      !expand::IsStaticArray(dot.operand(0)->shape()) ||
      !expand::IsStaticArray(dot.operand(1)->shape())) {
    return false;
  }
  DotDims d(dot.attrs());
  return d.lb.size() == d.rb.size() && d.lc.size() == d.rc.size() && !IsCanonical(dot);
}

// Transposes `x` by `perm` and reshapes it to `dims`, skipping no-ops.
Instruction* Arrange(HloBuilder& b, Instruction* x, const IntList& perm,
                     const std::vector<int64_t>& dims) {
  if (!expand::IsIota(perm)) x = b.Transpose(x, perm);
  if (x->shape().dims() != dims) x = b.Reshape(x, dims);
  return x;
}

Instruction* Decompose(HloBuilder& b, Instruction* dot) {
  Instruction* lhs = dot->operand(0);
  Instruction* rhs = dot->operand(1);
  const Shape& ls = lhs->shape();
  const Shape& rs = rhs->shape();
  DotDims d(dot->attrs());
  IntList lf = FreeDims(ls.rank(), d.lb, d.lc);
  IntList rf = FreeDims(rs.rank(), d.rb, d.rc);
  std::vector<int64_t> batch;
  for (int64_t k : d.lb) batch.push_back(ls.dim(static_cast<int>(k)));
  int64_t m = Product(ls, lf), k = Product(ls, d.lc), n = Product(rs, rf);
  auto with = [&](std::vector<int64_t> dims, int64_t x, int64_t y) {
    dims.push_back(x);
    dims.push_back(y);
    return dims;
  };
  Instruction* new_lhs = Arrange(b, lhs, Join({&d.lb, &lf, &d.lc}), with(batch, m, k));
  Instruction* new_rhs = Arrange(b, rhs, Join({&d.rb, &d.rc, &rf}), with(batch, k, n));
  Instruction* canonical = b.Clone(*dot, {new_lhs, new_rhs});
  canonical->mutable_shape() = Shape::Array(dot->shape().dtype(), with(batch, m, n));
  int64_t nb = static_cast<int64_t>(batch.size());
  Attributes& a = canonical->mutable_attrs();
  a.lhs_batch_dims = a.rhs_batch_dims = std::nullopt;
  if (nb > 0) {
    IntList leading;
    for (int64_t i = 0; i < nb; ++i) leading.push_back(i);
    a.lhs_batch_dims = a.rhs_batch_dims = leading;
  }
  a.lhs_contracting_dims = IntList{nb + 1};
  a.rhs_contracting_dims = IntList{nb};
  if (canonical->shape().dims() == dot->shape().dims()) return canonical;
  return b.Reshape(canonical, dot->shape().dims());
}

class DotDecomposerPass : public Pass {
 public:
  absl::StatusOr<bool> Run(Module& module) override {
    expand::Rewriter rewriter(module);
    bool changed = false;
    for (Instruction* i : rewriter.Instructions(Opcode::kDot)) {
      if (!Decomposable(*i)) continue;
      HloBuilder b = rewriter.Builder(*i->parent());
      rewriter.ReplaceWithNew(i, Decompose(b, i));
      changed = true;
    }
    rewriter.Flush();
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeDotDecomposerPass() { return std::make_unique<DotDecomposerPass>(); }

}  // namespace seam
