#include "seam/runtime/onednn_dot.h"

#include <algorithm>
#include <array>
#include <memory>
#include <numeric>
#include <optional>

#include "seam/eval/index_util.h"
#include "seam/ir/float16.h"
#include "seam/runtime/blas_dot.h"
#include "seam/runtime/blas_pack.h"
#include "seam/runtime/onednn.h"
#include "seam/runtime/thread_pool.h"

namespace seam::runtime {
namespace {

// A dot as oneDNN's matmul: [batch..., m, k] x [batch..., k, n] ->
// [batch..., m, n], every array given by strides over the HLO operand or
// result it is. A batch dimension of one operand only (a free dimension
// that does not merge into m or n) has extent 1 in the other.
struct MatmulStatement {
  DnnlArray src, weights, dst;
};

// Dimensions (extent, stride) that together index as one: each outer
// one's stride is the next one's stride times its extent. Extent-1
// dimensions are dropped first. None when they do not merge.
std::optional<std::pair<int64_t, int64_t>> Merge(std::vector<std::pair<int64_t, int64_t>> dims) {
  dims.erase(std::remove_if(dims.begin(), dims.end(), [](auto d) { return d.first == 1; }),
             dims.end());
  if (dims.empty()) return std::make_pair(int64_t{1}, int64_t{1});
  for (size_t i = 0; i + 1 < dims.size(); ++i) {
    if (dims[i].second != dims[i + 1].second * dims[i + 1].first) return std::nullopt;
  }
  int64_t extent = 1;
  for (auto [e, s] : dims) extent *= e;
  return std::make_pair(extent, dims.back().second);
}

std::optional<MatmulStatement> StateMatmul(const Instruction& dot, dnnl_data_type_t in_type,
                                           dnnl_data_type_t out_type) {
  const Attributes& a = dot.attrs();
  const Shape& lhs = dot.operand(0)->shape();
  const Shape& rhs = dot.operand(1)->shape();
  const IntList lb = a.lhs_batch_dims.value_or(IntList{}),
                rb = a.rhs_batch_dims.value_or(IntList{});
  const IntList lc = a.lhs_contracting_dims.value_or(IntList{});
  const IntList rc = a.rhs_contracting_dims.value_or(IntList{});
  const std::vector<int64_t> ls = RowMajorStrides(lhs.dims()), rs = RowMajorStrides(rhs.dims()),
                             os = RowMajorStrides(dot.shape().dims());
  auto free_dims = [](const Shape& shape, const IntList& batch, const IntList& contracting) {
    std::vector<int64_t> free;
    for (int64_t d = 0; d < shape.rank(); ++d) {
      if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
          std::find(contracting.begin(), contracting.end(), d) == contracting.end()) {
        free.push_back(d);
      }
    }
    return free;
  };
  const std::vector<int64_t> lf = free_dims(lhs, lb, lc), rf = free_dims(rhs, rb, rc);

