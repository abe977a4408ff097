#include "seam/ir/element_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>

namespace seam {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;
// From this size on, glibc's malloc maps every block afresh from the kernel
// (its largest mmap threshold); smaller blocks it recycles from its heap,
// faulting nothing, and aligning those to huge pages made them fault again
// (a 3.2 MB convolution result 0.25 -> 0.63 ms).
constexpr size_t kFreshFrom = size_t{32} << 20;

size_t RoundedToHugePages(size_t bytes) { return (bytes + kHugePage - 1) / kHugePage * kHugePage; }

// Freed large blocks by size, kept up to an eighth of physical memory (at
// least one block of any size: a module's largest result is kept too).
class KeptBlocks {
 public:
  static KeptBlocks& Global() {
    static KeptBlocks* blocks = new KeptBlocks;  // never destroyed: frees may come at exit
    return *blocks;
  }

  void* Take(size_t rounded) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = blocks_.find(rounded);
    if (it == blocks_.end()) return nullptr;
    void* memory = it->second;
    blocks_.erase(it);
    kept_bytes_ -= rounded;
    return memory;
  }

  // Whether the block is kept; otherwise the caller frees it.
  bool Keep(void* memory, size_t rounded) {
    std::lock_guard<std::mutex> lock(mu_);
    if (kept_bytes_ + rounded > bound_ && !blocks_.empty()) return false;
    blocks_.emplace(rounded, memory);
    kept_bytes_ += rounded;
    return true;
  }

  size_t Release() {
    std::multimap<size_t, void*> blocks;
    {
      std::lock_guard<std::mutex> lock(mu_);
      blocks.swap(blocks_);
      kept_bytes_ = 0;
    }
    size_t freed = 0;
    for (auto& [bytes, memory] : blocks) {
      std::free(memory);
      freed += bytes;
    }
    return freed;
  }

 private:
  KeptBlocks() {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) bound_ = static_cast<size_t>(pages) / 8 * static_cast<size_t>(page);
  }

  std::mutex mu_;
  std::multimap<size_t, void*> blocks_;
  size_t kept_bytes_ = 0;
  size_t bound_ = size_t{1} << 30;
};

void* FreshHugeBlock(size_t rounded) {
  void* memory = std::aligned_alloc(kHugePage, rounded);
  if (memory == nullptr) return nullptr;
  // Advice only: where huge pages are off or scarce, 4 KiB pages serve.
  madvise(memory, rounded, MADV_HUGEPAGE);
  return memory;
}

}  // namespace

void* AllocateElements(size_t bytes) {
  if (bytes < kFreshFrom) {
    void* memory = std::malloc(bytes == 0 ? 1 : bytes);
    if (memory == nullptr) throw std::bad_alloc();
    return memory;
  }
  const size_t rounded = RoundedToHugePages(bytes);
  if (void* kept = KeptBlocks::Global().Take(rounded)) return kept;
  void* memory = FreshHugeBlock(rounded);
  if (memory == nullptr && KeptBlocks::Global().Release() > 0) memory = FreshHugeBlock(rounded);
  if (memory == nullptr) throw std::bad_alloc();
  return memory;
}

void FreeElements(void* memory, size_t bytes) noexcept {
  if (memory == nullptr) return;
  if (bytes >= kFreshFrom && KeptBlocks::Global().Keep(memory, RoundedToHugePages(bytes))) return;
  std::free(memory);
}

size_t ReleaseKeptElements() noexcept { return KeptBlocks::Global().Release(); }

}  // namespace seam
