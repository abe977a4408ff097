#include "seam/runtime/onednn_block_copy.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "seam/runtime/thread_pool.h"

namespace seam::runtime {
namespace {

int64_t ElementBytes(dnnl_data_type_t type) {
  switch (type) {
    case dnnl_f32:
    case dnnl_s32:
      return 4;
    case dnnl_bf16:
    case dnnl_f16:
      return 2;
    case dnnl_s8:
    case dnnl_u8:
      return 1;
    default:
      return 0;
  }
}

// Whether `md` is a blocked (or plain) layout of the whole array, starting
// at its first element.
bool WholeArray(const dnnl_memory_desc_t& md) {
  if (md.format_kind != dnnl_blocked || md.offset0 != 0 || md.extra.flags != 0) return false;
  if (md.ndims < 1 || md.ndims > DNNL_MAX_NDIMS) return false;
  for (int d = 0; d < md.ndims; ++d) {
    if (md.padded_offsets[d] != 0 || md.dims[d] <= 0) return false;
  }
  return true;
}

// Copies `blocks` runs of `bytes` (the last `last_bytes` long, the rest of
// it zeroed) from consecutive places `bytes` apart in `from` to places
// `stride_bytes` apart in `to`. Whole blocks of the common sizes are
// copied by constant-size moves the compiler inlines.
template <int64_t kBytes>
void CopyRunsOf(int64_t blocks, int64_t last_bytes, const char* from, char* to,
                int64_t stride_bytes) {
  for (int64_t b = 0; b + 1 < blocks; ++b) {
    std::memcpy(to + b * stride_bytes, from + b * kBytes, kBytes);
  }
  char* last = to + (blocks - 1) * stride_bytes;
  std::memcpy(last, from + (blocks - 1) * kBytes, static_cast<size_t>(last_bytes));
  std::memset(last + last_bytes, 0, static_cast<size_t>(kBytes - last_bytes));
}

void CopyRuns(int64_t bytes, int64_t blocks, int64_t last_bytes, const char* from, char* to,
              int64_t stride_bytes) {
  switch (bytes) {
    case 64:
      return CopyRunsOf<64>(blocks, last_bytes, from, to, stride_bytes);
    case 128:
      return CopyRunsOf<128>(blocks, last_bytes, from, to, stride_bytes);
    case 192:
      return CopyRunsOf<192>(blocks, last_bytes, from, to, stride_bytes);
    case 256:
      return CopyRunsOf<256>(blocks, last_bytes, from, to, stride_bytes);
    default:
      break;
  }
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t n = b + 1 < blocks ? bytes : last_bytes;
    std::memcpy(to + b * stride_bytes, from + b * bytes, static_cast<size_t>(n));
    std::memset(to + b * stride_bytes + n, 0, static_cast<size_t>(bytes - n));
  }
}

}  // namespace

bool CopiesIntoBlocks(const dnnl_memory_desc_t& plain, const dnnl_memory_desc_t& blocked) {
  if (!WholeArray(plain) || !WholeArray(blocked) || plain.ndims != blocked.ndims ||
      plain.data_type != blocked.data_type || ElementBytes(plain.data_type) == 0) {
    return false;
  }
  const dnnl_blocking_desc_t& p = plain.format_desc.blocking;
  const dnnl_blocking_desc_t& b = blocked.format_desc.blocking;
  if (p.inner_nblks != 0 || b.inner_nblks != 1) return false;
  const int blocked_dim = static_cast<int>(b.inner_idxs[0]);
  const int64_t block = b.inner_blks[0];
  if (blocked_dim < 0 || blocked_dim >= plain.ndims || block < 1 || p.strides[blocked_dim] != 1) {
    return false;
  }
  for (int d = 0; d < plain.ndims; ++d) {
    if (plain.dims[d] != blocked.dims[d] || plain.padded_dims[d] != plain.dims[d]) return false;
    const int64_t padded =
        d == blocked_dim ? (plain.dims[d] + block - 1) / block * block : plain.dims[d];
    if (blocked.padded_dims[d] != padded) return false;
  }
  return true;
}

void CopyIntoBlocks(const dnnl_memory_desc_t& plain, const void* from,
                    const dnnl_memory_desc_t& blocked, void* to) {
  const dnnl_blocking_desc_t& p = plain.format_desc.blocking;
  const dnnl_blocking_desc_t& b = blocked.format_desc.blocking;
  const int blocked_dim = static_cast<int>(b.inner_idxs[0]);
  const int64_t block = b.inner_blks[0];
  const int64_t element = ElementBytes(plain.data_type);
  const int64_t extent = plain.dims[blocked_dim];
  const int64_t blocks = (extent + block - 1) / block;
  const int64_t last_bytes = (extent - (blocks - 1) * block) * element;
  // A row: the elements along the blocked dimension at one index of the
  // others, visited in the order the plain array stores them.
  std::vector<int> others;
  for (int d = 0; d < plain.ndims; ++d) {
    if (d != blocked_dim) others.push_back(d);
  }
  std::stable_sort(others.begin(), others.end(),
                   [&](int x, int y) { return p.strides[x] > p.strides[y]; });
  int64_t rows = 1;
  for (int d : others) rows *= plain.dims[d];
  const char* source = static_cast<const char*>(from);
  char* target = static_cast<char*>(to);
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / (extent * element));
  ThreadPool::Global().ParallelFor(rows, grain, [&](int64_t begin, int64_t end, int) {
    // The index of row `begin`, innermost last.
    std::vector<int64_t> index(others.size());
    int64_t rest = begin;
    for (size_t i = others.size(); i-- > 0;) {
      index[i] = rest % plain.dims[others[i]];
      rest /= plain.dims[others[i]];
    }
    for (int64_t row = begin; row < end; ++row) {
      int64_t from_at = 0, to_at = 0;
      for (size_t i = 0; i < others.size(); ++i) {
        from_at += index[i] * p.strides[others[i]];
        to_at += index[i] * b.strides[others[i]];
      }
      CopyRuns(block * element, blocks, last_bytes, source + from_at * element,
               target + to_at * element, b.strides[blocked_dim] * element);
      for (size_t i = others.size(); i-- > 0;) {
        if (++index[i] < plain.dims[others[i]]) break;
        index[i] = 0;
      }
    }
  });
}

}  // namespace seam::runtime
