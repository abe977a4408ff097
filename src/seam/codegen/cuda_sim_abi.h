// How the CUDA emulator (`--backend=cuda-sim`) and the kernels it compiled
// for the host talk, shared word for word by the emulator and (embedded in
// the emulated prelude) the generated code. The emulator runs each CUDA
// thread as a fiber; everything a thread does that another thread could
// see (a barrier, a shuffle, an access to shared or global memory) goes
// through this table, so the emulator can schedule it and check it.
//
// A compiled module exports, with C linkage:
//   void seam_sim_bind(const seam_sim_runtime* runtime);   once, after loading
//   void seam_sim_run_<kernel>(void* const* arguments);    the kernel's body,
//       for the calling thread (one fiber), its parameters read from
//       `arguments` as cuLaunchKernel reads them.
#pragma once

#include <cstdint>

extern "C" {
struct seam_sim_dim3 {
  unsigned x, y, z;
};

// The built-in variables of the running thread.
struct seam_sim_thread {
  seam_sim_dim3 thread_idx, block_idx, block_dim, grid_dim;
};

// Where in the .cu a call comes from (source_location: `#line` maps the
// emulated file's lines to those of the .cu NVRTC compiles).
struct seam_sim_site {
  const char* file;
  unsigned line;
};

// A region of global or shared memory as the kernel sees it: `elements`
// elements of `element_bytes` bytes from `base`. Opaque to kernels.
struct seam_sim_view;

struct seam_sim_runtime {
  const seam_sim_thread* (*current)();
  // __syncthreads(), grid.sync().
  void (*sync_threads)(seam_sim_site site);
  void (*sync_grid)(seam_sim_site site);
  // __shfl_xor_sync of up to 8 bytes: the value of lane (this ^ lane_mask)
  // among the lanes of `mask`, within groups of `width` lanes.
  uint64_t (*shfl_xor)(unsigned mask, uint64_t value, int lane_mask, int width, seam_sim_site site);
  // A kernel parameter's pointer, as an array of the buffer it points
  // into (assumed 16-byte aligned, as the kernels assume).
  const seam_sim_view* (*global_view)(const void* pointer, int64_t element_bytes,
                                      seam_sim_site site);
  // `elements` elements at byte `offset` of the block's dynamic shared
  // memory.
  const seam_sim_view* (*shared_view)(int64_t offset, int64_t elements, int64_t element_bytes,
                                      seam_sim_site site);
  // Element `index` of `view`, checked (bounds, and against the other
  // threads' accesses since the last barrier) before it is read or
  // written. A failed check ends the launch: the call does not return.
  void* (*access)(const seam_sim_view* view, int64_t index, int write, seam_sim_site site);
};

typedef void (*seam_sim_bind_fn)(const seam_sim_runtime* runtime);
typedef void (*seam_sim_run_fn)(void* const* arguments);
}
