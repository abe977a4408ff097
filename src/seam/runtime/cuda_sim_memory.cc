#include "seam/runtime/cuda_sim_memory.h"

#include <cstdlib>
#include <cstring>

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace seam::runtime::sim {
namespace {

constexpr unsigned char kPoison = 0xff;
// The host's writes happen before every launch that follows them.
constexpr Clock kHostWrite{1, kManyThreads, 0, kManyThreads};

std::string Who(const Clock& c, uint32_t threads_per_block) {
  if (c.thread == kManyThreads) return c.phase == kHostWrite.phase ? "the host" : "other threads";
  return absl::StrCat("thread ", c.thread % threads_per_block, " of block ",
                      c.thread / threads_per_block);
}

}  // namespace

std::optional<std::string> Record(Shadow& shadow, const Clock& now, bool write,
                                  uint32_t threads_per_block) {
  const bool written = shadow.write.phase != 0;
  const bool read = shadow.read.phase != 0;
  if (write) {
    if (written && !OrderedBefore(shadow.write, now)) {
      return absl::StrCat("write of an element ", Who(shadow.write, threads_per_block),
                          " also wrote, with no barrier between (a write-write race)");
    }
    if (read && !OrderedBefore(shadow.read, now)) {
      return absl::StrCat("write of an element ", Who(shadow.read, threads_per_block),
                          " read, with no barrier between (the read may see either value)");
    }
    shadow.write = now;
    shadow.read = Clock{};
    return std::nullopt;
  }
  if (!written) return std::string("read of an element nothing wrote (uninitialized memory)");
  if (!OrderedBefore(shadow.write, now)) {
    return absl::StrCat(
        "read of an element ", Who(shadow.write, threads_per_block),
        " wrote, with no barrier between that publishes it (a read-after-write race)");
  }
  if (!read || OrderedBefore(shadow.read, now)) {
    shadow.read = now;
  } else if (shadow.read.thread != now.thread) {
    // Unordered readers: any later write must be ordered after all of them.
    if (shadow.read.block != now.block) shadow.read.block = kManyThreads;
    shadow.read.thread = kManyThreads;
  }
  return std::nullopt;
}

SimMemory::~SimMemory() {
  for (auto& [address, allocation] : allocations_) std::free(allocation.data);
}

absl::StatusOr<cuda::DeviceBuffer> SimMemory::Allocate(int64_t bytes) {
  if (bytes < 0) return absl::InvalidArgumentError(absl::StrCat("allocation of ", bytes, " bytes"));
  if (bytes == 0) return cuda::DeviceBuffer();
  const int64_t rounded = (bytes + 255) / 256 * 256;
  if (absl::Status fits = Reserve(rounded); !fits.ok()) return fits;
  void* data = std::aligned_alloc(256, static_cast<size_t>(rounded));
  if (data == nullptr) {
    used_bytes_ -= rounded;
    return absl::ResourceExhaustedError(
        absl::StrCat("cuda-sim: out of host memory for a device allocation of ", bytes, " bytes"));
  }
  std::memset(data, kPoison, static_cast<size_t>(rounded));
  auto address = reinterpret_cast<uintptr_t>(data);
  allocations_[address] = Allocation{static_cast<unsigned char*>(data), bytes, 0, {}};
  return cuda::DeviceBuffer(this, address, bytes);
}

void SimMemory::Free(cuda::DevicePointer ptr) const {
  auto it = allocations_.find(ptr);
  if (it == allocations_.end()) return;
  std::free(it->second.data);
  used_bytes_ -= Footprint(it->second);
  allocations_.erase(it);
}

int64_t SimMemory::Footprint(const Allocation& a) {
  return (a.bytes + 255) / 256 * 256 + static_cast<int64_t>(a.shadow.size() * sizeof(Shadow));
}

absl::Status SimMemory::Reserve(int64_t bytes) const {
  static const int64_t budget = [] {
    const double memory = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
    return static_cast<int64_t>(memory * 0.75);
  }();
  if (used_bytes_ + bytes > budget) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "cuda-sim: emulating this module needs more than %.1f GiB of host memory (device memory "
        "and, per element a kernel touches, %d bytes of shadow), over the %.1f GiB it may use here",
        static_cast<double>(used_bytes_ + bytes) / (1 << 30), static_cast<int>(sizeof(Shadow)),
        static_cast<double>(budget) / (1 << 30)));
  }
  used_bytes_ += bytes;
  return absl::OkStatus();
}

