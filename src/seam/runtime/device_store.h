// Where the CUDA backend's values live during a run: device memory from a
// pool reused by size, constants sent once, generated kernels launched on
// the values' buffers, and dots through cuBLAS. Buffers are shared (tuples
// and reshapes view them) and never written after the step producing
// them, so sharing needs no copies and nothing is consumed in place.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "seam/eval/evaluator.h"
#include "seam/ir/literal.h"
#include "seam/runtime/buffer_pool.h"
#include "seam/runtime/cuda_driver.h"
#include "seam/runtime/gpu_device.h"
#include "seam/runtime/program_runner.h"

namespace seam::runtime {

// A value in device memory: an array's buffer, or a tuple's elements.
struct DeviceValue {
  Shape shape;
  std::shared_ptr<cuda::DeviceBuffer> buffer;
  std::vector<DeviceValue> elements;
};

class DeviceStore {
 public:
  using Value = DeviceValue;

  // A distinct kernel of the loaded program, and how it launches.
  struct LaunchEntry {
    size_t kernel;
    cuda::LaunchShape shape;
  };

  explicit DeviceStore(std::shared_ptr<GpuDevice> device);
  ~DeviceStore();

  // What ValueStore asks of a backend (see ProgramRunner).
  bool Sole(const DeviceValue&) const { return false; }
  absl::StatusOr<DeviceValue> Take(DeviceValue& value, bool) { return value; }
  DeviceValue View(const DeviceValue& value) { return value; }
  DeviceValue Share(const DeviceValue& value) { return value; }
  void Release(DeviceValue&) {}  // the last share hands the buffer back
  absl::StatusOr<DeviceValue> Constant(const Instruction& constant);
  DeviceValue Element(DeviceValue& tuple, int64_t index, bool) { return tuple.elements.at(index); }
  DeviceValue Tuple(const Shape& shape, std::vector<DeviceValue> elements) {
    return {shape, nullptr, std::move(elements)};
  }
  DeviceValue Reshape(DeviceValue bytes, const Shape& shape) {
    return {shape, std::move(bytes.buffer), {}};
  }
  absl::StatusOr<const Literal*> OnHost(const DeviceValue& value, HostCopies& copies);
  absl::StatusOr<DeviceValue> FromHost(Literal value) { return Send(value); }
  absl::StatusOr<std::optional<DeviceValue>> RunNative(const Step& step,
                                                       absl::Span<DeviceValue* const> reads);
  absl::Status Launch(const Step& step, SlotValues<DeviceValue>& values);
  absl::StatusOr<DeviceValue> LaunchOpKernel(const Step& step, absl::Span<DeviceValue* const> reads,
                                             std::optional<DeviceValue> in_place);
  BufferPool& host_pool() { return host_pool_; }  // host fallbacks' BLAS temporaries
  Evaluator& evaluator() { return evaluator_; }

  absl::StatusOr<DeviceValue> Send(const Literal& value);
  absl::StatusOr<Literal> Download(const DeviceValue& value);

  GpuDevice& device() { return *device_; }
  // The loaded kernels, and each launch step's entry (Step::launch indexes these).
  void set_kernels(std::unique_ptr<GpuKernels> kernels) { kernels_ = std::move(kernels); }
  GpuKernels* kernels() { return kernels_.get(); }
  std::vector<LaunchEntry>& launches() { return launches_; }

 private:
  class DevicePool;

  absl::StatusOr<std::shared_ptr<cuda::DeviceBuffer>> Allocate(const Shape& shape);
  absl::StatusOr<DeviceValue> Gemm(const Instruction& dot, const DeviceValue& lhs,
                                   const DeviceValue& rhs);

  std::shared_ptr<GpuDevice> device_;
  std::shared_ptr<DevicePool> pool_;
  std::unique_ptr<GpuKernels> kernels_;
  std::vector<LaunchEntry> launches_;
  absl::flat_hash_map<const Instruction*, DeviceValue> constants_;  // sent once, on first use
  Evaluator evaluator_;
  BufferPool host_pool_;
};

// Whether cuBLAS takes `dot`: float operands and result of one type, each
// operand already a stack of row-major matrices either way round.
bool CublasTakes(const Instruction& dot);

}  // namespace seam::runtime
