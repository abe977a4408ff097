#include "seam/runtime/thread_pool.h"

#include <time.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace seam::runtime {
namespace {

// Runs a loop and checks that every task ran exactly once, on a worker
// index below the pool's size that no other chunk held at the same time.
void ExpectEachTaskOnce(ThreadPool& pool, int64_t tasks, int64_t grain) {
  std::vector<std::atomic<int>> runs(static_cast<size_t>(tasks));
  std::vector<std::atomic<bool>> busy(static_cast<size_t>(pool.size()));
  std::atomic<int> bad_worker{0}, shared_worker{0};
  pool.ParallelFor(tasks, grain, [&](int64_t begin, int64_t end, int worker) {
    if (worker < 0 || worker >= pool.size()) {
      ++bad_worker;
      return;
    }
    if (busy[worker].exchange(true)) ++shared_worker;
    for (int64_t t = begin; t < end; ++t) ++runs[t];
    busy[worker] = false;
  });
  EXPECT_EQ(bad_worker, 0);
  EXPECT_EQ(shared_worker, 0);
  for (int64_t t = 0; t < tasks; ++t) ASSERT_EQ(runs[t], 1) << "task " << t << " of " << tasks;
}

TEST(ThreadPool, RunsEveryTaskOnce) {
  for (int threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    for (int64_t tasks : {0, 1, 2, 7, 64, 1000, 100003}) {
      for (int64_t grain : {1, 3, 4096}) ExpectEachTaskOnce(pool, tasks, grain);
    }
  }
}

TEST(ThreadPool, ManyLoopsInARow) {
  // Back-to-back loops: a worker late for one loop must not run (or
  // count) chunks of the next as the last one's.
  ThreadPool pool(4);
  std::atomic<int64_t> sum{0};
  for (int loop = 0; loop < 2000; ++loop) {
    pool.ParallelFor(17, 1, [&](int64_t begin, int64_t end, int) {
      for (int64_t t = begin; t < end; ++t) sum += t + 1;
    });
  }
  EXPECT_EQ(sum, 2000 * (17 * 18 / 2));
}

TEST(ThreadPool, NestedLoopsRunInline) {
  ThreadPool pool(4);
  std::atomic<int64_t> sum{0};
  pool.ParallelFor(8, 1, [&](int64_t begin, int64_t end, int) {
    for (int64_t t = begin; t < end; ++t) {
      pool.ParallelFor(100, 1, [&](int64_t b, int64_t e, int worker) {
        EXPECT_EQ(worker, 0);
        for (int64_t u = b; u < e; ++u) sum += u;
      });
    }
  });
  EXPECT_EQ(sum, 8 * (99 * 100 / 2));
}

TEST(ThreadPool, LoopsFromSeveralThreadsAtOnce) {
  ThreadPool pool(3);
  std::vector<std::thread> callers;
  std::atomic<int64_t> sum{0};
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&] {
      for (int loop = 0; loop < 200; ++loop) {
        pool.ParallelFor(50, 1, [&](int64_t begin, int64_t end, int) {
          for (int64_t t = begin; t < end; ++t) sum += 1;
        });
      }
    });
  }
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(sum, 4 * 200 * 50);
}

double ProcessCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

TEST(ThreadPool, IdleWorkersSleep) {
  // Waiting is bounded: a pool idle for 300 ms costs next to no CPU time,
  // where workers that kept spinning would burn 300 ms each.
  ThreadPool pool(4);
  pool.ParallelFor(64, 1, [](int64_t, int64_t, int) {});
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // past the spin
  double before = ProcessCpuSeconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_LT(ProcessCpuSeconds() - before, 0.05);
}

TEST(ThreadPool, CallerFinishesWhenWorkersAreBusyElsewhere) {
  // The loop ends when its chunks are done, whoever ran them: with every
  // worker held inside another thread's loop, a second caller's loop runs
  // on that caller alone and still completes.
  ThreadPool pool(3);
  std::atomic<bool> release{false};
  std::atomic<int> holding{0};
  std::thread holder([&] {
    pool.ParallelFor(3, 1, [&](int64_t, int64_t, int) {
      ++holding;
      while (!release) std::this_thread::yield();
    });
  });
  while (holding.load() == 0) std::this_thread::yield();
  std::atomic<int64_t> sum{0};
  pool.ParallelFor(1000, 1, [&](int64_t begin, int64_t end, int) {
    for (int64_t t = begin; t < end; ++t) sum += 1;
  });
  EXPECT_EQ(sum, 1000);
  release = true;
  holder.join();
}

TEST(ThreadPool, LoopsRunSeriallyForASpellAfterWorkersStall) {
  // A worker that sits on its chunk (as one the OS took away mid-chunk
  // does) while the caller has run out of chunks stalls the loop; after
  // three stalls in quick succession loops run on their caller alone, and
  // once the spell is over on the workers again.
  ThreadPool pool(2);
  ASSERT_EQ(pool.Parallelism(), 2);
  auto stalled_loop = [&] {
    pool.ParallelFor(8, 1, [](int64_t, int64_t, int worker) {
      std::this_thread::sleep_for(std::chrono::microseconds(worker == 0 ? 50 : 3000));
    });
  };
  // A worker that never joins a loop (a busy machine) stalls nothing, so
  // this allows for a few loops the caller ran alone.
  for (int loop = 0; loop < 50 && pool.Parallelism() == 2; ++loop) stalled_loop();
  ASSERT_EQ(pool.Parallelism(), 1);
  std::atomic<int> on_workers{0};
  pool.ParallelFor(64, 1, [&](int64_t, int64_t, int worker) {
    if (worker != 0) ++on_workers;
  });
  EXPECT_EQ(on_workers, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(250));  // past the spell
  EXPECT_EQ(pool.Parallelism(), 2);
}

TEST(ThreadPool, GeneratedCodeInterface) {
  ThreadPool pool(3);
  const seam_pool* c = pool.c_interface();
  EXPECT_EQ(c->workers, 3);
  std::vector<std::atomic<int>> runs(500);
  seam_parallel(c, 500, [&](int64_t begin, int64_t end, int worker) {
    EXPECT_LT(worker, 3);
    for (int64_t t = begin; t < end; ++t) ++runs[t];
  });
  for (auto& r : runs) ASSERT_EQ(r, 1);
}

}  // namespace
}  // namespace seam::runtime
