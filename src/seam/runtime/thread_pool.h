// The one set of worker threads Seam runs on: generated kernels, the
// dot/convolution library calls and the runtime's own loops all share it,
// so a process never has more busy threads than the cores it may use.
//
// A parallel loop is split into chunks that threads claim one at a time;
// the calling thread claims too, and the loop is done when every chunk is,
// not when every worker has checked in. A worker the OS has not scheduled
// (a busy machine) simply claims nothing, where a fork-join team with
// static shares would wait for it at every barrier. Idle workers spin
// briefly (kernels follow each other within microseconds) and then sleep.
//
// A worker the OS takes away *while it runs a chunk* is another matter:
// the loop cannot end until the OS gives it back, a time slice later
// (milliseconds). On a machine another process keeps busy this happens
// every few milliseconds, and two threads ran slower than one (DLRM's
// training step 49 against 35 ms, the pool's own loops of 10 tasks 72
// against 42 us). So the pool watches for it: a loop whose caller, out of
// chunks, waited for the workers' last ones over half a millisecond and
// over half as long as it ran chunks itself was stalled. After three stalls in
// quick succession loops run on their caller alone for a spell, and
// Parallelism() says 1; the first loop after it tries the workers again.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "seam/codegen/cpu_kernel_abi.h"

namespace seam::runtime {

class ThreadPool {
 public:
  // The process's pool: a thread per usable CPU (UsableCpus).
  static ThreadPool& Global();

  // `threads` counts the caller: threads - 1 workers are started.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Threads that may run a loop's chunks at once, the caller included.
  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Threads a loop started now would run on: size(), or 1 during a spell
  // after a stalled loop. What callers that split work into shares of
  // their own (library calls) should split it by.
  int Parallelism() const;

  // Runs body(begin, end, worker) over chunks covering [0, tasks), each at
  // least `grain` tasks (the last may be shorter), and returns when all
  // have run. A loop started inside another, or while another thread's
  // loop runs, runs on the calling thread alone.
  void ParallelFor(int64_t tasks, int64_t grain,
                   absl::FunctionRef<void(int64_t begin, int64_t end, int worker)> body);

  // Runs task(i) once for each i in [0, tasks), one task a chunk, and
  // returns the first failure (every task runs either way).
  absl::Status ParallelForEach(int64_t tasks, absl::FunctionRef<absl::Status(int64_t task)> task);

  // The pool as generated kernels see it.
  const seam_pool* c_interface() const { return &c_interface_; }

 private:
  void WorkerLoop(int worker);
  // Whether loops run on their caller alone at `now_ns` (steady clock).
  bool InSerialSpell(int64_t now_ns) const;
  // Notes how a parallel loop went: the caller ran chunks for `own_ns`,
  // then waited `wait_ns` for the workers' last ones.
  void NoteLoop(int64_t own_ns, int64_t wait_ns, int64_t end_ns);
  // Claims and runs chunks of the running loop until none is left.
  void RunChunks(int worker);

  std::vector<std::thread> workers_;
  seam_pool c_interface_;
  std::mutex loop_mutex_;  // one loop at a time

  // The running loop. Written before `claim_` publishes it, read by a
  // thread only after it claims a chunk (so never while being rewritten).
  absl::FunctionRef<void(int64_t, int64_t, int)>* body_ = nullptr;
  int64_t tasks_ = 0;
  int64_t chunk_ = 1;

  // generation (32 bits) | chunks (16) | next chunk (16): claiming a chunk
  // is a compare-and-swap that fails for a loop that has ended.
  std::atomic<uint64_t> claim_{0};
  std::atomic<uint32_t> finished_{0};  // chunks of the running loop done
  std::atomic<uint32_t> wake_{0};      // bumped to start a loop (futex word)
  std::atomic<int> sleepers_{0};       // workers asleep on wake_
  std::atomic<bool> caller_asleep_{false};
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> serial_until_ns_{0};  // steady clock; 0: no spell
  // When the two latest stalled loops ended, the earlier first.
  int64_t stalls_ns_[2] = {INT64_MIN / 2, INT64_MIN / 2};
  uint32_t generation_ = 0;
};

}  // namespace seam::runtime
