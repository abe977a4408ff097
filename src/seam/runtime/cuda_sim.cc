#include "seam/runtime/cuda_sim.h"

#include <chrono>
#include <cstring>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "seam/codegen/prelude.h"
#include "seam/ir/float16.h"
#include "seam/runtime/cuda_sim_launch.h"
#include "seam/runtime/jit.h"
#include "seam/runtime/nvrtc.h"
#include "seam/target/occupancy.h"
#include "seam/util/files.h"
#include "seam/util/status_macros.h"

namespace seam::runtime {
namespace {

int64_t CountLines(absl::string_view text) {
  return static_cast<int64_t>(std::count(text.begin(), text.end(), '\n'));
}

// Flags for the emulated kernels: optimized enough that a fiber's frames
// stay small and loops run at host speed, light enough to compile fast.
CompilerOptions SimCompilerOptions() {
  CompilerOptions options;
  options.flags = {
      "-O1", "-fPIC", "-shared", "-std=c++20", "-fno-math-errno", "-fvisibility=hidden", "-w"};
  return options;
}

class SimKernels final : public GpuKernels {
 public:
  SimKernels(std::shared_ptr<SharedObject> object, std::vector<sim::SimKernel> kernels,
             const target::DeviceSpec& device, sim::SimMemory& memory, uint64_t& phase)
      : object_(std::move(object)),
        kernels_(std::move(kernels)),
        device_(device),
        memory_(memory),
        phase_(phase) {}

  absl::StatusOr<int> MaxActiveBlocksPerMultiprocessor(
      size_t kernel, int64_t threads, int64_t dynamic_shared_bytes) const override {
    const sim::SimKernel& k = kernels_.at(kernel);
    target::KernelResources used;
    used.registers = k.registers;
    used.static_shared_bytes = k.static_shared_bytes;
    used.dynamic_shared_bytes = dynamic_shared_bytes;
    return static_cast<int>(target::ResidentBlocksPerUnit(device_, threads, used));
  }

  absl::Status Launch(size_t kernel, const cuda::LaunchShape& shape, void** args) const override {
    sim::SimKernel k = kernels_.at(kernel);
    SEAM_ASSIGN_OR_RETURN(int per_unit, MaxActiveBlocksPerMultiprocessor(
                                            kernel, shape.threads, shape.dynamic_shared_bytes));
    k.max_resident_blocks = int64_t{per_unit} * device_.units;
    return sim::RunLaunch(k, shape, args, memory_, phase_);
  }

 private:
  std::shared_ptr<SharedObject> object_;  // the kernels' code
  std::vector<sim::SimKernel> kernels_;
  const target::DeviceSpec& device_;
  sim::SimMemory& memory_;
  uint64_t& phase_;
};

// C = op(A)·op(B) as cuBLAS computes it: f16 and bf16 operands in f32.
template <typename In, typename Out, typename Acc>
void HostGemm(const cuda::GemmShape& g, const unsigned char* a, const unsigned char* b,
              unsigned char* c, Acc (*to_acc)(In), Out (*from_acc)(Acc)) {
  const int64_t stride_c = g.stride_c > 0 ? g.stride_c : g.m * g.n;
  std::vector<Acc> row(static_cast<size_t>(g.n));
  for (int64_t batch = 0; batch < g.batch; ++batch) {
    auto A = reinterpret_cast<const In*>(a) + batch * g.stride_a;
    auto B = reinterpret_cast<const In*>(b) + batch * g.stride_b;
    auto C = reinterpret_cast<Out*>(c) + batch * stride_c;
    for (int64_t i = 0; i < g.m; ++i) {
      std::fill(row.begin(), row.end(), Acc{});
      for (int64_t p = 0; p < g.k; ++p) {
        const Acc x = to_acc(g.transpose_a ? A[p * g.m + i] : A[i * g.k + p]);
        if (g.transpose_b) {
          for (int64_t j = 0; j < g.n; ++j) row[j] += x * to_acc(B[j * g.k + p]);
        } else {
          const In* b_row = B + p * g.n;
          for (int64_t j = 0; j < g.n; ++j) row[j] += x * to_acc(b_row[j]);
        }
      }
      for (int64_t j = 0; j < g.n; ++j) C[i * g.n + j] = from_acc(row[j]);
    }
  }
}

float Same(float x) { return x; }
double SameDouble(double x) { return x; }
float Bf16In(uint16_t x) { return BF16ToFloat(x); }
uint16_t Bf16Out(float x) { return FloatToBF16(x); }
float HalfIn(uint16_t x) { return HalfToFloat(x); }
uint16_t HalfOut(float x) { return FloatToHalf(x); }

class SimDevice final : public GpuDevice {
 public:
  explicit SimDevice(target::DeviceSpec spec) : spec_(std::move(spec)) {
    info_.name = absl::StrCat(spec_.name, " (emulated by cuda-sim)");
    info_.major = spec_.name == "a100" ? 8 : 9;
    info_.minor = 0;
    info_.multiprocessors = static_cast<int>(spec_.units);
    info_.max_threads_per_block = static_cast<int>(spec_.max_threads_per_block);
    info_.shared_bytes_per_block_optin = spec_.onchip_bytes_per_block;
    info_.l2_bytes = spec_.last_level_cache_bytes;
    info_.cooperative_launch = true;
  }

