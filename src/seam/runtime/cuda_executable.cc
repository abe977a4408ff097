#include "seam/runtime/cuda_executable.h"

#include <algorithm>
#include <chrono>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "seam/eval/evaluator.h"
#include "seam/util/status_macros.h"

namespace seam::runtime {

CudaExecutable::~CudaExecutable() = default;

absl::StatusOr<std::unique_ptr<CudaExecutable>> CudaExecutable::Load(
    const Module& module, std::shared_ptr<GpuDevice> device, CudaBinary binary, Programs programs) {
  std::unique_ptr<CudaExecutable> executable(new CudaExecutable());
  SEAM_RETURN_IF_ERROR(
      executable->Build(module, std::move(device), std::move(binary), std::move(programs)));
  return executable;
}

absl::Status CudaExecutable::Build(const Module& module, std::shared_ptr<GpuDevice> device,
                                   CudaBinary binary, Programs programs) {
  module_ = &module;
  const cuda::DeviceInfo& info = device->info();
  store_ = std::make_unique<DeviceStore>(std::move(device));
  binary_ = std::move(binary);
  stats_.CountPrograms(programs);
  programs_ = std::move(programs.by_computation);
  irs_ = std::move(programs.irs);
  stats_.distinct_kernels = static_cast<int64_t>(binary_.kernels.size());
  stats_.codegen_seconds = binary_.codegen_seconds;
  stats_.compile_seconds = binary_.ptx.seconds + binary_.cubin.seconds;
  stats_.cache_hit = binary_.cubin.cache_hit;
  stats_.shared_object = binary_.cubin.path;
  if (binary_.kernels.empty()) return absl::OkStatus();

  // Loading counts as compiling: the emulator compiles the kernels for
  // the host here.
  const auto load_start = std::chrono::steady_clock::now();
  SEAM_ASSIGN_OR_RETURN(std::unique_ptr<GpuKernels> loaded, store_->device().Load(binary_));
  store_->set_kernels(std::move(loaded));
  stats_.compile_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count();
  std::vector<DeviceStore::LaunchEntry>& launches = store_->launches();
  absl::flat_hash_map<std::string, int> launch_of;
  for (size_t k = 0; k < binary_.kernels.size(); ++k) {
    const codegen::CudaKernel& kernel = binary_.kernels[k];
    cuda::LaunchShape shape{binary_.resources[k].grid, kernel.threads, kernel.shared_bytes,
                            kernel.grid_barriers};
    if (shape.cooperative) {
      // Every block of a kernel with grid barriers must be resident: the
      // plan assumed the target's SM count, the device may have fewer.
      SEAM_ASSIGN_OR_RETURN(int per_sm, store_->kernels()->MaxActiveBlocksPerMultiprocessor(
                                            k, shape.threads, shape.dynamic_shared_bytes));
      if (per_sm == 0) {
        return absl::ResourceExhaustedError(
            absl::StrCat("kernel ", kernel.name, " fits no block on an SM of ", info.name));
      }
      shape.grid = std::min<int64_t>(shape.grid, int64_t{per_sm} * info.multiprocessors);
    }
    launch_of[kernel.name] = static_cast<int>(launches.size());
    launches.push_back({k, shape});
  }
  for (auto& [computation, program] : programs_) {
    for (Step& s : program->steps) {
      if (s.kind != Step::Kind::kKernel) continue;
      auto it = launch_of.find(s.symbol);
      if (it == launch_of.end()) return absl::InternalError(absl::StrCat("no loaded kernel ", s.symbol));
      s.launch = it->second;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<DeviceValue>> CudaExecutable::Upload(absl::Span<const Literal> arguments) {
  SEAM_RETURN_IF_ERROR(CheckArguments(*module_->entry(), arguments));
  std::vector<DeviceValue> sent;
  for (const Literal& a : arguments) {
    SEAM_ASSIGN_OR_RETURN(DeviceValue value, store_->Send(a));
    sent.push_back(std::move(value));
  }
  return sent;
}

absl::StatusOr<Literal> CudaExecutable::Download(const DeviceValue& value) {
  return store_->Download(value);
}

absl::StatusOr<DeviceValue> CudaExecutable::RunOnDevice(const std::vector<DeviceValue>& arguments) {
  if (arguments.size() != module_->entry()->parameters().size()) {
    return absl::InvalidArgumentError(absl::StrCat("the entry computation takes ",
                                                   module_->entry()->parameters().size(),
                                                   " arguments, not ", arguments.size()));
  }
  ProgramRunner<DeviceStore> runner(*store_, programs_, stats_, /*time_steps=*/false);
  return runner.Run(*programs_.at(module_->entry()), arguments);
}

absl::StatusOr<Literal> CudaExecutable::Run(absl::Span<const Literal> arguments) {
  SEAM_ASSIGN_OR_RETURN(std::vector<DeviceValue> sent, Upload(arguments));
  SEAM_ASSIGN_OR_RETURN(DeviceValue result, RunOnDevice(sent));
  return Download(result);
}

}  // namespace seam::runtime
