// A real GPU as a GpuDevice: the driver's primary context of device 0, the
// program's cubin loaded as one module, cuBLAS opened on the first GEMM.
#include "seam/runtime/gpu_device.h"

#include <vector>

#include "seam/util/status_macros.h"

namespace seam::runtime {
namespace {

class DriverKernels final : public GpuKernels {
 public:
  DriverKernels(std::unique_ptr<cuda::Module> module, std::vector<cuda::Function> functions)
      : module_(std::move(module)), functions_(std::move(functions)) {}

  absl::StatusOr<int> MaxActiveBlocksPerMultiprocessor(
      size_t kernel, int64_t threads, int64_t dynamic_shared_bytes) const override {
    return functions_.at(kernel).MaxActiveBlocksPerMultiprocessor(threads, dynamic_shared_bytes);
  }
  absl::Status Launch(size_t kernel, const cuda::LaunchShape& shape, void** args) const override {
    return functions_.at(kernel).Launch(shape, args);
  }

 private:
  std::unique_ptr<cuda::Module> module_;
  std::vector<cuda::Function> functions_;  // valid while module_ lives
};

class DriverDevice final : public GpuDevice {
 public:
  explicit DriverDevice(std::unique_ptr<cuda::Context> context)
      : context_(std::move(context)), has_gemm_(cuda::CublasVersion().ok()) {}
  ~DriverDevice() override {
    context_->Synchronize().IgnoreError();  // queued work finishes before the handle goes
    blas_.reset();
  }

  const cuda::DeviceInfo& info() const override { return context_->info(); }
  absl::StatusOr<cuda::DeviceBuffer> Allocate(int64_t bytes) override {
    return context_->Allocate(bytes);
  }
  absl::Status CopyToDevice(cuda::DevicePointer destination, const void* source,
                            int64_t bytes) override {
    return context_->CopyToDevice(destination, source, bytes);
  }
  absl::Status CopyToHost(void* destination, cuda::DevicePointer source, int64_t bytes) override {
    return context_->CopyToHost(destination, source, bytes);
  }
  absl::Status Zero(cuda::DevicePointer destination, int64_t bytes) override {
    return context_->Zero(destination, bytes);
  }
  absl::Status Synchronize() override { return context_->Synchronize(); }
  absl::StatusOr<double> ElapsedSeconds(const std::function<absl::Status()>& enqueue) override {
    return context_->ElapsedSeconds(enqueue);
  }

  absl::StatusOr<std::unique_ptr<GpuKernels>> Load(const CudaBinary& program) override {
    SEAM_ASSIGN_OR_RETURN(std::unique_ptr<cuda::Module> module,
                          context_->Load(program.cubin.cubin));
    std::vector<cuda::Function> functions;
    for (const codegen::CudaKernel& kernel : program.kernels) {
      SEAM_ASSIGN_OR_RETURN(cuda::Function function, module->Function(kernel.name));
      functions.push_back(function);
    }
    return std::make_unique<DriverKernels>(std::move(module), std::move(functions));
  }

  bool HasGemm() const override { return has_gemm_; }
  absl::Status Gemm(const cuda::GemmShape& shape, cuda::DevicePointer a, cuda::DevicePointer b,
                    cuda::DevicePointer c) override {
    if (blas_ == nullptr) {
      SEAM_ASSIGN_OR_RETURN(blas_, cuda::Blas::Create(*context_));
    }
    return blas_->Gemm(shape, a, b, c);
  }

 private:
  std::unique_ptr<cuda::Context> context_;
  const bool has_gemm_;
  std::unique_ptr<cuda::Blas> blas_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<GpuDevice>> OpenCudaDevice() {
  SEAM_ASSIGN_OR_RETURN(std::unique_ptr<cuda::Context> context, cuda::Context::Open());
  return std::make_unique<DriverDevice>(std::move(context));
}

}  // namespace seam::runtime
