#include "seam/runtime/cuda_sim_launch.h"

#include <sys/mman.h>

#include <boost/context/fiber.hpp>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace seam::runtime::sim {
namespace {

namespace ctx = boost::context;

constexpr int kWarp = 32;
constexpr unsigned char kPoison = 0xff;

// Fiber stacks, reused from launch to launch: a cooperative launch has
// every thread of its grid live at once, tens of thousands of fibers, so
// stacks are carved out of large reservations whose pages are only
// committed when touched. (Guard pages would split a reservation into a
// mapping per stack, past the kernel's limit on mappings: instead the
// bottom of each stack holds a canary, checked when the stack comes back.)
class StackPool {
 public:
  static constexpr size_t kStackBytes = 256 << 10;
  static constexpr size_t kStacksPerChunk = 64;
  static constexpr size_t kCanaryBytes = 256;
  static constexpr unsigned char kCanary = 0x5a;

  ~StackPool() {
    for (void* chunk : chunks_) munmap(chunk, kStackBytes * kStacksPerChunk);
  }

  ctx::stack_context Take() {
    if (free_.empty()) {
      void* chunk = mmap(nullptr, kStackBytes * kStacksPerChunk, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (chunk == MAP_FAILED) throw std::bad_alloc();
      chunks_.push_back(chunk);
      for (size_t k = 0; k < kStacksPerChunk; ++k) {
        free_.push_back(static_cast<char*>(chunk) + k * kStackBytes);
      }
    }
    char* bottom = free_.back();
    free_.pop_back();
    std::memset(bottom, kCanary, kCanaryBytes);
    ctx::stack_context stack;
    stack.size = kStackBytes;
    stack.sp = bottom + kStackBytes;  // stacks grow down
    return stack;
  }

  void Give(ctx::stack_context& stack) {
    char* bottom = static_cast<char*>(stack.sp) - kStackBytes;
    for (size_t k = 0; k < kCanaryBytes; ++k)
      overflowed_ |= bottom[k] != static_cast<char>(kCanary);
    free_.push_back(bottom);
  }

  // Whether a stack given back since the last call had been overflowed.
  bool TakeOverflow() { return std::exchange(overflowed_, false); }

 private:
  std::vector<void*> chunks_;
  std::vector<char*> free_;
  bool overflowed_ = false;
};

StackPool& Stacks() {
  thread_local StackPool pool;
  return pool;
}

// Boost.Context's stack allocator concept, over the pool.
struct PooledStack {
  ctx::stack_context allocate() { return Stacks().Take(); }
  void deallocate(ctx::stack_context& stack) noexcept { Stacks().Give(stack); }
};

enum class Wait { kNone, kBarrier, kShuffle, kGrid, kDone, kFailed };

struct SimThread {
  seam_sim_thread builtins{};
  uint32_t global = 0;  // numbered across the grid
  Wait wait = Wait::kNone;
  seam_sim_site site{"", 0};  // where it waits
  // A pending shuffle.
  unsigned mask = 0;
  uint64_t value = 0;
  int lane_mask = 0;
  int width = kWarp;
  uint64_t result = 0;
  ctx::fiber fiber;      // the thread, while it is suspended
  ctx::fiber scheduler;  // who resumed it, while it runs
};

struct SharedArray {
  seam_sim_view view;
  std::vector<Shadow> shadow;
};

struct SimBlock {
  uint32_t index = 0;
  uint32_t epoch = 0;  // barriers passed
  std::unique_ptr<SimThread[]> threads;
  std::vector<unsigned char> shared;
  std::vector<std::unique_ptr<SharedArray>> arrays;
  bool at_grid = false;
  bool done = false;
};

std::string Where(const seam_sim_site& site) {
  return absl::StrCat("line ", site.line, " of ", site.file);
}

std::string Describe(const SimThread& t) {
  switch (t.wait) {
    case Wait::kBarrier:
      return absl::StrCat("waits at __syncthreads() on ", Where(t.site));
    case Wait::kShuffle:
      return absl::StrCat("waits at a shuffle on ", Where(t.site));
    case Wait::kGrid:
      return absl::StrCat("waits at the grid barrier on ", Where(t.site));
    case Wait::kDone:
      return "has exited";
    default:
      return "runs";
  }
}

class Launch;
thread_local Launch* current_launch = nullptr;

class Launch {
 public:
  Launch(const SimKernel& kernel, const cuda::LaunchShape& shape, void** args, SimMemory& memory,
         uint64_t& phase)
      : kernel_(kernel), shape_(shape), args_(args), memory_(memory), phase_(phase) {}