  const cuda::DeviceInfo& info() const override { return info_; }
  absl::StatusOr<cuda::DeviceBuffer> Allocate(int64_t bytes) override {
    return memory_.Allocate(bytes);
  }
  void Recycle(const cuda::DeviceBuffer& buffer) override { memory_.Recycle(buffer.ptr()); }

  absl::Status CopyToDevice(cuda::DevicePointer destination, const void* source,
                            int64_t bytes) override {
    if (bytes == 0) return absl::OkStatus();
    SEAM_ASSIGN_OR_RETURN(unsigned char* to, memory_.Host(destination, bytes, /*write=*/true));
    std::memcpy(to, source, static_cast<size_t>(bytes));
    return absl::OkStatus();
  }
  absl::Status CopyToHost(void* destination, cuda::DevicePointer source, int64_t bytes) override {
    if (bytes == 0) return absl::OkStatus();
    SEAM_ASSIGN_OR_RETURN(unsigned char* from, memory_.Host(source, bytes, /*write=*/false));
    std::memcpy(destination, from, static_cast<size_t>(bytes));
    return absl::OkStatus();
  }
  absl::Status Zero(cuda::DevicePointer destination, int64_t bytes) override {
    if (bytes == 0) return absl::OkStatus();
    SEAM_ASSIGN_OR_RETURN(unsigned char* to, memory_.Host(destination, bytes, /*write=*/true));
    std::memset(to, 0, static_cast<size_t>(bytes));
    return absl::OkStatus();
  }
  // Launches run to their end when made.
  absl::Status Synchronize() override { return absl::OkStatus(); }
  absl::StatusOr<double> ElapsedSeconds(const std::function<absl::Status()>& enqueue) override {
    auto start = std::chrono::steady_clock::now();
    SEAM_RETURN_IF_ERROR(enqueue());
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  absl::StatusOr<std::unique_ptr<GpuKernels>> Load(const CudaBinary& program) override {
    SEAM_ASSIGN_OR_RETURN(std::string source, CudaSimSource(program));
    SEAM_ASSIGN_OR_RETURN(CompileResult compiled, CompileAndLoad(source, SimCompilerOptions()));
    SEAM_ASSIGN_OR_RETURN(void* bind, compiled.object->Symbol("seam_sim_bind"));
    reinterpret_cast<seam_sim_bind_fn>(bind)(&sim::SimRuntime());
    std::vector<sim::SimKernel> kernels;
    for (size_t k = 0; k < program.kernels.size(); ++k) {
      const codegen::CudaKernel& kernel = program.kernels[k];
      SEAM_ASSIGN_OR_RETURN(void* run, compiled.object->Symbol("seam_sim_run_" + kernel.name));
      sim::SimKernel s;
      s.name = kernel.name;
      s.run = reinterpret_cast<seam_sim_run_fn>(run);
      s.parameters = kernel.parameters;
      s.launch_bounds = kernel.threads;
      if (k < program.resources.size()) {
        s.registers = program.resources[k].used.registers;
        s.static_shared_bytes = program.resources[k].used.static_shared_bytes;
      }
      s.max_threads_per_block = spec_.max_threads_per_block;
      s.shared_bytes_per_block = spec_.onchip_bytes_per_block;
      s.registers_per_block = spec_.registers_per_unit > 0 ? spec_.registers_per_unit : 65536;
      kernels.push_back(std::move(s));
    }
    return std::make_unique<SimKernels>(compiled.object, std::move(kernels), spec_, memory_,
                                        phase_);
  }

  bool HasGemm() const override { return true; }
  absl::Status Gemm(const cuda::GemmShape& g, cuda::DevicePointer a, cuda::DevicePointer b,
                    cuda::DevicePointer c) override {
    const DType out = g.output_dtype.value_or(g.dtype);
    const int64_t in_bytes = DTypeByteSize(g.dtype), out_bytes = DTypeByteSize(out);
    const int64_t batches_a = g.stride_a > 0 ? g.batch : 1,
                  batches_b = g.stride_b > 0 ? g.batch : 1;
    const int64_t stride_c = g.stride_c > 0 ? g.stride_c : g.m * g.n;
    SEAM_ASSIGN_OR_RETURN(
        const unsigned char* A,
        memory_.Host(a, ((batches_a - 1) * g.stride_a + g.m * g.k) * in_bytes, false));
    SEAM_ASSIGN_OR_RETURN(
        const unsigned char* B,
        memory_.Host(b, ((batches_b - 1) * g.stride_b + g.k * g.n) * in_bytes, false));
    SEAM_ASSIGN_OR_RETURN(
        unsigned char* C,
        memory_.Host(c, ((g.batch - 1) * stride_c + g.m * g.n) * out_bytes, true));
    if (g.dtype == DType::kF32 && out == DType::kF32) {
      HostGemm<float, float, float>(g, A, B, C, Same, Same);
    } else if (g.dtype == DType::kF64 && out == DType::kF64) {
      HostGemm<double, double, double>(g, A, B, C, SameDouble, SameDouble);
    } else if (g.dtype == DType::kBF16 && out == DType::kBF16) {
      HostGemm<uint16_t, uint16_t, float>(g, A, B, C, Bf16In, Bf16Out);
    } else if (g.dtype == DType::kBF16 && out == DType::kF32) {
      HostGemm<uint16_t, float, float>(g, A, B, C, Bf16In, Same);
    } else if (g.dtype == DType::kF16 && out == DType::kF16) {
      HostGemm<uint16_t, uint16_t, float>(g, A, B, C, HalfIn, HalfOut);
    } else if (g.dtype == DType::kF16 && out == DType::kF32) {
      HostGemm<uint16_t, float, float>(g, A, B, C, HalfIn, Same);
    } else {
      return absl::UnimplementedError(
          absl::StrCat("cuda-sim: no GEMM of ", DTypeName(g.dtype), " into ", DTypeName(out)));
    }
    return absl::OkStatus();
  }

 private:
  target::DeviceSpec spec_;
  cuda::DeviceInfo info_;
  sim::SimMemory memory_;
  uint64_t phase_ = 1;  // 1: the host's writes before the first launch
};

}  // namespace

absl::StatusOr<std::string> CudaSimSource(const CudaBinary& program) {
  const std::string prelude = codegen::CudaPrelude();
  if (!absl::StartsWith(program.source, prelude)) {
    return absl::InternalError("cuda-sim: the .cu does not start with the CUDA prelude");
  }
  // The kernels as NVRTC gets them, from the line after the prelude's.
  absl::string_view kernels = absl::string_view(program.source).substr(prelude.size());
  const int64_t first_line = CountLines(prelude) + 1;
  std::string source =
      absl::StrCat(codegen::CudaSimPrelude(), "\n#line ", first_line, " \"", program.name, ".cu\"",
                   kernels, "\n#line 1 \"cuda-sim entry points\"\n");
  for (const codegen::CudaKernel& k : program.kernels) {
    absl::StrAppend(
        &source, "extern \"C\" __attribute__((visibility(\"default\"))) void seam_sim_run_", k.name,
        "(void* const* arguments) { seam_sim::Run(&", k.name, ", arguments); }\n");
  }
  return source;
}

absl::Status WriteCudaSimSource(const std::string& dir, const CudaBinary& program) {
  SEAM_ASSIGN_OR_RETURN(std::string source, CudaSimSource(program));
  return WriteFile(absl::StrCat(dir, "/", program.name, ".sim.cc"), source);
}

absl::StatusOr<std::unique_ptr<GpuDevice>> OpenCudaSimDevice(const std::string& target) {
  SEAM_ASSIGN_OR_RETURN(target::DeviceSpec spec, DeviceSpecForTarget(target));
  if (absl::Status nvrtc = NvrtcAvailable(); !nvrtc.ok()) {
    return absl::UnavailableError(absl::StrCat(
        "cuda-sim takes its launch shapes from ptxas' report, through NVRTC: ", nvrtc.message()));
  }
  return std::make_unique<SimDevice>(std::move(spec));
}

}  // namespace seam::runtime
