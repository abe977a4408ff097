// Resident blocks per SM from a kernel's resources (CUDA's occupancy rules
// on an H100: 2,048 threads, 65,536 registers, 228 KB of shared memory and
// 32 blocks per SM).
#include "seam/target/occupancy.h"

#include "gtest/gtest.h"

namespace seam::fusion {
namespace {

TEST(Occupancy, ThreadsLimitSmallKernels) {
  target::KernelResources r;
  r.registers = 32;
  EXPECT_EQ(target::ResidentBlocksPerUnit(target::H100Spec(), 256, r), 8);  // 2048 / 256
  EXPECT_EQ(target::ResidentBlocksPerUnit(target::H100Spec(), 32, r),
            32);  // the block limit, not 64
  EXPECT_EQ(target::ResidentBlocksPerUnit(target::H100Spec(), 1024, r), 2);
}

TEST(Occupancy, RegistersAreAllocatedPerWarpIn256s) {
  target::KernelResources r;
  r.registers = 128;  // 4096 per warp: 16 warps per SM
  EXPECT_EQ(target::ResidentBlocksPerUnit(target::H100Spec(), 256, r), 2);
  r.registers = 33;  // 1056 per warp, allocated as 1280: 51 warps
  EXPECT_EQ(target::ResidentBlocksPerUnit(target::H100Spec(), 256, r), 6);
}

TEST(Occupancy, SharedMemoryCountsStaticDynamicAndTheDriversShare) {
  target::KernelResources r;
  r.registers = 32;
  r.dynamic_shared_bytes = 100 * 1024;
  EXPECT_EQ(target::ResidentBlocksPerUnit(target::H100Spec(), 256, r), 2);
  r.static_shared_bytes = 14 * 1024;  // 114 KB + 1 KB reserved, twice, is over 228 KB
  EXPECT_EQ(target::ResidentBlocksPerUnit(target::H100Spec(), 256, r), 1);
}

TEST(Occupancy, ABlockThatCannotFitGivesZero) {
  target::KernelResources r;
  r.dynamic_shared_bytes = 300 * 1024;
  EXPECT_EQ(target::ResidentBlocksPerUnit(target::H100Spec(), 256, r), 0);
  EXPECT_EQ(target::ResidentBlocksPerUnit(target::H100Spec(), 2048, target::KernelResources{}), 0);
  r = target::KernelResources{};
  r.registers = 255;  // 8192 per warp: 8 warps, fewer than 512 threads need
  EXPECT_EQ(target::ResidentBlocksPerUnit(target::H100Spec(), 512, r), 0);
}

TEST(Occupancy, RegisterCapOfLaunchBounds) {
  EXPECT_EQ(target::RegisterCap(target::H100Spec(), 1024), 64);
  EXPECT_EQ(target::RegisterCap(target::H100Spec(), 512), 128);
  EXPECT_EQ(target::RegisterCap(target::H100Spec(), 256), 255);
  EXPECT_EQ(target::RegisterCap(target::H100Spec(), 96), 255);
}

}  // namespace
}  // namespace seam::fusion
