// CUDA's built-ins on the host, for the kernels the CUDA emulator runs
// (`--backend=cuda-sim`): embedded in its prelude after cuda_sim_abi.h, so
// that the .cu text NVRTC compiles compiles unchanged with the host's C++
// compiler. Whatever a thread does that another could see goes to the
// emulator: barriers, shuffles, and every element of global and shared
// memory (seam_global / seam_shared arrays), read or written, with the
// line of the .cu it happens on.
#pragma once

#include <cstdint>
#include <cstring>
#include <source_location>
#include <type_traits>
#include <utility>

#include "seam/codegen/cuda_sim_abi.h"

namespace seam_sim {

inline const seam_sim_runtime* runtime = nullptr;

inline seam_sim_site Site(const std::source_location& at) { return {at.file_name(), at.line()}; }

inline const seam_sim_thread& Current() { return *runtime->current(); }

// An index into a checked array, with where it is taken.
struct At {
  int64_t index;
  std::source_location site;
  template <typename I, typename = std::enable_if_t<std::is_integral_v<I>>>
  At(I i, std::source_location at = std::source_location::current())  // NOLINT: implicit
      : index(static_cast<int64_t>(i)), site(at) {}
};

// One element of a checked array: reading it or assigning to it asks the
// emulator first.
template <typename T>
class Element {
 public:
  using Value = std::remove_const_t<T>;
  Element(const seam_sim_view* view, At at) : view_(view), at_(at) {}

  operator Value() const {  // NOLINT: reads as the element's type
    Value value;
    std::memcpy(&value, runtime->access(view_, at_.index, 0, Site(at_.site)), sizeof value);
    return value;
  }
  const Element& operator=(const Value& value) const {
    static_assert(!std::is_const_v<T>, "a kernel's input is read-only");
    std::memcpy(runtime->access(view_, at_.index, 1, Site(at_.site)), &value, sizeof value);
    return *this;
  }
  const Element& operator=(const Element& other) const { return *this = static_cast<Value>(other); }

 private:
  const seam_sim_view* view_;
  At at_;
};

template <typename T>
class Array {
 public:
  Array(const seam_sim_view* view) : view_(view) {}  // NOLINT: from the emulator's views
  Element<T> operator[](At at) const { return Element<T>(view_, at); }

 private:
  const seam_sim_view* view_;
};

// Calls `kernel` with its parameters read from `arguments`, as
// cuLaunchKernel reads them.
template <typename... P, size_t... I>
void RunWith(void (*kernel)(P...), void* const* arguments, std::index_sequence<I...>) {
  auto read = [](void* at, auto* type) {
    std::remove_pointer_t<decltype(type)> value;
    std::memcpy(&value, at, sizeof value);
    return value;
  };
  kernel(read(arguments[I], static_cast<P*>(nullptr))...);
}
template <typename... P>
void Run(void (*kernel)(P...), void* const* arguments) {
  RunWith(kernel, arguments, std::index_sequence_for<P...>{});
}

}  // namespace seam_sim

extern "C" __attribute__((visibility("default"))) void seam_sim_bind(
    const seam_sim_runtime* runtime) {
  seam_sim::runtime = runtime;
}

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __align__(n) alignas(n)
#define threadIdx (::seam_sim::Current().thread_idx)
#define blockIdx (::seam_sim::Current().block_idx)
#define blockDim (::seam_sim::Current().block_dim)
#define gridDim (::seam_sim::Current().grid_dim)

// Global and shared memory as the kernels spell them.
template <typename T>
using seam_global = seam_sim::Array<T>;
template <typename T>
using seam_shared = seam_sim::Array<T>;

template <typename T>
inline seam_sim::Array<T> seam_assume_aligned(
    T* pointer, std::source_location at = std::source_location::current()) {
  return seam_sim::runtime->global_view(pointer, sizeof(T), seam_sim::Site(at));
}

template <typename T>
inline seam_sim::Array<T> seam_shared_array(
    int64_t offset, int64_t elements, std::source_location at = std::source_location::current()) {
  return seam_sim::runtime->shared_view(offset, elements, sizeof(T), seam_sim::Site(at));
}

inline void __syncthreads(std::source_location at = std::source_location::current()) {
  seam_sim::runtime->sync_threads(seam_sim::Site(at));
}

template <typename T>
inline T __shfl_xor_sync(unsigned mask, T value, int lane_mask, int width = 32,
                         std::source_location at = std::source_location::current()) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>);
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof value);
  bits = seam_sim::runtime->shfl_xor(mask, bits, lane_mask, width, seam_sim::Site(at));
  T out;
  std::memcpy(&out, &bits, sizeof out);
  return out;
}

namespace cooperative_groups {
struct grid_group {
  void sync(std::source_location at = std::source_location::current()) const {
    seam_sim::runtime->sync_grid(seam_sim::Site(at));
  }
};
inline grid_group this_grid() { return {}; }
}  // namespace cooperative_groups

namespace cuda {
namespace std = ::std;
}  // namespace cuda
