#include "seam/runtime/cuda_binary.h"

#include "absl/strings/str_cat.h"
#include "seam/runtime/cuda_driver.h"

namespace seam::runtime {

absl::StatusOr<target::DeviceSpec> DeviceSpecForTarget(const std::string& arch) {
  if (arch == "sm_90") return target::H100Spec();
  if (arch == "sm_80") return target::A100Spec();
  return absl::InvalidArgumentError(
      absl::StrCat("unknown CUDA target '", arch, "': expected sm_80 or sm_90"));
}

absl::Status CudaDevicePresent() { return cuda::DevicePresent(); }

}  // namespace seam::runtime
