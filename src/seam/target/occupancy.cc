#include "seam/target/occupancy.h"

#include <algorithm>

namespace seam::target {
namespace {

constexpr int64_t kWarp = 32;
constexpr int64_t kMaxBlocksPerSm = 32;            // sm_80 and sm_90
constexpr int64_t kRegisterUnit = 256;             // registers are allocated per warp in these
constexpr int64_t kSharedReservedPerBlock = 1024;  // the driver's own share of each block

int64_t RoundUp(int64_t n, int64_t unit) { return (n + unit - 1) / unit * unit; }

}  // namespace

int64_t ResidentBlocksPerUnit(const DeviceSpec& device, int64_t threads,
                              const KernelResources& resources) {
  if (threads <= 0 || threads > device.max_threads_per_block) return 0;
  int64_t warps = RoundUp(threads, kWarp) / kWarp;
  int64_t blocks = std::min(kMaxBlocksPerSm, device.max_threads_per_unit / (warps * kWarp));
  if (resources.registers > 0) {
    int64_t per_warp = RoundUp(resources.registers * kWarp, kRegisterUnit);
    blocks = std::min(blocks, device.registers_per_unit / (per_warp * warps));
  }
  int64_t shared = resources.static_shared_bytes + resources.dynamic_shared_bytes;
  if (shared > 0) {
    if (shared > device.onchip_bytes_per_block) return 0;
    blocks = std::min(blocks, device.onchip_bytes_per_unit / (shared + kSharedReservedPerBlock));
  }
  return std::max<int64_t>(0, blocks);
}

int64_t RegisterCap(const DeviceSpec& device, int64_t threads) {
  constexpr int64_t kMaxRegistersPerThread = 255;
  int64_t per_thread =
      device.registers_per_unit / std::max<int64_t>(kWarp, RoundUp(threads, kWarp));
  return std::min(kMaxRegistersPerThread, per_thread / 8 * 8);
}

}  // namespace seam::target