  ~Launch() {
    // Threads still suspended (after a failure) unwind their stacks first.
    blocks_.clear();
    memory_.ForgetViews();
  }

  absl::Status Run() {
    if (absl::Status fits = CheckLimits(); !fits.ok()) return fits;
    ++phase_;
    Launch* outer = std::exchange(current_launch, this);
    absl::Status status = shape_.cooperative ? RunCooperative() : RunBlocks();
    current_launch = outer;
    return status;
  }

  // The runtime's entry points, on the running thread.
  const seam_sim_thread* Current() const { return &thread_->builtins; }

  void SyncThreads(seam_sim_site site) { WaitAt(Wait::kBarrier, site); }

  void SyncGrid(seam_sim_site site) {
    if (!shape_.cooperative) {
      Fail("grid.sync() in a launch that is not cooperative (every block must be resident)", site);
    }
    WaitAt(Wait::kGrid, site);
  }

  uint64_t Shuffle(unsigned mask, uint64_t value, int lane_mask, int width, seam_sim_site site) {
    SimThread* self = thread_;
    self->mask = mask;
    self->value = value;
    self->lane_mask = lane_mask;
    self->width = width;
    WaitAt(Wait::kShuffle, site);
    return self->result;
  }

  const seam_sim_view* GlobalView(const void* pointer, int64_t element_bytes, seam_sim_site site) {
    absl::StatusOr<seam_sim_view*> view = memory_.GlobalView(pointer, element_bytes);
    if (!view.ok())
      Fail(std::string(absl::StripPrefix(view.status().message(), "cuda-sim: ")), site);
    if ((*view)->name.empty()) {
      (*view)->name =
          absl::StrCat("global memory at 0x", absl::Hex(reinterpret_cast<uintptr_t>(pointer)));
      for (int64_t k = 0; k < kernel_.parameters; ++k) {
        if (*static_cast<const cuda::DevicePointer*>(args_[k]) ==
            reinterpret_cast<uintptr_t>(pointer)) {
          (*view)->name = absl::StrCat("b", k);
          break;
        }
      }
    }
    return *view;
  }

  const seam_sim_view* SharedView(int64_t offset, int64_t elements, int64_t element_bytes,
                                  seam_sim_site site) {
    SimBlock& block = *block_;
    for (const auto& a : block.arrays) {
      if (a->view.base == block.shared.data() + offset && a->view.elements == elements &&
          a->view.element_bytes == element_bytes) {
        return &a->view;
      }
    }
    const int64_t size = static_cast<int64_t>(block.shared.size());
    if (offset < 0 || elements < 0 || element_bytes <= 0 || offset % element_bytes != 0 ||
        offset > size || elements > (size - offset) / element_bytes) {
      Fail(absl::StrCat("a shared array of ", elements, " elements of ", element_bytes,
                        " bytes at byte ", offset, " lies outside the launch's ", size,
                        " bytes of dynamic shared memory"),
           site);
    }
    auto array = std::make_unique<SharedArray>();
    array->shadow.resize(static_cast<size_t>(elements));
    array->view.base = block.shared.data() + offset;
    array->view.elements = elements;
    array->view.element_bytes = element_bytes;
    array->view.shadow = array->shadow.data();
    array->view.name =
        absl::StrCat("shared memory [", offset, ", ", offset + elements * element_bytes, ")");
    array->view.shared = true;
    block.arrays.push_back(std::move(array));
    return &block.arrays.back()->view;
  }

  void* Access(const seam_sim_view* view, int64_t index, bool write, seam_sim_site site) {
    if (index < 0 || index >= view->elements) {
      Fail(absl::StrCat("out-of-bounds ", write ? "write to " : "read of ", view->name,
                        ": element ", index, " of ", view->elements),
           site);
    }
    const Clock now{phase_, block_->index, block_->epoch, thread_->global};
    if (std::optional<std::string> problem =
            Record(view->shadow[index], now, write, static_cast<uint32_t>(shape_.threads))) {
      Fail(absl::StrCat(*problem, ": ", view->name, ", element ", index), site);
    }
    return view->base + index * view->element_bytes;
  }

