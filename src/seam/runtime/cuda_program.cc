#include "seam/runtime/cuda_program.h"

#include "absl/strings/str_cat.h"
#include "seam/runtime/cuda_driver.h"

namespace seam::runtime {

absl::StatusOr<fusion::DeviceSpec> DeviceSpecForTarget(const std::string& target) {
  if (target == "sm_90") return fusion::H100Spec();
  if (target == "sm_80") return fusion::A100Spec();
  return absl::InvalidArgumentError(
      absl::StrCat("unknown CUDA target '", target, "': expected sm_80 or sm_90"));
}

absl::Status CudaDevicePresent() { return cuda::DevicePresent(); }

}  // namespace seam::runtime
