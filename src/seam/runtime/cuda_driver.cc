#include "seam/runtime/cuda_driver.h"

#include <dlfcn.h>

#include <climits>
#include <cstddef>
#include <initializer_list>
#include <type_traits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "seam/util/status_macros.h"

namespace seam::runtime::cuda {
namespace {

// The driver's types, with cuda.h's sizes (its enums are int-sized).
using CUresult = int;
using CUdevice = int;
using CUevent = struct EventOpaque*;
using CUstream = struct StreamOpaque*;

// Values from cuda.h (CUDA 13; the driver keeps them stable).
constexpr CUresult kSuccess = 0;                      // CUDA_SUCCESS
constexpr CUresult kInvalidValue = 1;                 // CUDA_ERROR_INVALID_VALUE
constexpr CUresult kOutOfMemory = 2;                  // CUDA_ERROR_OUT_OF_MEMORY
constexpr CUresult kNoDevice = 100;                   // CUDA_ERROR_NO_DEVICE
constexpr CUresult kNotFound = 500;                   // CUDA_ERROR_NOT_FOUND
constexpr CUresult kLaunchOutOfResources = 701;       // CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
constexpr CUresult kCooperativeLaunchTooLarge = 720;  // CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE

// CUdevice_attribute.
constexpr int kMaxThreadsPerBlock = 1;
constexpr int kMultiprocessorCount = 16;
constexpr int kL2CacheSize = 38;
constexpr int kComputeCapabilityMajor = 75;
constexpr int kComputeCapabilityMinor = 76;
constexpr int kCooperativeLaunch = 95;
constexpr int kMaxSharedMemoryPerBlockOptin = 97;

constexpr int kFuncAttributeMaxDynamicSharedSizeBytes = 8;  // CUfunction_attribute
constexpr unsigned kEventDefault = 0;                       // CU_EVENT_DEFAULT
constexpr CUstream kDefaultStream = nullptr;

// Kernels get this much dynamic shared memory without opting in.
constexpr int64_t kDefaultDynamicSharedLimit = 48 * 1024;

// The slice of the driver API Seam calls.
struct Driver {
  void* handle = nullptr;
  absl::Status status;  // why it cannot be used
  CUresult (*init)(unsigned) = nullptr;
  CUresult (*device_get_count)(int*) = nullptr;
  CUresult (*device_get)(CUdevice*, int) = nullptr;
  CUresult (*device_get_name)(char*, int, CUdevice) = nullptr;
  CUresult (*device_get_attribute)(int*, int, CUdevice) = nullptr;
  CUresult (*device_total_mem)(size_t*, CUdevice) = nullptr;
  CUresult (*primary_ctx_retain)(ContextHandle*, CUdevice) = nullptr;
  CUresult (*primary_ctx_release)(CUdevice) = nullptr;
  CUresult (*ctx_set_current)(ContextHandle) = nullptr;
  CUresult (*ctx_synchronize)() = nullptr;
  CUresult (*mem_alloc)(DevicePointer*, size_t) = nullptr;
  CUresult (*mem_free)(DevicePointer) = nullptr;
  CUresult (*memcpy_htod)(DevicePointer, const void*, size_t) = nullptr;
  CUresult (*memcpy_dtoh)(void*, DevicePointer, size_t) = nullptr;
  CUresult (*memcpy_dtod)(DevicePointer, DevicePointer, size_t) = nullptr;
  CUresult (*memset_d8)(DevicePointer, unsigned char, size_t) = nullptr;
  CUresult (*module_load_data)(ModuleHandle*, const void*) = nullptr;
  CUresult (*module_unload)(ModuleHandle) = nullptr;
  CUresult (*module_get_function)(FunctionHandle*, ModuleHandle, const char*) = nullptr;
  CUresult (*func_set_attribute)(FunctionHandle, int, int) = nullptr;
  CUresult (*launch_kernel)(FunctionHandle, unsigned, unsigned, unsigned, unsigned, unsigned,
                            unsigned, unsigned, CUstream, void**, void**) = nullptr;
  CUresult (*launch_cooperative_kernel)(FunctionHandle, unsigned, unsigned, unsigned, unsigned,
                                        unsigned, unsigned, unsigned, CUstream, void**) = nullptr;
  CUresult (*occupancy_max_active_blocks)(int*, FunctionHandle, int, size_t) = nullptr;
  CUresult (*event_create)(CUevent*, unsigned) = nullptr;
  CUresult (*event_record)(CUevent, CUstream) = nullptr;
  CUresult (*event_synchronize)(CUevent) = nullptr;
  CUresult (*event_elapsed_time)(float*, CUevent, CUevent) = nullptr;
  CUresult (*event_destroy)(CUevent) = nullptr;
  CUresult (*get_error_name)(CUresult, const char**) = nullptr;
  CUresult (*get_error_string)(CUresult, const char**) = nullptr;
};

// "name: text" of a driver result, e.g. "CUDA_ERROR_OUT_OF_MEMORY: out of memory".
std::string Describe(const Driver& d, CUresult rc) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (d.get_error_name == nullptr || d.get_error_name(rc, &name) != kSuccess || name == nullptr) {
    return absl::StrCat("CUresult ", rc);
  }
  if (d.get_error_string(rc, &text) != kSuccess || text == nullptr) return name;
  return absl::StrCat(name, ": ", text);
}

Driver OpenDriver() {
  Driver d;
  d.handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (d.handle == nullptr) {
    d.status =
        absl::UnavailableError("no CUDA device: the CUDA driver (libcuda.so.1) is not installed");
    return d;
  }
  std::string missing;
  // Binds `f` to the first of `names` the library exports.
  auto bind = [&](auto& f, std::initializer_list<const char*> names) {
    for (const char* name : names) {
      f = reinterpret_cast<std::remove_reference_t<decltype(f)>>(dlsym(d.handle, name));
      if (f != nullptr) return;
    }
    if (missing.empty()) missing = *names.begin();
  };
  bind(d.init, {"cuInit"});
  bind(d.device_get_count, {"cuDeviceGetCount"});
  bind(d.device_get, {"cuDeviceGet"});
  bind(d.device_get_name, {"cuDeviceGetName"});
  bind(d.device_get_attribute, {"cuDeviceGetAttribute"});
  bind(d.device_total_mem, {"cuDeviceTotalMem_v2"});
  bind(d.primary_ctx_retain, {"cuDevicePrimaryCtxRetain"});
  bind(d.primary_ctx_release, {"cuDevicePrimaryCtxRelease_v2"});
  bind(d.ctx_set_current, {"cuCtxSetCurrent"});
  bind(d.ctx_synchronize, {"cuCtxSynchronize"});
  bind(d.mem_alloc, {"cuMemAlloc_v2"});
  bind(d.mem_free, {"cuMemFree_v2"});
  bind(d.memcpy_htod, {"cuMemcpyHtoD_v2"});
  bind(d.memcpy_dtoh, {"cuMemcpyDtoH_v2"});
  bind(d.memcpy_dtod, {"cuMemcpyDtoD_v2"});
  bind(d.memset_d8, {"cuMemsetD8_v2"});
  bind(d.module_load_data, {"cuModuleLoadData"});
  bind(d.module_unload, {"cuModuleUnload"});
  bind(d.module_get_function, {"cuModuleGetFunction"});
  bind(d.func_set_attribute, {"cuFuncSetAttribute"});
  bind(d.launch_kernel, {"cuLaunchKernel"});
  bind(d.launch_cooperative_kernel, {"cuLaunchCooperativeKernel"});
  bind(d.occupancy_max_active_blocks, {"cuOccupancyMaxActiveBlocksPerMultiprocessor"});
  bind(d.event_create, {"cuEventCreate"});
  bind(d.event_record, {"cuEventRecord"});
  bind(d.event_synchronize, {"cuEventSynchronize"});
  // cuda.h maps these two to their _v2 since CUDA 12.8 / 4.0; older
  // drivers export only the first versions, with the same signature.
  bind(d.event_elapsed_time, {"cuEventElapsedTime_v2", "cuEventElapsedTime"});
  bind(d.event_destroy, {"cuEventDestroy_v2", "cuEventDestroy"});
  bind(d.get_error_name, {"cuGetErrorName"});
  bind(d.get_error_string, {"cuGetErrorString"});
  if (!missing.empty()) {
    d.status = absl::UnavailableError(
        absl::StrCat("no CUDA device: libcuda.so.1 lacks ", missing, " (the driver is too old)"));
    return d;
  }
  if (CUresult rc = d.init(0); rc != kSuccess) {
    d.status = absl::UnavailableError(absl::StrCat("no CUDA device: cuInit: ", Describe(d, rc)));
  }
  return d;
}

// Opened on first use; never closed (kernels may run until exit).
const Driver& TheDriver() {
  static const Driver* driver = new Driver(OpenDriver());
  return *driver;
}

// `call` (the function and what it was asked) failed with `rc`.
absl::Status Error(CUresult rc, absl::string_view call) {
  std::string message = absl::StrCat(call, ": ", Describe(TheDriver(), rc));
  switch (rc) {
    case kInvalidValue:
      return absl::InvalidArgumentError(message);
    case kOutOfMemory:
    case kLaunchOutOfResources:
    case kCooperativeLaunchTooLarge:
      return absl::ResourceExhaustedError(message);
    case kNoDevice:
      return absl::UnavailableError(message);
    case kNotFound:
      return absl::NotFoundError(message);
    default:
      return absl::InternalError(message);
  }
}

absl::Status CheckBytes(int64_t bytes, absl::string_view what) {
  if (bytes < 0) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": negative size ", bytes));
  }
  return absl::OkStatus();
}

