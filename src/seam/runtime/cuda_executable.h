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

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "seam/eval/evaluator.h"
#include "seam/ir/literal.h"
#include "seam/runtime/buffer_pool.h"
#include "seam/runtime/cublas.h"
#include "seam/runtime/cuda_driver.h"
#include "seam/runtime/cuda_program.h"
#include "seam/runtime/executable.h"
#include "seam/runtime/gpu_device.h"
#include "seam/runtime/program.h"

namespace seam::runtime {

// A value in device memory: an array's buffer, or a tuple's elements.
// Buffers are shared (tuples and reshapes view them) and never written
// after the step producing them, so sharing needs no copies.
struct DeviceValue {
  Shape shape;
  std::shared_ptr<cuda::DeviceBuffer> buffer;
  std::vector<DeviceValue> elements;
};

class CudaExecutable {
 public:
  // Loads `program`'s cubin on `device` and binds the steps of `programs`
  // (scheduled for it) to its kernels. The module must outlive this.
  static absl::StatusOr<std::unique_ptr<CudaExecutable>> Load(const Module& module,
                                                              std::shared_ptr<GpuDevice> device,
                                                              CudaProgram program,
                                                              Programs programs);
  ~CudaExecutable();

  // Sends the arguments to the device, runs the entry computation and
  // brings its result back.
  absl::StatusOr<Literal> Run(absl::Span<const Literal> arguments);

  // The same in parts, for timing runs without the transfers. Device
  // values must not outlive this executable's context.
  absl::StatusOr<std::vector<DeviceValue>> Upload(absl::Span<const Literal> arguments);
  absl::StatusOr<DeviceValue> RunOnDevice(const std::vector<DeviceValue>& arguments);
  absl::StatusOr<Literal> Download(const DeviceValue& value);

  GpuDevice& device() { return *device_; }
  const ExecutableStats& stats() const { return stats_; }
  const fusion::FusionPlan& plan() const { return program_.plan; }
  const CudaProgram& program() const { return program_; }

 private:
  struct Launch {
    size_t kernel;  // in program_.kernels
    cuda::LaunchShape shape;
  };
  class DevicePool;

  CudaExecutable() = default;
  absl::Status Build(const Module& module, std::shared_ptr<GpuDevice> device, CudaProgram program,
                     Programs programs);
  absl::StatusOr<DeviceValue> RunProgram(const Program& program, std::vector<DeviceValue> arguments);
  absl::StatusOr<DeviceValue> RunInstruction(const Instruction& i,
                                             absl::flat_hash_map<const Instruction*, DeviceValue>& values);
  absl::Status RunKernel(const Step& step, absl::flat_hash_map<const Instruction*, DeviceValue>& values);
  absl::Status InterpretKernel(const Step& step,
                               absl::flat_hash_map<const Instruction*, DeviceValue>& values);
  absl::StatusOr<DeviceValue> Interpret(const Instruction& i, absl::Span<const DeviceValue* const> operands);
  absl::StatusOr<DeviceValue> Gemm(const Instruction& dot, const DeviceValue& lhs, const DeviceValue& rhs);
  absl::StatusOr<DeviceValue> Send(const Literal& value);
  absl::StatusOr<std::shared_ptr<cuda::DeviceBuffer>> Allocate(const Shape& shape);

  const Module* module_ = nullptr;
  std::shared_ptr<GpuDevice> device_;
  std::shared_ptr<DevicePool> pool_;
  CudaProgram program_;
  std::unique_ptr<GpuKernels> loaded_;
  absl::flat_hash_map<const Computation*, std::unique_ptr<Program>> programs_;
  std::vector<std::unique_ptr<codegen::KernelIr>> irs_;
  std::vector<Launch> launches_;
  absl::flat_hash_map<const Instruction*, DeviceValue> constants_;  // sent once, on first use
  Evaluator evaluator_;
  BufferPool host_pool_;  // host fallbacks' BLAS temporaries
  ExecutableStats stats_;
};

// Whether cuBLAS takes `dot`: float operands and result of one type, each
// operand already a stack of row-major matrices either way round.
bool CublasTakes(const Instruction& dot);

}  // namespace seam::runtime
