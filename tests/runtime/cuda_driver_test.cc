// The CUDA driver and cuBLAS, opened at run time (cuda_driver.h, cublas.h).
// Without a device (this machine, CI) opening one must say why, as
// Unavailable, and the device tests skip. With one they allocate, copy,
// launch kernels compiled by NVRTC (plainly, cooperatively, with more than
// 48 KiB of dynamic shared memory), query occupancy, time with events, and
// multiply with cuBLAS, each result checked against the host.
#include "seam/runtime/cuda_driver.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "seam/compiler/cuda_compiler.h"
#include "seam/ir/float16.h"
#include "seam/runtime/cublas.h"
#include "seam/runtime/nvrtc.h"

namespace seam::runtime::cuda {
namespace {

TEST(CudaDriverTest, OpeningWithoutDeviceSaysWhy) {
  absl::StatusOr<std::unique_ptr<Context>> context = Context::Open();
  EXPECT_EQ(context.ok(), CudaDevicePresent().ok());
  if (context.ok()) GTEST_SKIP() << "a CUDA device is present: " << (*context)->info().name;
  EXPECT_EQ(context.status().code(), absl::StatusCode::kUnavailable) << context.status();
  EXPECT_TRUE(absl::StartsWith(context.status().message(), "no CUDA device: ")) << context.status();
  EXPECT_TRUE(absl::StartsWith(CudaDevicePresent().message(), "no CUDA device: "))
      << CudaDevicePresent();
}

TEST(CudaDriverTest, OpeningAnAbsentOrdinalSaysWhy) {
  absl::StatusOr<std::unique_ptr<Context>> context = Context::Open(1000);
  ASSERT_FALSE(context.ok());
  EXPECT_EQ(context.status().code(), absl::StatusCode::kUnavailable) << context.status();
  EXPECT_TRUE(absl::StartsWith(context.status().message(), "no CUDA device: ")) << context.status();
}

TEST(CudaBlasLibraryTest, ReportsVersionWithoutDevice) {
  absl::StatusOr<std::string> version = CublasVersion();
  if (!version.ok()) {
    EXPECT_EQ(version.status().code(), absl::StatusCode::kUnavailable) << version.status();
    GTEST_SKIP() << version.status();
  }
  int dots = 0;
  for (char c : *version) dots += c == '.';
  EXPECT_EQ(dots, 2) << *version;
  EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(version->front()))) << *version;
}

// A context on device 0, or a skip.
class CudaDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<Context>> context = Context::Open();
    if (!context.ok()) GTEST_SKIP() << context.status();
    context_ = *std::move(context);
  }

  // `values` in a new device buffer.
  DeviceBuffer Upload(const std::vector<float>& values) {
    int64_t bytes = static_cast<int64_t>(values.size() * sizeof(float));
    absl::StatusOr<DeviceBuffer> buffer = context_->Allocate(bytes);
    EXPECT_TRUE(buffer.ok()) << buffer.status();
    if (!buffer.ok()) return DeviceBuffer();
    absl::Status copied = context_->CopyToDevice(buffer->ptr(), values.data(), bytes);
    EXPECT_TRUE(copied.ok()) << copied;
    return *std::move(buffer);
  }

  std::vector<float> Download(DevicePointer source, size_t count) {
    std::vector<float> values(count, -1.0f);
    absl::Status copied =
        context_->CopyToHost(values.data(), source, static_cast<int64_t>(count * sizeof(float)));
    EXPECT_TRUE(copied.ok()) << copied;
    return values;
  }

  std::unique_ptr<Context> context_;
};

TEST_F(CudaDeviceTest, DescribesDevice) {
  const DeviceInfo& info = context_->info();
  EXPECT_FALSE(info.name.empty());
  EXPECT_GE(info.major, 5);
  EXPECT_GT(info.multiprocessors, 0);
  EXPECT_GT(info.global_bytes, int64_t{1} << 30);
  EXPECT_GE(info.max_threads_per_block, 512);
  EXPECT_GE(info.shared_bytes_per_block_optin, 48 * 1024);
  EXPECT_GT(info.l2_bytes, 0);
  EXPECT_EQ(info.Arch(), absl::StrCat("sm_", info.major, info.minor));
}

