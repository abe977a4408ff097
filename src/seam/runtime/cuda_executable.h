// A module compiled for an NVIDIA GPU: its kernels compiled ahead of time
// for the device's architecture (through NVRTC) and loaded as one cubin,
// run by the same schedule of steps as on the CPU with every
// value in device memory from step to step. The device is a real GPU or
// its emulation on the CPU (a GpuDevice either way). Dots run through cuBLAS; what
// no GPU path covers runs on the host (other dots and convolutions through
// the host's BLAS, the rest in the interpreter), its operands brought over
// and its result sent back, and is listed in stats().fallbacks.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "seam/ir/literal.h"
#include "seam/runtime/cuda_binary.h"
#include "seam/runtime/device_store.h"
#include "seam/runtime/gpu_device.h"
#include "seam/runtime/program.h"
#include "seam/runtime/run_stats.h"

namespace seam::runtime {

class CudaExecutable {
 public:
  // Loads `binary`'s cubin on `device` and binds the steps of `programs`
  // (scheduled for it) to its kernels. The module must outlive this.
  static absl::StatusOr<std::unique_ptr<CudaExecutable>> Load(const Module& module,
                                                              std::shared_ptr<GpuDevice> device,
                                                              CudaBinary binary, Programs programs);
  ~CudaExecutable();

  // Sends the arguments to the device, runs the entry computation and
  // brings its result back.
  absl::StatusOr<Literal> Run(absl::Span<const Literal> arguments);

  // The same in parts, for timing runs without the transfers. Device
  // values must not outlive this executable's context.
  absl::StatusOr<std::vector<DeviceValue>> Upload(absl::Span<const Literal> arguments);
  absl::StatusOr<DeviceValue> RunOnDevice(const std::vector<DeviceValue>& arguments);
  absl::StatusOr<Literal> Download(const DeviceValue& value);

  GpuDevice& device() { return store_->device(); }
  const ExecutableStats& stats() const { return stats_; }

 private:
  CudaExecutable() = default;
  absl::Status Build(const Module& module, std::shared_ptr<GpuDevice> device, CudaBinary binary,
                     Programs programs);

  const Module* module_ = nullptr;
  CudaBinary binary_;
  ProgramMap programs_;
  std::vector<std::unique_ptr<codegen::KernelIr>> irs_;
  std::unique_ptr<DeviceStore> store_;
  ExecutableStats stats_;
};

}  // namespace seam::runtime