absl::StatusOr<int> Attribute(CUdevice device, int attribute, absl::string_view name) {
  int value = 0;
  if (CUresult rc = TheDriver().device_get_attribute(&value, attribute, device); rc != kSuccess) {
    return Error(rc, absl::StrCat("cuDeviceGetAttribute(", name, ")"));
  }
  return value;
}

absl::StatusOr<DeviceInfo> ReadInfo(CUdevice device) {
  const Driver& d = TheDriver();
  DeviceInfo info;
  char name[256] = {};
  if (CUresult rc = d.device_get_name(name, sizeof(name), device); rc != kSuccess) {
    return Error(rc, "cuDeviceGetName");
  }
  info.name = name;
  size_t global_bytes = 0;
  if (CUresult rc = d.device_total_mem(&global_bytes, device); rc != kSuccess) {
    return Error(rc, "cuDeviceTotalMem");
  }
  info.global_bytes = static_cast<int64_t>(global_bytes);
  SEAM_ASSIGN_OR_RETURN(info.major,
                        Attribute(device, kComputeCapabilityMajor, "compute capability major"));
  SEAM_ASSIGN_OR_RETURN(info.minor,
                        Attribute(device, kComputeCapabilityMinor, "compute capability minor"));
  SEAM_ASSIGN_OR_RETURN(info.multiprocessors,
                        Attribute(device, kMultiprocessorCount, "multiprocessors"));
  SEAM_ASSIGN_OR_RETURN(info.max_threads_per_block,
                        Attribute(device, kMaxThreadsPerBlock, "max threads per block"));
  SEAM_ASSIGN_OR_RETURN(
      info.shared_bytes_per_block_optin,
      Attribute(device, kMaxSharedMemoryPerBlockOptin, "shared memory per block (opt-in)"));
  SEAM_ASSIGN_OR_RETURN(info.l2_bytes, Attribute(device, kL2CacheSize, "L2 cache size"));
  SEAM_ASSIGN_OR_RETURN(int cooperative,
                        Attribute(device, kCooperativeLaunch, "cooperative launch"));
  info.cooperative_launch = cooperative != 0;
  return info;
}

