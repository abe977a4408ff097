// The memory of the CUDA emulator: device allocations in host
// memory, and what is known of each element of global and shared memory
// (its shadow: who last wrote it and who read it since, and when), which
// every emulated access is checked against.
//
// When one access is ordered before another follows CUDA's memory model
// for what Seam's kernels use: the same thread's accesses are in program
// order; __syncthreads() orders the accesses of a block's threads before
// it with theirs after it; a grid barrier, and the end of a launch, order
// everything before it with everything after. Two accesses to an element,
// at least one a write, that none of these orders are a race.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "seam/codegen/cuda_sim_abi.h"
#include "seam/runtime/cuda_driver.h"

namespace seam::runtime::sim {

// When an access happens: `phase` numbers the device's intervals between
// launch starts and grid barriers (never reused); within one, `block`'s
// barrier count `epoch` and the `thread` (numbered across the grid).
struct Clock {
  uint64_t phase = 0;  // 0: never
  uint32_t block = 0;
  uint32_t epoch = 0;
  uint32_t thread = 0;
};

// An access by `later` is ordered after one by `earlier`.
inline bool OrderedBefore(const Clock& earlier, const Clock& later) {
  return earlier.phase < later.phase || earlier.thread == later.thread ||
         (earlier.block == later.block && earlier.epoch < later.epoch);
}

constexpr uint32_t kManyThreads = 0xffffffffu;

// One element's history: the last write, and the reads since (one
// reader's clock, or kManyThreads once readers are unordered among
// themselves, with the block kManyThreads when they span blocks too).
struct Shadow {
  Clock write;
  Clock read;
};

// What is wrong with an access, if anything: "read of an element thread 7
// wrote ..." (the caller adds where).
std::optional<std::string> Record(Shadow& shadow, const Clock& now, bool write,
                                  uint32_t threads_per_block);

}  // namespace seam::runtime::sim

// A typed region of memory as a kernel sees it (across the emulator's ABI).
struct seam_sim_view {
  unsigned char* base = nullptr;
  int64_t elements = 0;
  int64_t element_bytes = 0;
  seam::runtime::sim::Shadow* shadow = nullptr;  // one per element
  std::string name;                              // "b3", "shared bytes [0, 1024)"
  bool shared = false;
};

namespace seam::runtime::sim {

// Device memory: host allocations 256-byte aligned like cuMemAlloc's,
// filled with 0xff bytes (NaN for floats) so that a read of what nothing
// wrote shows, and shadowed per element once a kernel views them.
class SimMemory final : public cuda::MemoryOwner {
 public:
  SimMemory() = default;
  SimMemory(const SimMemory&) = delete;
  SimMemory& operator=(const SimMemory&) = delete;
  ~SimMemory();

  absl::StatusOr<cuda::DeviceBuffer> Allocate(int64_t bytes);
  void Free(cuda::DevicePointer ptr) const override;
  // Forgets what was written to the buffer at `ptr`, and poisons it.
  void Recycle(cuda::DevicePointer ptr);
  // The host address of [ptr, ptr + bytes), which must lie in one
  // allocation; `write` marks those elements written by the host.
  absl::StatusOr<unsigned char*> Host(cuda::DevicePointer ptr, int64_t bytes, bool write);

  // `pointer` as an array of `element_bytes`-byte elements up to the end
  // of its allocation (a view with no elements for a null pointer); an
  // error when it points into no allocation or is not 16-byte aligned.
  absl::StatusOr<seam_sim_view*> GlobalView(const void* pointer, int64_t element_bytes);
  // Views are cached per launch, and dropped here.
  void ForgetViews() { views_.clear(); }

 private:
  struct Allocation {
    unsigned char* data = nullptr;
    int64_t bytes = 0;
    // The element size the shadow is kept in; 0: no shadow yet, -1: none
    // yet but the host wrote the buffer.
    int64_t granule = 0;
    std::vector<Shadow> shadow;
  };
  Allocation* Find(uintptr_t address, int64_t bytes);
  static int64_t Footprint(const Allocation& a);
  // Counts `bytes` more of host memory in use; an error, and nothing
  // counted, past three quarters of the machine's memory (the emulator
  // fails clearly where it would otherwise be killed).
  absl::Status Reserve(int64_t bytes) const;

  // By start address; mutable: Free is const (MemoryOwner).
  mutable std::map<uintptr_t, Allocation> allocations_;
  std::map<std::pair<uintptr_t, int64_t>, std::unique_ptr<seam_sim_view>> views_;
  mutable int64_t used_bytes_ = 0;  // allocations and their shadows
};

}  // namespace seam::runtime::sim