 private:
  absl::Status CheckLimits() const {
    auto refuse = [&](const std::string& why) {
      return absl::ResourceExhaustedError(absl::StrCat("cuda-sim: launch of ", kernel_.name, " (",
                                                       shape_.grid, " blocks of ", shape_.threads,
                                                       " threads): ", why));
    };
    if (shape_.grid < 1 || shape_.threads < 1 || shape_.dynamic_shared_bytes < 0) {
      return refuse("a bad launch shape");
    }
    if (shape_.threads > kernel_.max_threads_per_block) {
      return refuse(absl::StrCat("a block of the target has at most ",
                                 kernel_.max_threads_per_block, " threads"));
    }
    if (kernel_.launch_bounds > 0 && shape_.threads > kernel_.launch_bounds) {
      return refuse(absl::StrCat("more threads than the kernel's __launch_bounds__(",
                                 kernel_.launch_bounds, ")"));
    }
    const int64_t shared = shape_.dynamic_shared_bytes + kernel_.static_shared_bytes;
    if (kernel_.shared_bytes_per_block > 0 && shared > kernel_.shared_bytes_per_block) {
      return refuse(absl::StrCat(shared, " bytes of shared memory, a block of the target has ",
                                 kernel_.shared_bytes_per_block));
    }
    const int64_t warps = (shape_.threads + kWarp - 1) / kWarp;
    if (kernel_.registers * warps * kWarp > kernel_.registers_per_block) {
      return refuse(absl::StrCat(kernel_.registers, " registers a thread, ",
                                 kernel_.registers * warps * kWarp, " a block; the target has ",
                                 kernel_.registers_per_block));
    }
    if (shape_.cooperative && shape_.grid > kernel_.max_resident_blocks) {
      return refuse(absl::StrCat("a cooperative launch needs every block resident, and only ",
                                 kernel_.max_resident_blocks, " fit at once"));
    }
    if (shape_.grid > INT32_MAX / shape_.threads) return refuse("too many threads to number");
    return absl::OkStatus();
  }

  std::unique_ptr<SimBlock> StartBlock(uint32_t index) {
    auto block = std::make_unique<SimBlock>();
    block->index = index;
    block->shared.assign(static_cast<size_t>(shape_.dynamic_shared_bytes), kPoison);
    block->threads = std::make_unique<SimThread[]>(static_cast<size_t>(shape_.threads));
    const auto threads = static_cast<unsigned>(shape_.threads);
    for (unsigned t = 0; t < threads; ++t) {
      SimThread& thread = block->threads[t];
      thread.builtins = {
          {t, 0, 0}, {index, 0, 0}, {threads, 1, 1}, {static_cast<unsigned>(shape_.grid), 1, 1}};
      thread.global = index * threads + t;
      thread.fiber =
          ctx::fiber(std::allocator_arg, PooledStack{}, [this, &thread](ctx::fiber&& from) {
            thread.scheduler = std::move(from);
            kernel_.run(args_);
            thread.wait = Wait::kDone;
            return std::move(thread.scheduler);
          });
    }
    return block;
  }