// An event, destroyed on every path out of the timing.
struct Event {
  Event() = default;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event() {
    if (handle != nullptr) TheDriver().event_destroy(handle);
  }
  CUevent handle = nullptr;
};

}  // namespace

std::string DeviceInfo::Arch() const { return absl::StrCat("sm_", major, minor); }

absl::Status DevicePresent() {
  const Driver& d = TheDriver();
  if (!d.status.ok()) return d.status;
  int count = 0;
  if (CUresult rc = d.device_get_count(&count); rc != kSuccess) {
    return absl::UnavailableError(
        absl::StrCat("no CUDA device: cuDeviceGetCount: ", Describe(d, rc)));
  }
  if (count == 0) return absl::UnavailableError("no CUDA device: the driver reports none");
  return absl::OkStatus();
}

// DeviceBuffer.

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : owner_(std::exchange(other.owner_, nullptr)),
      ptr_(std::exchange(other.ptr_, 0)),
      bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    Free();
    owner_ = std::exchange(other.owner_, nullptr);
    ptr_ = std::exchange(other.ptr_, 0);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() { Free(); }

void DeviceBuffer::Free() {
  if (ptr_ != 0 && owner_ != nullptr) owner_->Free(ptr_);
  owner_ = nullptr;
  ptr_ = 0;
  bytes_ = 0;
}

