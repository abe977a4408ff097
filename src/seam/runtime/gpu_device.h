// The device a CUDA program runs on, as the CUDA backend's runtime sees it:
// memory, the loaded kernels of one compiled program, and matrix products.
// Two implement it: a real GPU through the CUDA driver and cuBLAS
// (OpenCudaDevice), and the emulator that runs the same kernels on the CPU
// under CUDA's execution model. Planning, launch shapes,
// buffer assignment and the program schedule are the backend's, the same
// for both.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "seam/runtime/cublas.h"
#include "seam/runtime/cuda_binary.h"
#include "seam/runtime/cuda_driver.h"

namespace seam::runtime {

// The kernels of one CudaBinary, loaded: kernel k is binary.kernels[k].
class GpuKernels {
 public:
  virtual ~GpuKernels() = default;

  // How many blocks of kernel `kernel` fit on one multiprocessor at once.
  virtual absl::StatusOr<int> MaxActiveBlocksPerMultiprocessor(
      size_t kernel, int64_t threads, int64_t dynamic_shared_bytes) const = 0;
  // `args` holds one pointer per kernel parameter, each to that
  // parameter's value (a DevicePointer). Errors may surface at the next
  // synchronizing call.
  virtual absl::Status Launch(size_t kernel, const cuda::LaunchShape& shape, void** args) const = 0;
};

class GpuDevice {
 public:
  virtual ~GpuDevice() = default;

  virtual const cuda::DeviceInfo& info() const = 0;

  virtual absl::StatusOr<cuda::DeviceBuffer> Allocate(int64_t bytes) = 0;
  // A pooled buffer handed out again: it holds a new value from now on,
  // and nothing of the one before may be read.
  virtual void Recycle(const cuda::DeviceBuffer& buffer) { (void)buffer; }
  virtual absl::Status CopyToDevice(cuda::DevicePointer destination, const void* source,
                                    int64_t bytes) = 0;
  virtual absl::Status CopyToHost(void* destination, cuda::DevicePointer source, int64_t bytes) = 0;
  virtual absl::Status Zero(cuda::DevicePointer destination, int64_t bytes) = 0;
  // Waits for all work queued so far; reports a failure of that work.
  virtual absl::Status Synchronize() = 0;
  // The time the device takes for the work `enqueue` queues (see
  // cuda::Context::ElapsedSeconds).
  virtual absl::StatusOr<double> ElapsedSeconds(const std::function<absl::Status()>& enqueue) = 0;

  // Loads the kernels of `binary`, compiled for this device's target.
  virtual absl::StatusOr<std::unique_ptr<GpuKernels>> Load(const CudaBinary& binary) = 0;

  // Whether Gemm serves dots here (cuBLAS is present).
  virtual bool HasGemm() const = 0;
  // Queues C = op(A)·op(B) (cuda::GemmShape) on device buffers.
  virtual absl::Status Gemm(const cuda::GemmShape& shape, cuda::DevicePointer a,
                            cuda::DevicePointer b, cuda::DevicePointer c) = 0;
};

// Device 0 through the CUDA driver; Unavailable ("no CUDA device: ...")
// without a driver or a device.
absl::StatusOr<std::unique_ptr<GpuDevice>> OpenCudaDevice();

}  // namespace seam::runtime
