#include "seam/runtime/thread_pool.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "seam/util/machine.h"

namespace seam::runtime {
namespace {

// How long an idle thread polls before it sleeps. Kernels of one module
// follow each other within microseconds, so a worker should still be
// polling when the next loop starts; past this it gives the core back.
constexpr auto kSpin = std::chrono::microseconds(100);

// Chunks per thread: enough that a thread the OS took away for a while
// leaves little for the others to wait on, few enough that claiming stays
// cheap and each thread's ranges stay long for the prefetchers.
constexpr int64_t kChunksPerThread = 4;
constexpr int64_t kMaxChunks = 0xffff;  // the claim word's 16 bits

// A stalled loop's caller waited at least this long (the OS's time slices
// are milliseconds; a quiet machine's imbalance between the last chunks is
// far less). A third stall within kStallWindow starts a serial spell: a
// busy machine stalled resnet50's loops 27 times a second, a quiet one (a
// VM with neighbours) 3-17 times.
constexpr int64_t kStallNs = 500'000;
constexpr int64_t kStallWindowNs = 100'000'000;
constexpr int64_t kSpellNs = 200'000'000;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

thread_local bool t_in_loop = false;  // running a loop's chunk, or a worker

void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

void FutexWait(std::atomic<uint32_t>* word, uint32_t expected) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT_PRIVATE, expected, nullptr,
          nullptr, 0);
}

void FutexWake(std::atomic<uint32_t>* word, int count) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE_PRIVATE, count, nullptr,
          nullptr, 0);
}

// Polls `ready` for kSpin; whether it became true meanwhile.
template <typename Ready>
bool SpinUntil(Ready ready) {
  auto deadline = std::chrono::steady_clock::now() + kSpin;
  while (true) {
    for (int k = 0; k < 64; ++k) {
      if (ready()) return true;
      CpuRelax();
    }
    if (std::chrono::steady_clock::now() >= deadline) return ready();
  }
}

struct Claim {
  uint32_t generation;
  int64_t chunks;
  int64_t next;
};

Claim Decode(uint64_t word) {
  return {static_cast<uint32_t>(word >> 32), static_cast<int64_t>((word >> 16) & 0xffff),
          static_cast<int64_t>(word & 0xffff)};
}

void CParallelFor(void* self, int64_t tasks, void (*body)(void*, int64_t, int64_t, int),
                  void* context) {
  static_cast<ThreadPool*>(self)->ParallelFor(
      tasks, 1, [&](int64_t begin, int64_t end, int worker) { body(context, begin, end, worker); });
}

}  // namespace

ThreadPool& ThreadPool::Global() {
  // Never destroyed: kernels may still run on it from other threads'
  // static destructors at exit.
  static ThreadPool* pool = new ThreadPool(UsableCpus());
  return *pool;
}

ThreadPool::ThreadPool(int threads) {
  c_interface_ = {this, &CParallelFor, std::max(1, threads)};
  for (int w = 1; w < threads; ++w) workers_.emplace_back([this, w] { WorkerLoop(w); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true);
  wake_.fetch_add(1);
  FutexWake(&wake_, INT_MAX);
  for (std::thread& t : workers_) t.join();
}

bool ThreadPool::InSerialSpell(int64_t now_ns) const {
  return now_ns < serial_until_ns_.load(std::memory_order_relaxed);
}

int ThreadPool::Parallelism() const { return InSerialSpell(NowNs()) ? 1 : size(); }

void ThreadPool::NoteLoop(int64_t own_ns, int64_t wait_ns, int64_t end_ns) {
  if (wait_ns <= kStallNs || 2 * wait_ns <= own_ns) return;
  // Only the loop's caller, holding loop_mutex_, gets here.
  if (end_ns - stalls_ns_[0] < kStallWindowNs) {
    serial_until_ns_.store(end_ns + kSpellNs, std::memory_order_relaxed);
  }
  stalls_ns_[0] = stalls_ns_[1];
  stalls_ns_[1] = end_ns;
}

void ThreadPool::WorkerLoop(int worker) {
  t_in_loop = true;
  uint32_t seen = 0;  // the wake_ value of the last loop joined
  while (true) {
    auto woken = [&] { return wake_.load(std::memory_order_acquire) != seen || stop_.load(); };
    if (!SpinUntil(woken)) {
      sleepers_.fetch_add(1);
      while (!woken()) FutexWait(&wake_, seen);
      sleepers_.fetch_sub(1);
    }
    if (stop_.load()) return;
    seen = wake_.load(std::memory_order_acquire);
    RunChunks(worker);
  }
}

void ThreadPool::RunChunks(int worker) {
  uint64_t word = claim_.load(std::memory_order_acquire);
  while (true) {
    Claim c = Decode(word);
    if (c.next >= c.chunks) return;
    if (!claim_.compare_exchange_weak(word, word + 1, std::memory_order_acq_rel)) continue;
    // Claimed: the loop cannot end (and its fields change) before this
    // chunk is counted finished.
    int64_t begin = c.next * chunk_;
    (*body_)(begin, std::min(tasks_, begin + chunk_), worker);
    if (finished_.fetch_add(1) + 1 == static_cast<uint32_t>(c.chunks) && caller_asleep_.load()) {
      FutexWake(&finished_, 1);
    }
    word = claim_.load(std::memory_order_acquire);
  }
}

absl::Status ThreadPool::ParallelForEach(int64_t tasks,
                                         absl::FunctionRef<absl::Status(int64_t task)> task) {
  std::mutex mu;
  absl::Status first;
  ParallelFor(tasks, 1, [&](int64_t begin, int64_t end, int) {
    for (int64_t i = begin; i < end; ++i) {
      if (absl::Status s = task(i); !s.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        if (first.ok()) first = s;
      }
    }
  });
  return first;
}

void ThreadPool::ParallelFor(int64_t tasks, int64_t grain,
                             absl::FunctionRef<void(int64_t begin, int64_t end, int worker)> body) {
  if (tasks <= 0) return;
  grain = std::max<int64_t>(1, grain);
  int64_t chunks = std::min({(tasks + grain - 1) / grain, kChunksPerThread * size(), kMaxChunks});
  if (chunks <= 1 || t_in_loop) {
    body(0, tasks, 0);
    return;
  }
  const int64_t start_ns = NowNs();
  if (InSerialSpell(start_ns) || !loop_mutex_.try_lock()) {
    body(0, tasks, 0);
    return;
  }
  body_ = &body;
  tasks_ = tasks;
  chunk_ = (tasks + chunks - 1) / chunks;
  chunks = (tasks + chunk_ - 1) / chunk_;
  finished_.store(0, std::memory_order_relaxed);
  ++generation_;
  claim_.store((uint64_t{generation_} << 32) | (static_cast<uint64_t>(chunks) << 16),
               std::memory_order_release);
  wake_.fetch_add(1);
  if (sleepers_.load() > 0) FutexWake(&wake_, INT_MAX);

  t_in_loop = true;
  RunChunks(0);
  t_in_loop = false;
  const int64_t own_end_ns = NowNs();
  auto done = [&] { return finished_.load(std::memory_order_acquire) == chunks; };
  if (!SpinUntil(done)) {
    caller_asleep_.store(true);
    for (uint32_t seen = finished_.load(); seen != chunks; seen = finished_.load()) {
      FutexWait(&finished_, seen);
    }
    caller_asleep_.store(false);
    const int64_t end_ns = NowNs();
    NoteLoop(own_end_ns - start_ns, end_ns - own_end_ns, end_ns);
  }
  loop_mutex_.unlock();
}

}  // namespace seam::runtime
