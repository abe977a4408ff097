// The buffer pool keeps given-back buffers for later requests up to its
// limit and frees them past it; once raised to its peak (after a run), it
// keeps what that run needed, so the next run takes the same memory
// instead of allocating (and faulting in) fresh pages.
#include "seam/runtime/buffer_pool.h"

#include <algorithm>
#include <vector>

#include "gtest/gtest.h"

namespace seam::runtime {
namespace {

// A "run" that holds three buffers of 1 MB at once, then gives them back;
// the data of each buffer it took.
std::vector<const void*> HoldThreeMegabytes(BufferPool& pool) {
  std::vector<ByteBuffer> held;
  std::vector<const void*> data;
  for (int k = 0; k < 3; ++k) {
    held.push_back(pool.Take(1 << 20));
    data.push_back(held.back().data());
  }
  for (ByteBuffer& b : held) pool.Give(std::move(b));
  return data;
}

TEST(BufferPool, ReusesWhatItKeeps) {
  BufferPool pool;
  const std::vector<const void*> first = HoldThreeMegabytes(pool);
  const std::vector<const void*> second = HoldThreeMegabytes(pool);
  EXPECT_EQ(pool.allocated_bytes(), size_t{3} << 20);
  EXPECT_EQ(pool.peak_bytes(), size_t{3} << 20);
  for (const void* d : second) EXPECT_NE(std::find(first.begin(), first.end(), d), first.end());
}

TEST(BufferPool, PastItsLimitFreesWhatIsGivenBack) {
  BufferPool pool;
  pool.set_limit(size_t{3} << 19);  // an estimate of 1.5 MB; the run needs 3
  HoldThreeMegabytes(pool);
  EXPECT_LT(pool.allocated_bytes(), size_t{3} << 20);  // buffers were freed, not kept
}

TEST(BufferPool, RaisedToItsPeakKeepsWhatARunNeeded) {
  BufferPool pool;
  pool.set_limit(size_t{3} << 19);
  HoldThreeMegabytes(pool);
  pool.RaiseLimitToPeak();
  HoldThreeMegabytes(pool);  // refills what the first run freed
  const size_t kept = pool.allocated_bytes();
  EXPECT_EQ(kept, size_t{3} << 20);
  HoldThreeMegabytes(pool);
  EXPECT_EQ(pool.allocated_bytes(), kept);
  EXPECT_EQ(pool.peak_bytes(), size_t{3} << 20);
}

}  // namespace
}  // namespace seam::runtime
