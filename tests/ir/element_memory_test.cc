// Large element blocks, once freed, come back to the next allocation of
// their size (already faulted in) instead of being mapped afresh; other
// sizes and small blocks do not take them, and releasing gives every kept
// block back to the system.
#include "seam/ir/element_memory.h"

#include <cstdint>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "seam/ir/literal.h"

namespace seam {
namespace {

constexpr size_t kLarge = size_t{40} << 20;  // past the C library's mmap threshold

class ElementMemory : public ::testing::Test {
 protected:
  void SetUp() override { ReleaseKeptElements(); }
  void TearDown() override { ReleaseKeptElements(); }
};

TEST_F(ElementMemory, AFreedLargeBlockServesTheNextOfItsSize) {
  void* first = AllocateElements(kLarge);
  std::memset(first, 1, kLarge);
  FreeElements(first, kLarge);
  void* second = AllocateElements(kLarge);
  // The same block, not one mapped afresh at the same address (which the
  // system would hand over zeroed).
  EXPECT_EQ(second, first);
  EXPECT_EQ(static_cast<const uint8_t*>(second)[kLarge / 2], 1);
  // A request of another size (past the next huge page) is not given it.
  void* other = AllocateElements(kLarge + (size_t{4} << 20));
  EXPECT_NE(other, first);
  FreeElements(other, kLarge + (size_t{4} << 20));
  FreeElements(second, kLarge);
  EXPECT_EQ(ReleaseKeptElements(), 2 * kLarge + (size_t{4} << 20));
  EXPECT_EQ(ReleaseKeptElements(), 0u);
}

TEST_F(ElementMemory, SizesWithinOneHugePageShareABlock) {
  void* first = AllocateElements(kLarge - 100);
  FreeElements(first, kLarge - 100);
  void* second = AllocateElements(kLarge - 4000);
  EXPECT_EQ(second, first);
  FreeElements(second, kLarge - 4000);
}

TEST_F(ElementMemory, SmallBlocksAreNotKept) {
  void* small = AllocateElements(4096);
  FreeElements(small, 4096);
  EXPECT_EQ(ReleaseKeptElements(), 0u);
}

// A result's buffer, dropped, is the next result's; zeroed when that asks
// for zeros, whatever the block held.
TEST_F(ElementMemory, ALiteralsBufferComesBackToTheNextLiteral) {
  const Shape shape = Shape::Array(DType::kF32, {static_cast<int64_t>(kLarge / 4)});
  const void* data = nullptr;
  {
    Literal first = Literal::Uninitialized(shape);
    data = first.bytes().data();
    std::memset(first.mutable_bytes().data(), 0xff, kLarge);
  }
  const Literal zeros(shape);
  ASSERT_EQ(zeros.bytes().data(), data);
  const std::vector<uint8_t> expected(kLarge, 0);
  EXPECT_EQ(std::memcmp(zeros.bytes().data(), expected.data(), kLarge), 0);
}

}  // namespace
}  // namespace seam
