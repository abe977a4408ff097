#include "seam/runtime/buffer_pool.h"

namespace seam::runtime {

ByteBuffer BufferPool::Take(size_t bytes) {
  auto it = free_.find(bytes);
  if (it == free_.end()) {
    ByteBuffer fresh;
    fresh.resize(bytes);  // uninitialized
    return fresh;
  }
  ByteBuffer reused = std::move(it->second);
  free_.erase(it);
  return reused;
}

void BufferPool::Give(ByteBuffer buffer) {
  if (!buffer.empty()) free_.emplace(buffer.size(), std::move(buffer));
}

Literal BufferPool::TakeLiteral(const Shape& shape) {
  Literal out = Literal::Uninitialized(shape);
  ByteBuffer reused = Take(out.bytes().size());
  out.mutable_bytes().swap(reused);
  return out;
}

}  // namespace seam::runtime
