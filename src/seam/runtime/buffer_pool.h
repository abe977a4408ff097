// Memory of dead values, kept for the next values: a run reuses memory as
// values die instead of allocating (and faulting in) fresh pages, which
// for tensors past malloc's mmap threshold costs more than the kernels
// that fill them. A request takes the smallest free buffer that holds it
// and is at most twice its size.
//
// The pool keeps only buffers it made: memory from elsewhere (a result
// the interpreter computed, say) is freed when given back, so a loop's
// memory does not grow with its trip count. While its buffers (in use and
// free) take more than a limit (an executable sets its estimated peak), a
// buffer given back is freed rather than kept, so buffers of sizes no
// longer asked for do not pile up.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>

#include "absl/container/flat_hash_map.h"
#include "seam/ir/literal.h"

namespace seam::runtime {

class BufferPool {
 public:
  // A buffer of exactly `bytes`, uninitialized.
  ByteBuffer Take(size_t bytes);
  // Keeps `buffer` for a later Take of its size when the pool made it;
  // frees it otherwise.
  void Give(ByteBuffer buffer);
  // A literal of `shape`, uninitialized, its memory from the pool.
  Literal TakeLiteral(const Shape& shape);

  // `buffer` leaves the pool's keeping (a result handed to the caller).
  void Disown(const ByteBuffer& buffer);
  // `buffer` joins the pool (a result the caller hands back).
  void Adopt(ByteBuffer buffer);

  // Past this many bytes of its buffers, given-back ones are freed.
  void set_limit(size_t bytes) { limit_ = bytes; }
  // Raises the limit to the most the pool's buffers ever took: after a
  // first run, what it needed is kept for the next (a limit below it
  // frees buffers every run that the next allocates, and faults in, again:
  // half a GB a run in MobileNetV2's training step, whose peak is a tenth
  // over its estimate).
  void RaiseLimitToPeak() { limit_ = std::max(limit_, peak_); }

  // Bytes of the buffers the pool made that still exist (in use or free),
  // and the most there ever were.
  size_t allocated_bytes() const { return allocated_; }
  size_t peak_bytes() const { return peak_; }

 private:
  // Whether the pool made `buffer` (and it is still the size it made).
  bool Made(const ByteBuffer& buffer) const;
  void Forget(const ByteBuffer& buffer);

  std::multimap<size_t, ByteBuffer> free_;  // by capacity
  absl::flat_hash_map<const void*, size_t> made_;  // the buffers the pool made: data, capacity
  size_t allocated_ = 0;
  size_t peak_ = 0;
  size_t limit_ = SIZE_MAX;
};

// A pool buffer viewed as `count` elements of T, given back when it goes.
template <typename T>
class PooledArray {
 public:
  PooledArray(BufferPool& pool, size_t count) : pool_(&pool), bytes_(pool.Take(count * sizeof(T))) {}
  PooledArray(PooledArray&&) = default;
  PooledArray& operator=(PooledArray&&) = default;
  ~PooledArray() {
    if (pool_ != nullptr) pool_->Give(std::move(bytes_));
  }
  T* data() { return reinterpret_cast<T*>(bytes_.data()); }
  const T* data() const { return reinterpret_cast<const T*>(bytes_.data()); }

 private:
  BufferPool* pool_;
  ByteBuffer bytes_;
};

}  // namespace seam::runtime