  MatmulStatement st{{in_type, {}, {}}, {in_type, {}, {}}, {out_type, {}, {}}};
  auto add_batch = [&](int64_t src_extent, int64_t src_stride, int64_t weights_extent,
                       int64_t weights_stride, int64_t dst_extent, int64_t dst_stride) {
    st.src.dims.push_back(src_extent), st.src.strides.push_back(src_stride);
    st.weights.dims.push_back(weights_extent), st.weights.strides.push_back(weights_stride);
    st.dst.dims.push_back(dst_extent), st.dst.strides.push_back(dst_stride);
  };
  // The result's dimensions are [batch, lhs free, rhs free].
  for (size_t i = 0; i < lb.size(); ++i) {
    const int64_t extent = lhs.dim(static_cast<int>(lb[i]));
    add_batch(extent, ls[lb[i]], extent, rs[rb[i]], extent, os[i]);
  }
  // m: the longest run of lhs free dimensions, ending with the last, that
  // merges; those before it are batch dimensions of the lhs alone. n
  // likewise in the rhs.
  auto merge_free = [&](const Shape& shape, const std::vector<int64_t>& strides,
                        const std::vector<int64_t>& free, size_t& first_merged) {
    first_merged = free.size();
    std::pair<int64_t, int64_t> merged{1, 1};
    while (first_merged > 0) {
      std::vector<std::pair<int64_t, int64_t>> run;
      for (size_t j = first_merged - 1; j < free.size(); ++j) {
        run.push_back({shape.dim(static_cast<int>(free[j])), strides[free[j]]});
      }
      std::optional<std::pair<int64_t, int64_t>> wider = Merge(run);
      if (!wider) break;
      merged = *wider;
      --first_merged;
    }
    return merged;
  };
  size_t lhs_merged = 0, rhs_merged = 0;
  const auto [m, m_stride] = merge_free(lhs, ls, lf, lhs_merged);
  const auto [n, n_stride] = merge_free(rhs, rs, rf, rhs_merged);
  const size_t lhs_free_at = lb.size(), rhs_free_at = lb.size() + lf.size();
  for (size_t j = 0; j < lhs_merged; ++j) {
    const int64_t extent = lhs.dim(static_cast<int>(lf[j]));
    add_batch(extent, ls[lf[j]], 1, 1, extent, os[lhs_free_at + j]);
  }
  for (size_t j = 0; j < rhs_merged; ++j) {
    const int64_t extent = rhs.dim(static_cast<int>(rf[j]));
    add_batch(1, 1, extent, rs[rf[j]], extent, os[rhs_free_at + j]);
  }
  // In the result m's run is consecutive, ending where the rhs free
  // dimensions start; n's run is its innermost.
  const int64_t out_m_stride = lf.empty() ? n : os[rhs_free_at - 1];
  // k: the contracting pairs, outermost first in the lhs, merge in both.
  std::vector<size_t> pairs(lc.size());
  std::iota(pairs.begin(), pairs.end(), 0);
  std::sort(pairs.begin(), pairs.end(), [&](size_t x, size_t y) { return ls[lc[x]] > ls[lc[y]]; });
  std::vector<std::pair<int64_t, int64_t>> lk, rk;
  for (size_t p : pairs) {
    lk.push_back({lhs.dim(static_cast<int>(lc[p])), ls[lc[p]]});
    rk.push_back({rhs.dim(static_cast<int>(rc[p])), rs[rc[p]]});
  }
  const std::optional<std::pair<int64_t, int64_t>> lhs_k = Merge(lk), rhs_k = Merge(rk);
  if (!lhs_k || !rhs_k || lhs_k->first != rhs_k->first) return std::nullopt;
  const int64_t k = lhs_k->first;
  st.src.dims.insert(st.src.dims.end(), {m, k});
  st.src.strides.insert(st.src.strides.end(), {m_stride, lhs_k->second});
  st.weights.dims.insert(st.weights.dims.end(), {k, n});
  st.weights.strides.insert(st.weights.strides.end(), {rhs_k->second, n_stride});
  st.dst.dims.insert(st.dst.dims.end(), {m, n});
  st.dst.strides.insert(st.dst.strides.end(), {out_m_stride, 1});
  if (st.src.dims.size() == 2) {  // matmul wants the same rank everywhere, 3 at least here
    for (DnnlArray* array : {&st.src, &st.weights, &st.dst}) {
      array->dims.insert(array->dims.begin(), 1);
      array->strides.insert(array->strides.begin(), 1);
    }
  }
  // An extent-1 dimension's stride is never stepped; oneDNN still wants
  // it to span what is inside it.
  for (DnnlArray* array : {&st.src, &st.weights, &st.dst}) {
    for (size_t d = 0; d < array->dims.size(); ++d) {
      if (array->dims[d] != 1) continue;
      int64_t span = 1;
      for (size_t e = 0; e < array->dims.size(); ++e) {
        if (e != d) span = std::max(span, array->dims[e] * array->strides[e]);
      }
      array->strides[d] = span;
    }
  }
  return st;
}

// A product of many rows and few columns whose lhs is stored transposed
// ([k, m]: GPT-2's logits, [768,50257]' x [768,4]) runs as its transpose,
// c' = b' a', with that lhs as plain [k, m] weights, the form oneDNN's
// matmul streams fastest (12.0 -> 7.9-9.0 ms; the library alone 7.9 ms).
bool RunsTransposed(const DotAsGemm& g) {
  return g.batch == 1 && g.lhs_transposed && g.n <= 16 && g.m >= 256 * g.n;
}

// The dots oneDNN's matmul takes: bf16 ones (read as bf16, never widened);
// f32 ones OpenBLAS would need permuted copies of (GPT-2's attention dots:
// 0.49 ms with the copies, oneDNN on the strides 8.7x less), that are
// many tiny products (DLRM's 6272 6x6x8 ones: 3x faster than OpenBLAS call
// by call), that have few rows (m <= 16: GPT-2's batch-4 projections and
// resnet's classifier, 1.3-1.5x), few columns stored transposed (DLRM's
// [6272,192] x [15,192]': 0.49 -> 0.24 ms), a weight gradient of few
// columns summed over a long batch (DLRM's [6272,192]' x [6272,15]:
// 0.28-0.32 -> 0.16-0.19 ms, OpenBLAS sharing k) or run transposed (above);
// `seam_library_calls_bench` measured each against OpenBLAS.
std::optional<MatmulStatement> StateLibraryMatmul(const Instruction& dot) {
  if (!BlasHandles(dot)) return std::nullopt;
  const DType lhs = dot.operand(0)->shape().dtype(), rhs = dot.operand(1)->shape().dtype();
  const DType out = dot.shape().dtype();
  if (lhs == DType::kBF16 && rhs == DType::kBF16 && (out == DType::kBF16 || out == DType::kF32)) {
    return StateMatmul(dot, dnnl_bf16, out == DType::kBF16 ? dnnl_bf16 : dnnl_f32);
  }
  if (lhs == DType::kF32 && rhs == DType::kF32 && out == DType::kF32) {
    const DotAsGemm g = GemmOfDot(dot);
    const bool tiny_products = g.batch >= 64 && g.m * g.n * g.k <= 4096;
    const bool few_rows = g.m <= 16 && g.n >= 256;
    const bool few_stored_columns = g.rhs_transposed && g.n < 32 && g.m >= 256;
    const bool long_sum_few_columns = g.lhs_transposed && g.n < 32 && g.m >= 64 && g.k >= 16 * g.m;
    if (!g.InPlace() || tiny_products || few_rows || few_stored_columns || RunsTransposed(g) ||
        long_sum_few_columns) {
      return StateMatmul(dot, dnnl_f32, dnnl_f32);
    }
  }
  return std::nullopt;
}

// The same product the other way round, c' = b' a': the operands' roles
// swapped, the result [batch..., n, m] row-major (in scratch).
MatmulStatement Transposed(const MatmulStatement& st) {
  auto swap_last_two = [](DnnlArray array) {
    const size_t r = array.dims.size();
    std::swap(array.dims[r - 1], array.dims[r - 2]);
    std::swap(array.strides[r - 1], array.strides[r - 2]);
    return array;
  };
  MatmulStatement swapped{swap_last_two(st.weights), swap_last_two(st.src), swap_last_two(st.dst)};
  swapped.dst.strides = RowMajorStrides(swapped.dst.dims);
  return swapped;
}

}  // namespace

