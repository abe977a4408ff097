#include "seam/runtime/buffer_pool.h"

#include <algorithm>

namespace seam::runtime {

ByteBuffer BufferPool::Take(size_t bytes) {
  if (bytes == 0) return {};
  auto it = free_.lower_bound(bytes);
  if (it != free_.end() && it->first / 2 <= bytes) {
    ByteBuffer reused = std::move(it->second);
    free_.erase(it);
    reused.resize(bytes);  // within its capacity: no reallocation
    return reused;
  }
  ByteBuffer fresh;
  fresh.resize(bytes);  // uninitialized
  made_[fresh.data()] = fresh.capacity();
  allocated_ += fresh.capacity();
  peak_ = std::max(peak_, allocated_);
  return fresh;
}

bool BufferPool::Made(const ByteBuffer& buffer) const {
  auto made = made_.find(buffer.data());
  return !buffer.empty() && made != made_.end() && made->second == buffer.capacity();
}

void BufferPool::Forget(const ByteBuffer& buffer) {
  allocated_ -= buffer.capacity();
  made_.erase(buffer.data());
}

void BufferPool::Give(ByteBuffer buffer) {
  if (!Made(buffer)) return;  // not the pool's: freed here
  if (allocated_ > limit_) {
    Forget(buffer);
    return;
  }
  free_.emplace(buffer.capacity(), std::move(buffer));
}

void BufferPool::Disown(const ByteBuffer& buffer) {
  if (Made(buffer)) Forget(buffer);
}

void BufferPool::Adopt(ByteBuffer buffer) {
  if (buffer.empty()) return;
  if (!Made(buffer)) {
    made_[buffer.data()] = buffer.capacity();
    allocated_ += buffer.capacity();
    peak_ = std::max(peak_, allocated_);
  }
  Give(std::move(buffer));
}

Literal BufferPool::TakeLiteral(const Shape& shape) {
  const int64_t bytes = shape.ArrayElementCount() * DTypeByteSize(shape.dtype());
  return Literal::FromBytes(shape, Take(static_cast<size_t>(bytes)));
}

}  // namespace seam::runtime
