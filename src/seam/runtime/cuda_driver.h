// The CUDA driver API, opened at run time (dlopen of libcuda.so.1, once per
// process), so Seam builds and runs where there is no GPU and says why only
// when asked to use one. No CUDA header is included: the few types and
// constants used are declared in the implementation with the driver's values.
//
// A Context is the primary context of one device; it makes itself current
// on the calling thread in every call that needs it, so any thread may use
// it. Buffers, modules and functions belong to the context they came from
// and must not outlive it. All work goes to the default stream.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace seam::runtime::cuda {

using DevicePointer = uint64_t;  // CUdeviceptr

// Opaque driver handles (CUcontext, CUmodule, CUfunction).
using ContextHandle = struct ContextOpaque*;
using ModuleHandle = struct ModuleOpaque*;
using FunctionHandle = struct FunctionOpaque*;

// Ok when the driver opens, initializes and reports at least one device;
// otherwise Unavailable, its message starting "no CUDA device: ".
absl::Status DevicePresent();

struct DeviceInfo {
  std::string name;
  int major = 0;  // compute capability
  int minor = 0;
  int multiprocessors = 0;
  int64_t global_bytes = 0;
  int max_threads_per_block = 0;
  int64_t shared_bytes_per_block_optin = 0;  // dynamic + static, once opted in
  int64_t l2_bytes = 0;
  bool cooperative_launch = false;

  std::string Arch() const;  // "sm_90"
};

class Context;

// Who hands out device memory and takes it back: a driver context, or its
// emulation (the CUDA emulator).
class MemoryOwner {
 public:
  virtual void Free(DevicePointer ptr) const = 0;

 protected:
  ~MemoryOwner() = default;
};

// Device memory, freed when the owner goes away (a failure to free is
// ignored there, as nothing could be done about it).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const MemoryOwner* owner, DevicePointer ptr, int64_t bytes)
      : owner_(owner), ptr_(ptr), bytes_(bytes) {}
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  DevicePointer ptr() const { return ptr_; }
  int64_t bytes() const { return bytes_; }

 private:
  void Free();

  const MemoryOwner* owner_ = nullptr;
  DevicePointer ptr_ = 0;
  int64_t bytes_ = 0;
};

// A 1-D launch of `grid` blocks of `threads` threads.
struct LaunchShape {
  int64_t grid = 1;
  int64_t threads = 1;
  int64_t dynamic_shared_bytes = 0;
  bool cooperative = false;  // blocks may synchronize (grid.sync()): all must be resident
};

// A kernel of a loaded Module; a value, valid while its Module lives.
class Function {
 public:
  // `args` holds one pointer per kernel parameter, each to that
  // parameter's value. The launch is asynchronous: errors while the kernel
  // runs surface at the next synchronizing call.
  absl::Status Launch(const LaunchShape& shape, void** args) const;

  // How many blocks of `threads` threads and `dynamic_shared_bytes` fit on
  // one multiprocessor at once.
  absl::StatusOr<int> MaxActiveBlocksPerMultiprocessor(int64_t threads,
                                                       int64_t dynamic_shared_bytes) const;

  const std::string& name() const { return name_; }

 private:
  friend class Module;
  Function(Context* context, FunctionHandle handle, std::string name)
      : context_(context), handle_(handle), name_(std::move(name)) {}
  // Raising the dynamic shared memory cap is needed above the default 48 KiB.
  absl::Status AllowDynamicShared(int64_t bytes) const;

  Context* context_;
  FunctionHandle handle_;
  std::string name_;
  // The dynamic shared memory cap the function was raised to: raised again
  // only for a launch above it, not at every launch.
  mutable int64_t dynamic_shared_allowed_ = 0;
};

// Code loaded onto the device, unloaded when the Module goes away.
class Module {
 public:
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  ~Module();

  absl::StatusOr<cuda::Function> Function(const std::string& name) const;

 private:
  friend class Context;
  Module(Context* context, ModuleHandle handle) : context_(context), handle_(handle) {}

  Context* context_;
  ModuleHandle handle_;
};

class Context final : public MemoryOwner {
 public:
  // Retains the primary context of device `ordinal`; Unavailable ("no
  // CUDA device: ...") without a driver or such a device.
  static absl::StatusOr<std::unique_ptr<Context>> Open(int ordinal = 0);

  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  ~Context();

  const DeviceInfo& info() const { return info_; }
  int ordinal() const { return ordinal_; }

  // Binds this context to the calling thread (every call below does it).
  absl::Status MakeCurrent() const;

  void Free(DevicePointer ptr) const override;

  absl::StatusOr<DeviceBuffer> Allocate(int64_t bytes);
  absl::Status CopyToDevice(DevicePointer destination, const void* source, int64_t bytes);
  absl::Status CopyToHost(void* destination, DevicePointer source, int64_t bytes);
  absl::Status CopyOnDevice(DevicePointer destination, DevicePointer source, int64_t bytes);
  absl::Status Zero(DevicePointer destination, int64_t bytes);
  // Waits for all work on the device to finish.
  absl::Status Synchronize();

  // Loads a cubin or PTX text (the driver tells them apart; it compiles PTX
  // for this device).
  absl::StatusOr<std::unique_ptr<Module>> Load(const std::string& image);

  // Seconds from an event recorded on the default stream before `enqueue`
  // submits its work to one recorded after it: the device's time for that
  // work, or the host's time to submit it where that is longer.
  absl::StatusOr<double> ElapsedSeconds(const std::function<absl::Status()>& enqueue);

 private:
  Context(int ordinal, int device, ContextHandle handle, DeviceInfo info)
      : ordinal_(ordinal), device_(device), handle_(handle), info_(std::move(info)) {}

  int ordinal_;
  int device_;  // CUdevice
  ContextHandle handle_;
  DeviceInfo info_;
};

}  // namespace seam::runtime::cuda