  // Runs every thread that can run until it waits; repeats while a
  // shuffle or barrier releases some. Stops with every thread of the block
  // exited or at the grid barrier.
  absl::Status Advance(SimBlock& block) {
    const auto n = static_cast<size_t>(shape_.threads);
    while (true) {
      for (size_t t = 0; t < n; ++t) {
        SimThread& thread = block.threads[t];
        if (thread.wait != Wait::kNone) continue;
        block_ = &block;
        thread_ = &thread;
        thread.fiber = std::move(thread.fiber).resume();
        if (error_.has_value()) return absl::InternalError(*error_);
      }
      bool shuffles = false;
      for (size_t w = 0; w < n; w += kWarp) {
        bool released = false;
        if (absl::Status s = ReleaseShuffle(block, w, &released); !s.ok()) return s;
        shuffles |= released;
      }
      if (shuffles) continue;
      SimThread* barrier = nullptr;
      SimThread* grid = nullptr;
      SimThread* exited = nullptr;
      for (size_t t = 0; t < n; ++t) {
        SimThread& thread = block.threads[t];
        SimThread*& first = thread.wait == Wait::kBarrier ? barrier
                            : thread.wait == Wait::kGrid  ? grid
                                                          : exited;
        if (first == nullptr) first = &thread;
      }
      if (barrier != nullptr) {
        for (size_t t = 0; t < n; ++t) {
          const SimThread& other = block.threads[t];
          if (other.wait != Wait::kBarrier || other.site.line != barrier->site.line ||
              other.site.file != barrier->site.file) {
            return Failure(
                block, *barrier,
                absl::StrCat("__syncthreads() is not reached by every thread of the block: thread ",
                             t, " ", Describe(other), " (a barrier in divergent control flow)"));
          }
        }
        ++block.epoch;
        for (size_t t = 0; t < n; ++t) block.threads[t].wait = Wait::kNone;
        continue;
      }
      if (grid != nullptr && exited != nullptr) {
        return Failure(block, *grid,
                       absl::StrCat("the grid barrier is not reached by every thread: thread ",
                                    exited->builtins.thread_idx.x, " has exited"));
      }
      block.at_grid = grid != nullptr;
      block.done = grid == nullptr;
      return absl::OkStatus();
    }
  }

  // Releases warp `first`'s lanes waiting at a shuffle, when every lane of
  // their masks is there too; an error when one never will be.
  absl::Status ReleaseShuffle(SimBlock& block, size_t first, bool* released) {
    const size_t n = std::min<size_t>(kWarp, static_cast<size_t>(shape_.threads) - first);
    SimThread* lanes = &block.threads[first];
    for (size_t i = 0; i < n; ++i) {
      const SimThread& lane = lanes[i];
      if (lane.wait != Wait::kShuffle) continue;
      if ((lane.mask >> i & 1u) == 0) {
        return Failure(block, lane,
                       absl::StrCat("a shuffle whose mask 0x", absl::Hex(lane.mask),
                                    " leaves out the calling lane ", i));
      }
      for (size_t j = 0; j < kWarp; ++j) {
        if ((lane.mask >> j & 1u) == 0) continue;
        if (j >= n) {
          return Failure(block, lane,
                         absl::StrCat("a shuffle whose mask 0x", absl::Hex(lane.mask),
                                      " names lane ", j, ", which the block does not have"));
        }
        const SimThread& other = lanes[j];
        if (other.wait != Wait::kShuffle || other.site.line != lane.site.line ||
            other.site.file != lane.site.file || other.mask != lane.mask) {
          return Failure(
              block, lane,
              absl::StrCat("a shuffle with mask 0x", absl::Hex(lane.mask),
                           " is not reached by lane ", j, " of the warp, which ", Describe(other)));
        }
      }
    }
    for (size_t i = 0; i < n; ++i) {
      SimThread& lane = lanes[i];
      if (lane.wait != Wait::kShuffle) continue;
      const int width = lane.width > 0 && lane.width <= kWarp ? lane.width : kWarp;
      const size_t source = i ^ static_cast<size_t>(lane.lane_mask & (kWarp - 1));
      if (source / width > i / width) {
        lane.result = lane.value;  // a later group: the lane's own value
      } else if ((lane.mask >> source & 1u) == 0 || source >= n) {
        return Failure(block, lane,
                       absl::StrCat("a shuffle reads lane ", source, ", outside its mask 0x",
                                    absl::Hex(lane.mask)));
      } else {
        lane.result = lanes[source].value;
      }
    }
    for (size_t i = 0; i < n; ++i) {
      if (lanes[i].wait == Wait::kShuffle) {
        lanes[i].wait = Wait::kNone;
        *released = true;
      }
    }
    return absl::OkStatus();
  }

  absl::Status RunBlocks() {
    for (int64_t b = 0; b < shape_.grid; ++b) {
      blocks_.clear();
      blocks_.push_back(StartBlock(static_cast<uint32_t>(b)));
      if (absl::Status s = Advance(*blocks_.back()); !s.ok()) return s;
    }
    blocks_.clear();
    return absl::OkStatus();
  }

