// Memory of dead values, kept by size for the next value of that size: a
// run reuses memory as values die instead of allocating (and faulting in)
// fresh pages, which for tensors past malloc's mmap threshold costs more
// than the kernels that fill them.
#pragma once

#include <cstddef>
#include <map>

#include "seam/ir/literal.h"

namespace seam::runtime {

class BufferPool {
 public:
  // A buffer of exactly `bytes`, uninitialized.
  ByteBuffer Take(size_t bytes);
  // Keeps `buffer` for a later Take of its size.
  void Give(ByteBuffer buffer);
  // A literal of `shape`, uninitialized, its memory from the pool.
  Literal TakeLiteral(const Shape& shape);

 private:
  std::multimap<size_t, ByteBuffer> free_;
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