absl::StatusOr<std::function<absl::Status()>> OneDnnMatmulAlone(const Instruction& dot) {
  absl::StatusOr<const OneDnn*> library = LoadOneDnn();
  if (!library.ok()) return library.status();
  const OneDnn& d = **library;
  if (!BlasHandles(dot)) return absl::UnimplementedError("not a dot of float types");
  const DType in = dot.operand(0)->shape().dtype(), out = dot.shape().dtype();
  if ((in != DType::kF32 && in != DType::kBF16) || dot.operand(1)->shape().dtype() != in ||
      (out != DType::kF32 && out != in)) {
    return absl::UnimplementedError("oneDNN's matmul takes f32, or bf16 operands");
  }
  const dnnl_data_type_t in_type = in == DType::kF32 ? dnnl_f32 : dnnl_bf16;
  const dnnl_data_type_t out_type = out == DType::kF32 ? dnnl_f32 : dnnl_bf16;
  const DotAsGemm g = GemmOfDot(dot);
  const DnnlArray src{in_type, {g.batch, g.m, g.k}, {g.m * g.k, g.k, 1}};
  const DnnlArray dst{out_type, {g.batch, g.m, g.n}, {g.m * g.n, g.n, 1}};
  absl::StatusOr<dnnl_memory_desc_t> src_md = DescribePlain(d, src), dst_md = DescribePlain(d, dst);
  absl::StatusOr<dnnl_memory_desc_t> weights_md = DescribeAny(d, in_type, {g.batch, g.k, g.n});
  if (!src_md.ok() || !dst_md.ok() || !weights_md.ok()) {
    return absl::InvalidArgumentError("oneDNN: a matmul it cannot describe");
  }
  dnnl_matmul_desc_t desc;
  if (d.matmul_desc_init(&desc, &*src_md, &*weights_md, nullptr, &*dst_md) != dnnl_success) {
    return absl::InvalidArgumentError("oneDNN: a matmul it cannot describe");
  }
  const int team = ThreadPool::Global().size();
  absl::StatusOr<Primitive> matmul =
      CreatedForTeam<Primitive>(d, team, [&] { return CreatePrimitive(d, &desc); });
  if (!matmul.ok()) return matmul.status();
  const dnnl_memory_desc_t weights = matmul->Layout(DNNL_ARG_WEIGHTS);
  auto memory = std::make_shared<std::array<std::vector<uint8_t>, 3>>();
  (*memory)[0].assign(d.memory_desc_get_size(&*src_md), 0);
  (*memory)[1].assign(d.memory_desc_get_size(&weights), 0);
  (*memory)[2].assign(d.memory_desc_get_size(&*dst_md), 0);
  const Primitive p = *matmul;  // kept for the process, like every primitive
  const dnnl_memory_desc_t s_md = *src_md, d_md = *dst_md;
  return std::function<absl::Status()>([&d, p, s_md, weights, d_md, memory, team]() {
    return Execute(d, p,
                   {{DNNL_ARG_SRC, &s_md, (*memory)[0].data()},
                    {DNNL_ARG_WEIGHTS, &weights, (*memory)[1].data()},
                    {DNNL_ARG_DST, &d_md, (*memory)[2].data()}},
                   team);
  });
}