  absl::Status RunCooperative() {
    for (int64_t b = 0; b < shape_.grid; ++b)
      blocks_.push_back(StartBlock(static_cast<uint32_t>(b)));
    while (true) {
      for (auto& block : blocks_) {
        if (block->done) continue;
        if (absl::Status s = Advance(*block); !s.ok()) return s;
      }
      SimBlock* waiting = nullptr;
      SimBlock* finished = nullptr;
      for (auto& block : blocks_) (block->at_grid ? waiting : finished) = block.get();
      if (waiting == nullptr) break;
      if (finished != nullptr) {
        return Failure(*waiting, waiting->threads[0],
                       absl::StrCat("the grid barrier is not reached by block ", finished->index,
                                    ", which has finished"));
      }
      // Every thread of the grid is at a barrier: the next interval.
      ++phase_;
      for (auto& block : blocks_) {
        block->at_grid = false;
        ++block->epoch;
        for (int64_t t = 0; t < shape_.threads; ++t) block->threads[t].wait = Wait::kNone;
      }
    }
    blocks_.clear();
    return absl::OkStatus();
  }

  void WaitAt(Wait wait, seam_sim_site site) {
    SimThread* self = thread_;
    self->wait = wait;
    self->site = site;
    self->scheduler = std::move(self->scheduler).resume();
  }

  // Ends the launch from the running thread: it is never resumed again.
  [[noreturn]] void Fail(const std::string& what, seam_sim_site site) {
    SimThread* self = thread_;
    self->site = site;
    Failure(*block_, *self, what).IgnoreError();
    self->wait = Wait::kFailed;
    self->scheduler = std::move(self->scheduler).resume();
    std::abort();  // not reached: a failed thread is only unwound
  }

  absl::Status Failure(const SimBlock& block, const SimThread& thread, const std::string& what) {
    if (!error_.has_value()) {
      const unsigned t = thread.builtins.thread_idx.x;
      error_ = absl::StrCat("cuda-sim: kernel ", kernel_.name, ", block ", block.index, ", thread ",
                            t, " (warp ", t / kWarp, ", lane ", t % kWarp, "), ",
                            Where(thread.site), ": ", what);
    }
    return absl::InternalError(*error_);
  }

  const SimKernel& kernel_;
  const cuda::LaunchShape shape_;
  void** args_;
  SimMemory& memory_;
  uint64_t& phase_;
  std::vector<std::unique_ptr<SimBlock>> blocks_;
  SimBlock* block_ = nullptr;    // of the running thread
  SimThread* thread_ = nullptr;  // running
  std::optional<std::string> error_;
};

}  // namespace

absl::Status RunLaunch(const SimKernel& kernel, const cuda::LaunchShape& shape, void** args,
                       SimMemory& memory, uint64_t& phase) {
  absl::Status status;
  {
    Launch launch(kernel, shape, args, memory, phase);
    status = launch.Run();
  }
  if (Stacks().TakeOverflow()) {
    // Past the stack, the fiber wrote over another's: nothing after is sure.
    return absl::InternalError(absl::StrCat("cuda-sim: kernel ", kernel.name,
                                            " overflowed a thread's stack of ",
                                            StackPool::kStackBytes >> 10, " KiB"));
  }
  return status;
}

const seam_sim_runtime& SimRuntime() {
  static const seam_sim_runtime runtime = {
      []() { return current_launch->Current(); },
      [](seam_sim_site site) { current_launch->SyncThreads(site); },
      [](seam_sim_site site) { current_launch->SyncGrid(site); },
      [](unsigned mask, uint64_t value, int lane_mask, int width, seam_sim_site site) {
        return current_launch->Shuffle(mask, value, lane_mask, width, site);
      },
      [](const void* pointer, int64_t element_bytes, seam_sim_site site) {
        return current_launch->GlobalView(pointer, element_bytes, site);
      },
      [](int64_t offset, int64_t elements, int64_t element_bytes, seam_sim_site site) {
        return current_launch->SharedView(offset, elements, element_bytes, site);
      },
      [](const seam_sim_view* view, int64_t index, int write, seam_sim_site site) {
        return current_launch->Access(view, index, write != 0, site);
      },
  };
  return runtime;
}

}  // namespace seam::runtime::sim