// Function.

absl::Status Function::AllowDynamicShared(int64_t bytes) const {
  if (CUresult rc = TheDriver().func_set_attribute(handle_, kFuncAttributeMaxDynamicSharedSizeBytes,
                                                   static_cast<int>(bytes));
      rc != kSuccess) {
    return Error(rc, absl::StrCat("cuFuncSetAttribute(", name_, ", max dynamic shared memory ",
                                  bytes, " bytes)"));
  }
  return absl::OkStatus();
}

absl::Status Function::Launch(const LaunchShape& shape, void** args) const {
  if (shape.grid < 1 || shape.grid > INT_MAX || shape.threads < 1 || shape.threads > INT_MAX ||
      shape.dynamic_shared_bytes < 0 || shape.dynamic_shared_bytes > INT_MAX) {
    return absl::InvalidArgumentError(
        absl::StrCat("launch of ", name_, ": bad shape (", shape.grid, " blocks of ", shape.threads,
                     " threads, ", shape.dynamic_shared_bytes, " bytes of dynamic shared memory)"));
  }
  SEAM_RETURN_IF_ERROR(context_->MakeCurrent());
  if (shape.dynamic_shared_bytes > kDefaultDynamicSharedLimit &&
      shape.dynamic_shared_bytes > dynamic_shared_allowed_) {
    SEAM_RETURN_IF_ERROR(AllowDynamicShared(shape.dynamic_shared_bytes));
    dynamic_shared_allowed_ = shape.dynamic_shared_bytes;
  }
  const Driver& d = TheDriver();
  auto grid = static_cast<unsigned>(shape.grid);
  auto threads = static_cast<unsigned>(shape.threads);
  auto shared = static_cast<unsigned>(shape.dynamic_shared_bytes);
  CUresult rc = shape.cooperative ? d.launch_cooperative_kernel(handle_, grid, 1, 1, threads, 1, 1,
                                                                shared, kDefaultStream, args)
                                  : d.launch_kernel(handle_, grid, 1, 1, threads, 1, 1, shared,
                                                    kDefaultStream, args, /*extra=*/nullptr);
  if (rc != kSuccess) {
    return Error(rc,
                 absl::StrCat(shape.cooperative ? "cuLaunchCooperativeKernel(" : "cuLaunchKernel(",
                              name_, ", ", grid, " blocks of ", threads, " threads, ", shared,
                              " bytes of dynamic shared memory)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<int> Function::MaxActiveBlocksPerMultiprocessor(int64_t threads,
                                                               int64_t dynamic_shared_bytes) const {
  if (threads < 1 || threads > INT_MAX || dynamic_shared_bytes < 0 ||
      dynamic_shared_bytes > INT_MAX) {
    return absl::InvalidArgumentError(absl::StrCat("occupancy of ", name_, ": bad shape (", threads,
                                                   " threads, ", dynamic_shared_bytes,
                                                   " bytes of dynamic shared memory)"));
  }
  SEAM_RETURN_IF_ERROR(context_->MakeCurrent());
  // The occupancy calculator honours the function's cap as a launch would.
  if (dynamic_shared_bytes > kDefaultDynamicSharedLimit) {
    SEAM_RETURN_IF_ERROR(AllowDynamicShared(dynamic_shared_bytes));
  }
  int blocks = 0;
  if (CUresult rc = TheDriver().occupancy_max_active_blocks(
          &blocks, handle_, static_cast<int>(threads), static_cast<size_t>(dynamic_shared_bytes));
      rc != kSuccess) {
    return Error(rc, absl::StrCat("cuOccupancyMaxActiveBlocksPerMultiprocessor(", name_, ", ",
                                  threads, " threads, ", dynamic_shared_bytes, " bytes)"));
  }
  return blocks;
}

// Module.

Module::~Module() {
  if (context_->MakeCurrent().ok()) TheDriver().module_unload(handle_);
}

absl::StatusOr<cuda::Function> Module::Function(const std::string& name) const {
  SEAM_RETURN_IF_ERROR(context_->MakeCurrent());
  FunctionHandle function = nullptr;
  if (CUresult rc = TheDriver().module_get_function(&function, handle_, name.c_str());
      rc != kSuccess) {
    return Error(rc, absl::StrCat("cuModuleGetFunction(", name, ")"));
  }
  return cuda::Function(context_, function, name);
}

// Context.

absl::StatusOr<std::unique_ptr<Context>> Context::Open(int ordinal) {
  SEAM_RETURN_IF_ERROR(DevicePresent());
  const Driver& d = TheDriver();
  int count = 0;
  if (CUresult rc = d.device_get_count(&count); rc != kSuccess)
    return Error(rc, "cuDeviceGetCount");
  if (ordinal < 0 || ordinal >= count) {
    return absl::UnavailableError(
        absl::StrCat("no CUDA device: device ", ordinal, " asked for, the driver reports ", count));
  }
  CUdevice device = 0;
  if (CUresult rc = d.device_get(&device, ordinal); rc != kSuccess) {
    return Error(rc, absl::StrCat("cuDeviceGet(", ordinal, ")"));
  }
  SEAM_ASSIGN_OR_RETURN(DeviceInfo info, ReadInfo(device));
  ContextHandle handle = nullptr;
  if (CUresult rc = d.primary_ctx_retain(&handle, device); rc != kSuccess) {
    return Error(rc, absl::StrCat("cuDevicePrimaryCtxRetain(device ", ordinal, ")"));
  }
  return std::unique_ptr<Context>(new Context(ordinal, device, handle, std::move(info)));
}

Context::~Context() { TheDriver().primary_ctx_release(device_); }

absl::Status Context::MakeCurrent() const {
  if (CUresult rc = TheDriver().ctx_set_current(handle_); rc != kSuccess) {
    return Error(rc, absl::StrCat("cuCtxSetCurrent(device ", ordinal_, ")"));
  }
  return absl::OkStatus();
}

void Context::Free(DevicePointer ptr) const {
  if (MakeCurrent().ok()) TheDriver().mem_free(ptr);
}

absl::StatusOr<DeviceBuffer> Context::Allocate(int64_t bytes) {
  SEAM_RETURN_IF_ERROR(CheckBytes(bytes, "cuMemAlloc"));
  if (bytes == 0) return DeviceBuffer();  // the driver refuses empty allocations
  SEAM_RETURN_IF_ERROR(MakeCurrent());
  DevicePointer ptr = 0;
  if (CUresult rc = TheDriver().mem_alloc(&ptr, static_cast<size_t>(bytes)); rc != kSuccess) {
    return Error(rc, absl::StrCat("cuMemAlloc(", bytes, " bytes)"));
  }
  return DeviceBuffer(this, ptr, bytes);
}

// One transfer of `bytes` bytes by `call` (a driver call), in `context`;
// nothing to do for none.
template <typename Call>
absl::Status Transfer(const Context& context, absl::string_view name, int64_t bytes, Call call) {
  SEAM_RETURN_IF_ERROR(CheckBytes(bytes, name));
  if (bytes == 0) return absl::OkStatus();
  SEAM_RETURN_IF_ERROR(context.MakeCurrent());
  if (CUresult rc = call(static_cast<size_t>(bytes)); rc != kSuccess) {
    return Error(rc, absl::StrCat(name, "(", bytes, " bytes)"));
  }
  return absl::OkStatus();
}

absl::Status Context::CopyToDevice(DevicePointer destination, const void* source, int64_t bytes) {
  return Transfer(*this, "cuMemcpyHtoD", bytes,
                  [&](size_t n) { return TheDriver().memcpy_htod(destination, source, n); });
}

absl::Status Context::CopyToHost(void* destination, DevicePointer source, int64_t bytes) {
  return Transfer(*this, "cuMemcpyDtoH", bytes,
                  [&](size_t n) { return TheDriver().memcpy_dtoh(destination, source, n); });
}

absl::Status Context::CopyOnDevice(DevicePointer destination, DevicePointer source,
                                   int64_t bytes) {
  return Transfer(*this, "cuMemcpyDtoD", bytes,
                  [&](size_t n) { return TheDriver().memcpy_dtod(destination, source, n); });
}

absl::Status Context::Zero(DevicePointer destination, int64_t bytes) {
  return Transfer(*this, "cuMemsetD8", bytes,
                  [&](size_t n) { return TheDriver().memset_d8(destination, 0, n); });
}

absl::Status Context::Synchronize() {
  SEAM_RETURN_IF_ERROR(MakeCurrent());
  if (CUresult rc = TheDriver().ctx_synchronize(); rc != kSuccess) {
    return Error(rc, "cuCtxSynchronize");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Module>> Context::Load(const std::string& image) {
  if (image.empty()) return absl::InvalidArgumentError("cuModuleLoadData: empty image");
  SEAM_RETURN_IF_ERROR(MakeCurrent());
  ModuleHandle module = nullptr;
  // c_str(): PTX is read up to its terminating NUL; a cubin by its ELF header.
  if (CUresult rc = TheDriver().module_load_data(&module, image.c_str()); rc != kSuccess) {
    bool cubin = image.compare(0, 4,
                               "\x7f"
                               "ELF") == 0;
    return Error(rc, absl::StrCat("cuModuleLoadData(", cubin ? "cubin" : "PTX", ", ", image.size(),
                                  " bytes, for ", info_.Arch(), ")"));
  }
  return std::unique_ptr<Module>(new Module(this, module));
}

absl::StatusOr<double> Context::ElapsedSeconds(const std::function<absl::Status()>& enqueue) {
  SEAM_RETURN_IF_ERROR(MakeCurrent());
  const Driver& d = TheDriver();
  Event start, end;
  for (Event* event : {&start, &end}) {
    if (CUresult rc = d.event_create(&event->handle, kEventDefault); rc != kSuccess) {
      return Error(rc, "cuEventCreate");
    }
  }
  if (CUresult rc = d.event_record(start.handle, kDefaultStream); rc != kSuccess) {
    return Error(rc, "cuEventRecord(start)");
  }
  SEAM_RETURN_IF_ERROR(enqueue());
  SEAM_RETURN_IF_ERROR(MakeCurrent());  // `enqueue` may have switched contexts
  if (CUresult rc = d.event_record(end.handle, kDefaultStream); rc != kSuccess) {
    return Error(rc, "cuEventRecord(end)");
  }
  if (CUresult rc = d.event_synchronize(end.handle); rc != kSuccess) {
    return Error(rc, "cuEventSynchronize");
  }
  float milliseconds = 0;
  if (CUresult rc = d.event_elapsed_time(&milliseconds, start.handle, end.handle); rc != kSuccess) {
    return Error(rc, "cuEventElapsedTime");
  }
  return milliseconds / 1e3;
}

}  // namespace seam::runtime::cuda