TEST_F(CudaDeviceTest, CopiesThereAndBack) {
  std::vector<float> values(1000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = 0.5f * static_cast<float>(i) - 3;
  DeviceBuffer buffer = Upload(values);
  ASSERT_NE(buffer.ptr(), 0u);
  EXPECT_EQ(buffer.bytes(), 4000);
  EXPECT_EQ(Download(buffer.ptr(), values.size()), values);

  absl::StatusOr<DeviceBuffer> copy = context_->Allocate(buffer.bytes());
  ASSERT_TRUE(copy.ok()) << copy.status();
  ASSERT_TRUE(context_->CopyOnDevice(copy->ptr(), buffer.ptr(), buffer.bytes()).ok());
  EXPECT_EQ(Download(copy->ptr(), values.size()), values);

  // The first 100 floats zeroed, the rest untouched.
  ASSERT_TRUE(context_->Zero(buffer.ptr(), 100 * sizeof(float)).ok());
  std::vector<float> want = values;
  std::fill(want.begin(), want.begin() + 100, 0.0f);
  EXPECT_EQ(Download(buffer.ptr(), values.size()), want);
  EXPECT_TRUE(context_->Synchronize().ok());
}

TEST_F(CudaDeviceTest, BuffersMoveAndMayBeEmpty) {
  absl::StatusOr<DeviceBuffer> empty = context_->Allocate(0);
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->ptr(), 0u);
  EXPECT_EQ(empty->bytes(), 0);

  DeviceBuffer first = Upload({1, 2, 3});
  DevicePointer where = first.ptr();
  DeviceBuffer second = std::move(first);
  EXPECT_EQ(first.ptr(), 0u);  // NOLINT(bugprone-use-after-move): moved-from is empty
  EXPECT_EQ(second.ptr(), where);
  EXPECT_EQ(Download(second.ptr(), 3), (std::vector<float>{1, 2, 3}));
  second = DeviceBuffer();  // frees
  EXPECT_EQ(second.ptr(), 0u);
}

TEST_F(CudaDeviceTest, ErrorsNameTheCall) {
  absl::StatusOr<DeviceBuffer> negative = context_->Allocate(-1);
  EXPECT_EQ(negative.status().code(), absl::StatusCode::kInvalidArgument) << negative.status();

  absl::StatusOr<DeviceBuffer> huge = context_->Allocate(context_->info().global_bytes * 4);
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().code(), absl::StatusCode::kResourceExhausted) << huge.status();
  EXPECT_TRUE(absl::StartsWith(huge.status().message(),
                               absl::StrCat("cuMemAlloc(", context_->info().global_bytes * 4,
                                            " bytes): CUDA_ERROR_OUT_OF_MEMORY: ")))
      << huge.status();

  absl::StatusOr<std::unique_ptr<Module>> garbage = context_->Load("not PTX");
  EXPECT_FALSE(garbage.ok());
  EXPECT_TRUE(absl::StartsWith(garbage.status().message(), "cuModuleLoadData(PTX"))
      << garbage.status();
}

constexpr char kAddOne[] = R"(
extern "C" __global__ void add_one(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}
)";

// Block 1 reads what block 0 wrote before the grid barrier.
constexpr char kHandOff[] = R"(
#include <cooperative_groups.h>
extern "C" __global__ void hand_off(int* x) {
  cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  volatile int* cells = x;
  if (blockIdx.x == 0 && threadIdx.x == 0) cells[0] = 41;
  grid.sync();
  if (blockIdx.x == 1 && threadIdx.x == 0) cells[1] = cells[0] + 1;
}
)";

// Fills `n` floats of dynamic shared memory with ones and sums them.
constexpr char kCountShared[] = R"(
extern "C" __global__ void count_shared(float* out, int n) {
  extern __shared__ float cells[];
  for (int i = threadIdx.x; i < n; i += blockDim.x) cells[i] = 1.0f;
  __syncthreads();
  if (threadIdx.x == 0) {
    float sum = 0;
    for (int i = 0; i < n; ++i) sum += cells[i];
    out[0] = sum;
  }
}
)";

// Device tests that compile kernels: NVRTC too, or a skip.
class CudaKernelTest : public CudaDeviceTest {
 protected:
  void SetUp() override {
    CudaDeviceTest::SetUp();
    if (IsSkipped()) return;
    if (absl::Status nvrtc = NvrtcAvailable(); !nvrtc.ok()) GTEST_SKIP() << nvrtc;
  }