bool OneDnnDotServes(const Instruction& dot) { return StateLibraryMatmul(dot).has_value(); }

namespace {

// Runs `st` on a, b and c shared out over Seam's pool: by the outermost
// batch dimension both operands have when there are enough of them;
// otherwise by columns (the weights read once), or by rows when the
// columns are few. Applies `epilogue` to each share as it is written when
// the shares are ranges of the result it can follow; says whether it did.
// (On the 2-core AVX512-BF16 host measured, two threads of bf16 arithmetic
// ran each at half speed: Gemma's dots took as long on one.)
absl::StatusOr<bool> RunShared(const MatmulStatement& st, const uint8_t* a, const uint8_t* b,
                               uint8_t* c, int64_t elements, ResultEpilogue* epilogue) {
  ThreadPool& threads = ThreadPool::Global();
  const int parallelism = threads.Parallelism();
  const int rank = static_cast<int>(st.dst.dims.size());
  int split = rank - 1;  // n
  for (int d = 0; d < rank - 2; ++d) {
    if (st.dst.dims[d] >= parallelism) {
      split = d;
      break;
    }
  }
  if (split == rank - 1 && st.dst.dims[rank - 1] < 128) {
    // Too narrow to share by columns: by rows when there are enough and
    // the work is worth waking a thread for, else one call. (BERT's
    // 30522x16 products by rows: 2.4 -> 1.2 ms on two threads.)
    const int64_t m = st.dst.dims[rank - 2], n = st.dst.dims[rank - 1];
    const int64_t k = st.src.dims[rank - 1];
    split = m >= 128 && m * n * k >= kSerialGemmWork ? rank - 2 : -1;
  }
  const int64_t side = split < 0 ? 1 : st.dst.dims[split];
  const int64_t granule = split >= rank - 2 ? 64 : 1;
  const int64_t pieces =
      split < 0 ? 1 : std::max<int64_t>(1, std::min<int64_t>(parallelism, side / granule));
  const int64_t step =
      split < 0 ? side : ((side + pieces - 1) / pieces + granule - 1) / granule * granule;
  // Shares of an outer batch are row-major ranges of the result; shares
  // of its columns are ranges of its last dimension when that is n.
  const bool by_columns = split == rank - 1;
  const bool fused =
      epilogue != nullptr && split >= 0 &&
      (by_columns ? epilogue->columns == side
                  : ResultEpilogue::Contiguous(elements, side, st.dst.strides[split]));
  absl::Status shared = threads.ParallelForEach(pieces, [&](int64_t p) -> absl::Status {
    MatmulStatement share = st;
    const uint8_t *pa = a, *pb = b;
    uint8_t* pc = c;
    const int64_t lo = p * step, hi = std::min(side, lo + step);
    if (lo >= hi) return absl::OkStatus();
    if (split >= 0) {
      // Each array that has the dimension (an operand's broadcast
      // dimension has extent 1 and stays whole).
      auto narrow = [&](DnnlArray& array, auto*& data) {
        if (array.dims[split] == 1 && side > 1) return;
        array.dims[split] = hi - lo;
        data += lo * array.strides[split] * array.element_bytes();
      };
      if (split != rank - 1) narrow(share.src, pa);      // the lhs has no n
      if (split != rank - 2) narrow(share.weights, pb);  // nor the rhs m
      narrow(share.dst, pc);
    }
    absl::Status s = OneDnnMatmul(share.src, pa, share.weights, pb, share.dst, pc);
    if (s.ok() && fused) {
      if (by_columns) {
        epilogue->ApplyColumns(c, elements, lo, hi);
      } else {
        epilogue->ApplyRange(c, lo * st.dst.strides[split], hi * st.dst.strides[split]);
      }
    }
    return s;
  });
  if (!shared.ok()) return shared;
  return fused;
}

// Products this small in all (GPT-2's 48 one-element attention weights,
// 3K multiply-adds) cost less computed directly than a library call: the
// bound OpenBLAS's calls take too (kDirectGemmWork).
constexpr int64_t kDirectMatmulWork = kDirectGemmWork;

int64_t MatmulWork(const MatmulStatement& st) {
  const int64_t k = st.src.dims[st.dst.dims.size() - 1];
  return k * st.dst.element_count();
}

// `st` by plain loops over its strides, accumulating in f32 and rounding
// once into the result's type, on the calling thread.
void DirectMatmul(const MatmulStatement& st, const uint8_t* a, const uint8_t* b, uint8_t* c) {
  auto load = [](const DnnlArray& array, const uint8_t* data, int64_t at) -> float {
    if (array.type == dnnl_f32) return reinterpret_cast<const float*>(data)[at];
    return BF16ToFloat(reinterpret_cast<const uint16_t*>(data)[at]);
  };
  const int rank = static_cast<int>(st.dst.dims.size());
  const int64_t m = st.dst.dims[rank - 2], n = st.dst.dims[rank - 1], k = st.src.dims[rank - 1];
  std::vector<int64_t> batch(st.dst.dims.begin(), st.dst.dims.end() - 2);
  ForEachIndex(batch, [&](absl::Span<const int64_t> index, int64_t) {
    // Where this product starts in each array (an operand's extent-1
    // batch dimension is broadcast).
    int64_t sa = 0, sb = 0, sc = 0;
    for (size_t d = 0; d < index.size(); ++d) {
      if (st.src.dims[d] != 1) sa += index[d] * st.src.strides[d];
      if (st.weights.dims[d] != 1) sb += index[d] * st.weights.strides[d];
      sc += index[d] * st.dst.strides[d];
    }
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        float sum = 0;
        for (int64_t p = 0; p < k; ++p) {
          sum += load(st.src, a, sa + i * st.src.strides[rank - 2] + p * st.src.strides[rank - 1]) *
                 load(st.weights, b, sb + p * st.weights.strides[rank - 2] + j * st.weights.strides[rank - 1]);
        }
        const int64_t at = sc + i * st.dst.strides[rank - 2] + j * st.dst.strides[rank - 1];
        if (st.dst.type == dnnl_f32) {
          reinterpret_cast<float*>(c)[at] = sum;
        } else {
          reinterpret_cast<uint16_t*>(c)[at] = FloatToBF16(sum);
        }
      }
    }
  });
}

}  // namespace

