// How Seam calls a generated CPU kernel, shared word for word by the
// runtime and (embedded in the prelude) the generated code:
//   void kernel(void* const* buffers, const seam_pool* threads);
//   void epilogue(void* const* buffers, int64_t begin, int64_t end,
//                 int64_t column_begin, int64_t column_end);
// `threads` is Seam's thread pool; a kernel runs its parallel loops on it
// through seam_parallel and never starts threads of its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

extern "C" {
// parallel_for runs body(context, begin, end, worker) over chunks that
// cover [0, tasks) and returns when all have run; `worker` is below
// `workers` and no two chunks running at once share it.
struct seam_pool {
  void* self;
  void (*parallel_for)(void* self, int64_t tasks,
                       void (*body)(void* context, int64_t begin, int64_t end, int worker),
                       void* context);
  int workers;
};
typedef void (*seam_cpu_kernel)(void* const* buffers, const seam_pool* threads);
// A library call's epilogue: its result at the row-major positions
// [begin, end) of the call's result whose index along the last dimension
// lies in [column_begin, column_end), computed on the calling thread (the
// one that just produced that piece).
typedef void (*seam_cpu_epilogue)(void* const* buffers, int64_t begin, int64_t end,
                                  int64_t column_begin, int64_t column_end);
}

// Runs fn(begin, end, worker) over [0, tasks) on the calling thread.
template <typename Fn>
inline void seam_serial(int64_t tasks, Fn&& fn) {
  if (tasks > 0) fn(int64_t{0}, tasks, 0);
}

// Runs fn(begin, end, worker) over [0, tasks) on the pool.
template <typename Fn>
inline void seam_parallel(const seam_pool* threads, int64_t tasks, Fn&& fn) {
  if (tasks <= 0) return;
  if (tasks == 1 || threads->workers <= 1) {
    fn(int64_t{0}, tasks, 0);
    return;
  }
  threads->parallel_for(
      threads->self, tasks,
      [](void* context, int64_t begin, int64_t end, int worker) {
        (*static_cast<std::remove_reference_t<Fn>*>(context))(begin, end, worker);
      },
      static_cast<void*>(&fn));
}