  // `source` compiled to PTX for this device and loaded, or null (having
  // failed the test).
  std::unique_ptr<Module> LoadPtx(const std::string& source) {
    absl::StatusOr<NvrtcResult> ptx = CompileToPtx(source, context_->info().Arch());
    EXPECT_TRUE(ptx.ok()) << ptx.status();
    if (!ptx.ok()) return nullptr;
    absl::StatusOr<std::unique_ptr<Module>> module = context_->Load(ptx->text);
    EXPECT_TRUE(module.ok()) << module.status();
    return module.ok() ? *std::move(module) : nullptr;
  }

  // Launches add_one over `x` (n floats).
  absl::Status AddOne(const cuda::Function& add_one, DevicePointer x, int n) {
    void* args[] = {&x, &n};
    return add_one.Launch({(n + 255) / 256, 256, 0, false}, args);
  }
};

TEST_F(CudaKernelTest, LaunchesPtx) {
  std::unique_ptr<Module> module = LoadPtx(kAddOne);
  ASSERT_NE(module, nullptr);
  absl::StatusOr<cuda::Function> missing = module->Function("no_such_kernel");
  EXPECT_FALSE(missing.ok());
  EXPECT_TRUE(absl::StartsWith(missing.status().message(), "cuModuleGetFunction(no_such_kernel)"))
      << missing.status();
  absl::StatusOr<cuda::Function> add_one = module->Function("add_one");
  ASSERT_TRUE(add_one.ok()) << add_one.status();
  EXPECT_EQ(add_one->name(), "add_one");

  std::vector<float> values(1000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  DeviceBuffer x = Upload(values);
  // 1000 of 1024 threads: the last block's tail must not write.
  ASSERT_TRUE(AddOne(*add_one, x.ptr(), 1000).ok());
  ASSERT_TRUE(context_->Synchronize().ok());
  std::vector<float> want = values;
  for (float& v : want) v += 1;
  EXPECT_EQ(Download(x.ptr(), values.size()), want);
}

TEST_F(CudaKernelTest, LaunchesCubin) {
  absl::StatusOr<NvrtcResult> cubin = CompileToCubin(kAddOne, context_->info().Arch());
  ASSERT_TRUE(cubin.ok()) << cubin.status();
  absl::StatusOr<std::unique_ptr<Module>> module = context_->Load(cubin->cubin);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<cuda::Function> add_one = (*module)->Function("add_one");
  ASSERT_TRUE(add_one.ok()) << add_one.status();
  DeviceBuffer x = Upload({1, 2, 3});
  ASSERT_TRUE(AddOne(*add_one, x.ptr(), 3).ok());
  EXPECT_EQ(Download(x.ptr(), 3), (std::vector<float>{2, 3, 4}));
}

TEST_F(CudaKernelTest, LaunchesCooperatively) {
  if (!context_->info().cooperative_launch) GTEST_SKIP() << "no cooperative launch";
  std::unique_ptr<Module> module = LoadPtx(kHandOff);
  ASSERT_NE(module, nullptr);
  absl::StatusOr<cuda::Function> hand_off = module->Function("hand_off");
  ASSERT_TRUE(hand_off.ok()) << hand_off.status();
  absl::StatusOr<int> per_sm = hand_off->MaxActiveBlocksPerMultiprocessor(32, 0);
  ASSERT_TRUE(per_sm.ok()) << per_sm.status();
  EXPECT_GT(*per_sm, 0);

  absl::StatusOr<DeviceBuffer> x = context_->Allocate(2 * sizeof(int));
  ASSERT_TRUE(x.ok()) << x.status();
  ASSERT_TRUE(context_->Zero(x->ptr(), x->bytes()).ok());
  DevicePointer cells = x->ptr();
  void* args[] = {&cells};
  absl::Status launched = hand_off->Launch({2, 32, 0, /*cooperative=*/true}, args);
  ASSERT_TRUE(launched.ok()) << launched;
  absl::Status done = context_->Synchronize();
  ASSERT_TRUE(done.ok()) << done;
  int got[2] = {0, 0};
  ASSERT_TRUE(context_->CopyToHost(got, cells, sizeof(got)).ok());
  EXPECT_EQ(got[0], 41);
  EXPECT_EQ(got[1], 42);
}

TEST_F(CudaKernelTest, ReportsOccupancy) {
  std::unique_ptr<Module> module = LoadPtx(kAddOne);
  ASSERT_NE(module, nullptr);
  absl::StatusOr<cuda::Function> add_one = module->Function("add_one");
  ASSERT_TRUE(add_one.ok()) << add_one.status();
  absl::StatusOr<int> per_sm = add_one->MaxActiveBlocksPerMultiprocessor(256, 0);
  ASSERT_TRUE(per_sm.ok()) << per_sm.status();
  EXPECT_GT(*per_sm, 0);
  EXPECT_FALSE(add_one->MaxActiveBlocksPerMultiprocessor(0, 0).ok());
}

TEST_F(CudaKernelTest, OptsIntoDynamicSharedMemoryAbove48KiB) {
  constexpr int kBytes = 64 * 1024;
  if (context_->info().shared_bytes_per_block_optin < kBytes) {
    GTEST_SKIP() << "under 64 KiB of shared memory per block";
  }
  std::unique_ptr<Module> module = LoadPtx(kCountShared);
  ASSERT_NE(module, nullptr);
  absl::StatusOr<cuda::Function> count_shared = module->Function("count_shared");
  ASSERT_TRUE(count_shared.ok()) << count_shared.status();
  absl::StatusOr<int> per_sm = count_shared->MaxActiveBlocksPerMultiprocessor(256, kBytes);
  ASSERT_TRUE(per_sm.ok()) << per_sm.status();
  EXPECT_GT(*per_sm, 0);

  DeviceBuffer out = Upload({0});
  DevicePointer where = out.ptr();
  int n = static_cast<int>(kBytes / sizeof(float));
  void* args[] = {&where, &n};
  absl::Status launched = count_shared->Launch({1, 256, kBytes, false}, args);
  ASSERT_TRUE(launched.ok()) << launched;
  EXPECT_EQ(Download(where, 1), (std::vector<float>{static_cast<float>(n)}));
  // Raised once: the next launches of the function keep the cap.
  ASSERT_TRUE(context_->Zero(where, sizeof(float)).ok());
  launched = count_shared->Launch({1, 256, kBytes, false}, args);
  ASSERT_TRUE(launched.ok()) << launched;
  EXPECT_EQ(Download(where, 1), (std::vector<float>{static_cast<float>(n)}));
}

TEST_F(CudaKernelTest, TimesWithEvents) {
  std::unique_ptr<Module> module = LoadPtx(kAddOne);
  ASSERT_NE(module, nullptr);
  absl::StatusOr<cuda::Function> add_one = module->Function("add_one");
  ASSERT_TRUE(add_one.ok()) << add_one.status();
  constexpr int kCount = 1 << 22;
  absl::StatusOr<DeviceBuffer> x = context_->Allocate(kCount * sizeof(float));
  ASSERT_TRUE(x.ok()) << x.status();
  ASSERT_TRUE(context_->Zero(x->ptr(), x->bytes()).ok());
  absl::StatusOr<double> seconds = context_->ElapsedSeconds([&]() -> absl::Status {
    for (int i = 0; i < 10; ++i) {
      if (absl::Status launched = AddOne(*add_one, x->ptr(), kCount); !launched.ok())
        return launched;
    }
    return absl::OkStatus();
  });
  ASSERT_TRUE(seconds.ok()) << seconds.status();
  EXPECT_GT(*seconds, 0);
  EXPECT_LT(*seconds, 10);
  EXPECT_EQ(Download(x->ptr(), 1), (std::vector<float>{10}));

  absl::StatusOr<double> failed =
      context_->ElapsedSeconds([] { return absl::AbortedError("nothing to time"); });
  EXPECT_EQ(failed.status(), absl::AbortedError("nothing to time"));
}

// cuBLAS on device 0, or a skip.
class CudaBlasTest : public CudaDeviceTest {
 protected:
  void SetUp() override {
    CudaDeviceTest::SetUp();
    if (IsSkipped()) return;
    if (absl::StatusOr<std::string> version = CublasVersion(); !version.ok()) {
      GTEST_SKIP() << version.status();
    }
    absl::StatusOr<std::unique_ptr<Blas>> blas = Blas::Create(*context_);
    ASSERT_TRUE(blas.ok()) << blas.status();
    blas_ = *std::move(blas);
  }

  std::unique_ptr<Blas> blas_;  // destroyed before the base's context
};

int ElementBytes(DType dtype) { return dtype == DType::kF64 ? 8 : dtype == DType::kF32 ? 4 : 2; }

// `value` as the nearest `dtype` holds, back in a double.
double RoundTo(DType dtype, double value) {
  switch (dtype) {
    case DType::kF64:
      return value;
    case DType::kF32:
      return static_cast<float>(value);
    case DType::kBF16:
      return BF16ToFloat(FloatToBF16(static_cast<float>(value)));
    default:
      return HalfToFloat(FloatToHalf(static_cast<float>(value)));
  }
}

std::vector<uint8_t> Encode(DType dtype, const std::vector<double>& values) {
  int size = ElementBytes(dtype);
  std::vector<uint8_t> bytes(values.size() * size);
  for (size_t i = 0; i < values.size(); ++i) {
    uint8_t* at = bytes.data() + i * size;
    if (dtype == DType::kF64) {
      std::memcpy(at, &values[i], 8);
    } else if (dtype == DType::kF32) {
      float f = static_cast<float>(values[i]);
      std::memcpy(at, &f, 4);
    } else {
      float f = static_cast<float>(values[i]);
      uint16_t bits = dtype == DType::kBF16 ? FloatToBF16(f) : FloatToHalf(f);
      std::memcpy(at, &bits, 2);
    }
  }
  return bytes;
}

std::vector<double> Decode(DType dtype, const std::vector<uint8_t>& bytes) {
  int size = ElementBytes(dtype);
  std::vector<double> values(bytes.size() / size);
  for (size_t i = 0; i < values.size(); ++i) {
    const uint8_t* at = bytes.data() + i * size;
    if (dtype == DType::kF64) {
      std::memcpy(&values[i], at, 8);
    } else if (dtype == DType::kF32) {
      float f;
      std::memcpy(&f, at, 4);
      values[i] = f;
    } else {
      uint16_t bits;
      std::memcpy(&bits, at, 2);
      values[i] = dtype == DType::kBF16 ? BF16ToFloat(bits) : HalfToFloat(bits);
    }
  }
  return values;
}

// Multiplies on the device the [batch, m, k]·[batch, k, n] product given
// by `shape` (A, B stored transposed as it says; B one matrix for all
// batches when `shape.stride_b` is 0) and checks C against a host loop
// to `tolerance`, relative.
void ExpectGemm(Context& context, Blas& blas, const GemmShape& shape, double tolerance) {
  const int64_t batch = shape.batch, m = shape.m, n = shape.n, k = shape.k;
  const int64_t b_matrices = shape.stride_b == 0 ? 1 : batch;
  // Positive multiples of 1/8: exact in every dtype, no cancellation.
  auto op_a = [&](int64_t s, int64_t i, int64_t p) {
    return RoundTo(shape.dtype, 0.25 + ((s * 5 + i * 3 + p * 2) % 8) * 0.125);
  };
  auto op_b = [&](int64_t s, int64_t p, int64_t j) {
    return RoundTo(shape.dtype, 0.125 + ((s * 3 + p * 7 + j) % 9) * 0.125);
  };
  std::vector<double> a(batch * m * k), b(b_matrices * k * n), want(batch * m * n);
  for (int64_t s = 0; s < batch; ++s) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t p = 0; p < k; ++p) {
        a[s * m * k + (shape.transpose_a ? p * m + i : i * k + p)] = op_a(s, i, p);
      }
    }
  }
  for (int64_t s = 0; s < b_matrices; ++s) {
    for (int64_t p = 0; p < k; ++p) {
      for (int64_t j = 0; j < n; ++j) {
        b[s * k * n + (shape.transpose_b ? j * k + p : p * n + j)] = op_b(s, p, j);
      }
    }
  }
  for (int64_t s = 0; s < batch; ++s) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p) sum += op_a(s, i, p) * op_b(b_matrices == 1 ? 0 : s, p, j);
        want[(s * m + i) * n + j] = sum;
      }
    }
  }

  std::vector<uint8_t> a_bytes = Encode(shape.dtype, a), b_bytes = Encode(shape.dtype, b);
  const DType c_type = shape.output_dtype.value_or(shape.dtype);
  std::vector<uint8_t> c_bytes(want.size() * ElementBytes(c_type));
  absl::StatusOr<DeviceBuffer> a_buffer = context.Allocate(a_bytes.size());
  absl::StatusOr<DeviceBuffer> b_buffer = context.Allocate(b_bytes.size());
  absl::StatusOr<DeviceBuffer> c_buffer = context.Allocate(c_bytes.size());
  ASSERT_TRUE(a_buffer.ok() && b_buffer.ok() && c_buffer.ok());
  ASSERT_TRUE(context.CopyToDevice(a_buffer->ptr(), a_bytes.data(), a_bytes.size()).ok());
  ASSERT_TRUE(context.CopyToDevice(b_buffer->ptr(), b_bytes.data(), b_bytes.size()).ok());
  absl::Status multiplied = blas.Gemm(shape, a_buffer->ptr(), b_buffer->ptr(), c_buffer->ptr());
  ASSERT_TRUE(multiplied.ok()) << multiplied;
  ASSERT_TRUE(context.CopyToHost(c_bytes.data(), c_buffer->ptr(), c_bytes.size()).ok());
  std::vector<double> got = Decode(c_type, c_bytes);
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], tolerance * std::abs(want[i]))
        << "C element " << i << " of " << DTypeName(shape.dtype) << " into " << DTypeName(c_type)
        << " batch " << batch << " m " << m
        << " n " << n << " k " << k << (shape.transpose_a ? " A transposed" : "")
        << (shape.transpose_b ? " B transposed" : "");
  }
}