absl::StatusOr<Literal> OneDnnDot(BufferPool& pool, const Instruction& dot, const Literal& lhs,
                                  const Literal& rhs, ResultEpilogue* epilogue) {
  const std::optional<MatmulStatement> st = StateLibraryMatmul(dot);
  if (!st) return absl::UnimplementedError("oneDNN's matmul has no form of this dot");
  if (absl::Status loaded = LoadOneDnn().status(); !loaded.ok()) return loaded;
  Literal out = pool.TakeLiteral(dot.shape());
  const auto* a = lhs.data<uint8_t>();
  const auto* b = rhs.data<uint8_t>();
  auto* c = out.mutable_data<uint8_t>();
  const int64_t elements = out.element_count();
  if (MatmulWork(*st) <= kDirectMatmulWork) {
    DirectMatmul(*st, a, b, c);
    return out;
  }
  if (RunsTransposed(GemmOfDot(dot))) {
    // c' into scratch, then transposed into c over the pool; the epilogue
    // follows the call.
    const MatmulStatement swapped = Transposed(*st);
    const int rank = static_cast<int>(swapped.dst.dims.size());
    const int64_t n = swapped.dst.dims[rank - 2], m = swapped.dst.dims[rank - 1];
    const size_t bytes = static_cast<size_t>(swapped.dst.element_bytes());
    PooledArray<uint8_t> scratch(pool, static_cast<size_t>(elements) * bytes);
    absl::StatusOr<bool> ran = RunShared(swapped, b, a, scratch.data(), elements, nullptr);
    if (!ran.ok()) return ran.status();
    auto transpose = [&](auto element) {
      using T = decltype(element);
      const T* from = reinterpret_cast<const T*>(scratch.data());
      T* to = reinterpret_cast<T*>(c);
      ThreadPool::Global().ParallelFor(m, 1024, [&](int64_t begin, int64_t end, int) {
        for (int64_t i = begin; i < end; ++i) {
          for (int64_t j = 0; j < n; ++j) to[i * n + j] = from[j * m + i];
        }
      });
    };
    if (bytes == 4) {
      transpose(float{});
    } else {
      transpose(uint16_t{});  // bf16
    }
    return out;
  }
  absl::StatusOr<bool> fused = RunShared(*st, a, b, c, elements, epilogue);
  if (!fused.ok()) return fused.status();
  if (*fused) epilogue->applied = true;
  return out;
}

}  // namespace seam::runtime
