// Measures the GPU numbers Seam's cost model uses (fusion/device_spec.cc):
// copy bandwidth, kernel launch overhead, the cost of a grid-wide barrier
// inside a cooperative kernel, and a block barrier. Medians of repeated
// runs; run by gpu_microbench.sh on a machine with an NVIDIA GPU.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

namespace cg = cooperative_groups;

#define CHECK(x)                                                                  \
  do {                                                                            \
    cudaError_t e = (x);                                                          \
    if (e != cudaSuccess) {                                                       \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); \
      return 1;                                                                   \
    }                                                                             \
  } while (0)

__global__ void Copy(const float4* __restrict__ in, float4* __restrict__ out, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    out[i] = in[i];
  }
}

__global__ void Empty() {}

__global__ void GridSyncs(int count, int* sink) {
  cg::grid_group grid = cg::this_grid();
  for (int k = 0; k < count; ++k) grid.sync();
  if (grid.thread_rank() == 0) *sink = count;
}

__global__ void BlockSyncs(int count, int* sink) {
  for (int k = 0; k < count; ++k) __syncthreads();
  if (threadIdx.x == 0 && blockIdx.x == 0) *sink = count;
}

template <typename F>
float MedianMs(F run, int repeats) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  std::vector<float> ms;
  run();  // warm-up
  for (int r = 0; r < repeats; ++r) {
    cudaEventRecord(start);
    run();
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float t = 0;
    cudaEventElapsedTime(&t, start, stop);
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

int main() {
  cudaDeviceProp p;
  CHECK(cudaGetDeviceProperties(&p, 0));
  std::printf("device: %s, %d SMs, %zu KiB shared/block (opt-in %zu), %zu KiB shared/SM, "
              "%d regs/SM, L2 %d MiB, %d max threads/SM\n",
              p.name, p.multiProcessorCount, p.sharedMemPerBlock / 1024,
              p.sharedMemPerBlockOptin / 1024, p.sharedMemPerMultiprocessor / 1024,
              p.regsPerMultiprocessor, p.l2CacheSize >> 20, p.maxThreadsPerMultiProcessor);

  const size_t bytes = size_t(1) << 30;  // 1 GiB each way, far past L2
  float4 *a, *b;
  CHECK(cudaMalloc(&a, bytes));
  CHECK(cudaMalloc(&b, bytes));
  CHECK(cudaMemset(a, 0, bytes));
  size_t n = bytes / sizeof(float4);
  float memcpy_ms = MedianMs([&] { cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice); }, 21);
  int blocks = p.multiProcessorCount * 8;
  float kernel_ms = MedianMs([&] { Copy<<<blocks, 256>>>(a, b, n); }, 21);
  CHECK(cudaGetLastError());
  std::printf("copy bandwidth (read + write): cudaMemcpy %.0f GB/s, copy kernel %.0f GB/s\n",
              2.0 * bytes / memcpy_ms / 1e6, 2.0 * bytes / kernel_ms / 1e6);

  const int launches = 1000;
  float launch_ms = MedianMs([&] { for (int k = 0; k < launches; ++k) Empty<<<1, 32>>>(); }, 11);
  float sync_ms = MedianMs([&] { Empty<<<1, 32>>>(); cudaDeviceSynchronize(); }, 101);
  std::printf("launch: %.2f us each back to back, %.2f us launch + synchronize\n",
              launch_ms * 1000 / launches, sync_ms * 1000);

  int* sink;
  CHECK(cudaMalloc(&sink, sizeof(int)));
  int per_sm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, GridSyncs, 256, 0));
  int grid = per_sm * p.multiProcessorCount;
  for (int count : {0, 1000}) {
    void* args[] = {&count, &sink};
    float ms = MedianMs([&] {
      cudaLaunchCooperativeKernel((void*)GridSyncs, grid, 256, args, 0, 0);
    }, 11);
    CHECK(cudaGetLastError());
    if (count == 0) {
      std::printf("cooperative launch (%d blocks x 256): %.2f us\n", grid, ms * 1000);
    } else {
      std::printf("grid barrier: %.3f us each (%d resident blocks)\n", ms * 1000 / count, grid);
    }
  }
  const int block_syncs = 100000;
  float block_ms = MedianMs([&] { BlockSyncs<<<p.multiProcessorCount, 1024>>>(block_syncs, sink); }, 11);
  std::printf("block barrier (1024 threads): %.4f us each\n", block_ms * 1000 / block_syncs);
  return 0;
}