GemmShape Shape(DType dtype, bool transpose_a, bool transpose_b) {
  GemmShape shape;
  shape.dtype = dtype;
  shape.batch = 2, shape.m = 3, shape.n = 5, shape.k = 4;
  shape.transpose_a = transpose_a, shape.transpose_b = transpose_b;
  shape.stride_a = shape.m * shape.k, shape.stride_b = shape.k * shape.n;
  return shape;
}

TEST_F(CudaBlasTest, MultipliesF32WithEveryTranspose) {
  for (bool transpose_a : {false, true}) {
    for (bool transpose_b : {false, true}) {
      ExpectGemm(*context_, *blas_, Shape(DType::kF32, transpose_a, transpose_b), 1e-6);
    }
  }
}

TEST_F(CudaBlasTest, MultipliesF64) {
  ExpectGemm(*context_, *blas_, Shape(DType::kF64, false, false), 1e-12);
  ExpectGemm(*context_, *blas_, Shape(DType::kF64, true, true), 1e-12);
}

TEST_F(CudaBlasTest, MultipliesBF16AndF16) {
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    ExpectGemm(*context_, *blas_, Shape(dtype, false, false), 1e-2);
    ExpectGemm(*context_, *blas_, Shape(dtype, true, false), 1e-2);
  }
}