SimMemory::Allocation* SimMemory::Find(uintptr_t address, int64_t bytes) {
  auto it = allocations_.upper_bound(address);
  if (it == allocations_.begin()) return nullptr;
  --it;
  Allocation& a = it->second;
  const uintptr_t begin = it->first;
  if (address < begin || bytes < 0 ||
      address - begin + static_cast<uint64_t>(bytes) > static_cast<uint64_t>(a.bytes)) {
    return nullptr;
  }
  return &a;
}

void SimMemory::Recycle(cuda::DevicePointer ptr) {
  auto it = allocations_.find(ptr);
  if (it == allocations_.end()) return;
  std::memset(it->second.data, kPoison, static_cast<size_t>(it->second.bytes));
  std::fill(it->second.shadow.begin(), it->second.shadow.end(), Shadow{});
  if (it->second.granule < 0) it->second.granule = 0;
}

absl::StatusOr<unsigned char*> SimMemory::Host(cuda::DevicePointer ptr, int64_t bytes, bool write) {
  Allocation* a = Find(ptr, bytes);
  if (a == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("cuda-sim: [0x", absl::Hex(ptr), ", +", bytes,
                                                   ") is not in one device allocation"));
  }
  if (write) {
    const int64_t granule = a->granule > 0 ? a->granule : 1;
    const int64_t first =
        static_cast<int64_t>(ptr - reinterpret_cast<uintptr_t>(a->data)) / granule;
    const int64_t last = std::min<int64_t>(static_cast<int64_t>(a->shadow.size()),
                                           first + (bytes + granule - 1) / granule);
    for (int64_t e = first; e < last; ++e) a->shadow[e] = Shadow{kHostWrite, Clock{}};
    if (a->shadow.empty()) a->granule = -1;  // written whole by the host before any view
  }
  return a->data + (ptr - reinterpret_cast<uintptr_t>(a->data));
}

absl::StatusOr<seam_sim_view*> SimMemory::GlobalView(const void* pointer, int64_t element_bytes) {
  auto address = reinterpret_cast<uintptr_t>(pointer);
  auto key = std::make_pair(address, element_bytes);
  if (auto it = views_.find(key); it != views_.end()) return it->second.get();
  auto view = std::make_unique<seam_sim_view>();
  if (address != 0) {
    if (address % 16 != 0) {
      return absl::InvalidArgumentError(absl::StrCat("a buffer at 0x", absl::Hex(address),
                                                     " is not 16-byte aligned, as kernels assume"));
    }
    Allocation* a = Find(address, 0);
    if (a == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("a kernel parameter (0x", absl::Hex(address),
                                                     ") points into no allocation"));
    }
    if (a->granule != element_bytes) {
      // The first typed view, or one of another element size (a new value
      // in the buffer: what was written before counts as the host's).
      const bool host_written = a->granule != 0;
      const int64_t shadow_bytes = a->bytes / element_bytes * static_cast<int64_t>(sizeof(Shadow));
      used_bytes_ -= static_cast<int64_t>(a->shadow.size() * sizeof(Shadow));
      a->shadow.clear();
      a->shadow.shrink_to_fit();
      if (absl::Status fits = Reserve(shadow_bytes); !fits.ok()) return fits;
      a->granule = element_bytes;
      a->shadow.assign(static_cast<size_t>(a->bytes / element_bytes),
                       host_written ? Shadow{kHostWrite, Clock{}} : Shadow{});
    }
    const int64_t offset = static_cast<int64_t>(address - reinterpret_cast<uintptr_t>(a->data));
    view->base = a->data + offset;
    view->elements = (a->bytes - offset) / element_bytes;
    view->shadow = a->shadow.data() + offset / element_bytes;
  }
  view->element_bytes = element_bytes;
  seam_sim_view* raw = view.get();
  views_[key] = std::move(view);
  return raw;
}

}  // namespace seam::runtime::sim