TEST_F(CudaBlasTest, MultipliesBF16AndF16IntoF32) {
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    GemmShape shape = Shape(dtype, true, false);
    shape.output_dtype = DType::kF32;
    ExpectGemm(*context_, *blas_, shape, 1e-6);
  }
}

TEST_F(CudaBlasTest, ReusesOneMatrixAcrossTheBatch) {
  GemmShape shape = Shape(DType::kF32, false, true);
  shape.stride_b = 0;
  ExpectGemm(*context_, *blas_, shape, 1e-6);
}

TEST_F(CudaBlasTest, RefusesWhatItCannotMultiply) {
  GemmShape shape = Shape(DType::kS32, false, false);
  absl::Status refused = blas_->Gemm(shape, 0, 0, 0);
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument) << refused;
  EXPECT_TRUE(absl::StartsWith(refused.message(), "cublasGemmStridedBatchedEx(s32")) << refused;
  shape = Shape(DType::kF32, false, false);
  shape.stride_c = 1;
  EXPECT_EQ(blas_->Gemm(shape, 0, 0, 0).code(), absl::StatusCode::kInvalidArgument);
  shape = Shape(DType::kF32, false, false);
  shape.output_dtype = DType::kBF16;  // only f16 and bf16 widen, to f32
  EXPECT_EQ(blas_->Gemm(shape, 0, 0, 0).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace seam::runtime::cuda
