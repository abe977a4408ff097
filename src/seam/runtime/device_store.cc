#include "seam/runtime/device_store.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "seam/eval/ops.h"
#include "seam/runtime/blas_dot.h"
#include "seam/runtime/host_blas.h"
#include "seam/util/status_macros.h"

namespace seam::runtime {

// Device memory handed back by dead values, reused by size: a module runs
// the same sizes again and again, and cuMemAlloc/cuMemFree synchronize the
// device. All work goes to one stream, so a buffer handed back while a
// kernel still reads it is only reused by work queued after that kernel.
class DeviceStore::DevicePool : public std::enable_shared_from_this<DevicePool> {
 public:
  explicit DevicePool(std::shared_ptr<GpuDevice> device) : device_(std::move(device)) {}

  absl::StatusOr<std::shared_ptr<cuda::DeviceBuffer>> Take(int64_t bytes) {
    bytes = std::max<int64_t>(bytes, 1);
    cuda::DeviceBuffer buffer;
    auto& free = free_[bytes];
    if (!free.empty()) {
      buffer = std::move(free.back());
      free.pop_back();
      device_->Recycle(buffer);
    } else {
      absl::StatusOr<cuda::DeviceBuffer> fresh = device_->Allocate(bytes);
      if (!fresh.ok() && absl::IsResourceExhausted(fresh.status())) {
        free_.clear();  // memory held for other sizes goes back to the device first
        fresh = device_->Allocate(bytes);
      }
      if (!fresh.ok()) return fresh.status();
      buffer = *std::move(fresh);
    }
    // The deleter keeps the pool (and so the context) alive.
    std::shared_ptr<DevicePool> pool = shared_from_this();
    return std::shared_ptr<cuda::DeviceBuffer>(new cuda::DeviceBuffer(std::move(buffer)),
                                               [pool](cuda::DeviceBuffer* b) {
                                                 pool->free_[b->bytes()].push_back(std::move(*b));
                                                 delete b;
                                               });
  }

 private:
  std::shared_ptr<GpuDevice> device_;
  absl::flat_hash_map<int64_t, std::vector<cuda::DeviceBuffer>> free_;
};

namespace {

int64_t ArrayBytes(const Shape& shape) {
  return shape.ElementCount().value_or(0) * DTypeByteSize(shape.dtype());
}

}  // namespace

bool CublasTakes(const Instruction& dot) {
  if (dot.opcode() != Opcode::kDot || !BlasHandles(dot)) return false;
  DType in = dot.operand(0)->shape().dtype(), out = dot.shape().dtype();
  bool types = dot.operand(1)->shape().dtype() == in &&
               (out == in || ((in == DType::kBF16 || in == DType::kF16) && out == DType::kF32));
  return types && GemmOfDot(dot).InPlace();
}

DeviceStore::DeviceStore(std::shared_ptr<GpuDevice> device)
    : device_(std::move(device)), pool_(std::make_shared<DevicePool>(device_)) {
  evaluator_.set_wide_accumulation(true);  // as the kernels accumulate
}

DeviceStore::~DeviceStore() {
  // Work still queued (after a failed run) finishes before its memory and
  // code go; then values and kernels go before the pool and the context.
  if (device_ != nullptr) device_->Synchronize().IgnoreError();
  constants_.clear();
  launches_.clear();
  kernels_.reset();
}

absl::StatusOr<std::shared_ptr<cuda::DeviceBuffer>> DeviceStore::Allocate(const Shape& shape) {
  return pool_->Take(ArrayBytes(shape));
}

absl::StatusOr<DeviceValue> DeviceStore::Send(const Literal& value) {
  DeviceValue sent{value.shape(), nullptr, {}};
  if (value.shape().IsTuple()) {
    for (const Literal& element : value.tuple_elements()) {
      SEAM_ASSIGN_OR_RETURN(DeviceValue e, Send(element));
      sent.elements.push_back(std::move(e));
    }
    return sent;
  }
  SEAM_ASSIGN_OR_RETURN(sent.buffer, Allocate(value.shape()));
  int64_t bytes = ArrayBytes(value.shape());
  if (bytes > 0) {
    SEAM_RETURN_IF_ERROR(device_->CopyToDevice(sent.buffer->ptr(), value.bytes().data(), bytes));
  }
  return sent;
}

absl::StatusOr<Literal> DeviceStore::Download(const DeviceValue& value) {
  if (value.shape.IsTuple()) {
    std::vector<Literal> elements;
    for (const DeviceValue& e : value.elements) {
      SEAM_ASSIGN_OR_RETURN(Literal element, Download(e));
      elements.push_back(std::move(element));
    }
    return Literal::Tuple(value.shape, std::move(elements));
  }
  Literal out = Literal::Uninitialized(value.shape);
  int64_t bytes = ArrayBytes(value.shape);
  if (bytes > 0) {
    SEAM_RETURN_IF_ERROR(
        device_->CopyToHost(out.mutable_bytes().data(), value.buffer->ptr(), bytes));
  }
  return out;
}

absl::StatusOr<const Literal*> DeviceStore::OnHost(const DeviceValue& value, HostCopies& copies) {
  SEAM_ASSIGN_OR_RETURN(Literal on_host, Download(value));
  return &copies.emplace_back(std::move(on_host));
}

absl::StatusOr<DeviceValue> DeviceStore::Constant(const Instruction& i) {
  if (auto it = constants_.find(&i); it != constants_.end()) return it->second;
  SEAM_ASSIGN_OR_RETURN(Literal value, EvalInstruction(i, {}, evaluator_));
  SEAM_ASSIGN_OR_RETURN(DeviceValue sent, Send(value));
  constants_[&i] = sent;
  return sent;
}

absl::StatusOr<std::optional<DeviceValue>> DeviceStore::RunNative(
    const Step& step, absl::Span<DeviceValue* const> reads) {
  const Instruction& i = *step.instruction;
  if (step.epilogue) return absl::InternalError(absl::StrCat(i.name(), ": no CUDA epilogues"));
  if (i.opcode() == Opcode::kDot && device_->HasGemm() && CublasTakes(i)) {
    return Gemm(i, *reads[0], *reads[1]);
  }
  return std::nullopt;
}

absl::StatusOr<DeviceValue> DeviceStore::Gemm(const Instruction& dot, const DeviceValue& lhs,
                                              const DeviceValue& rhs) {
  SEAM_ASSIGN_OR_RETURN(std::shared_ptr<cuda::DeviceBuffer> out, Allocate(dot.shape()));
  const DotAsGemm g = GemmOfDot(dot);
  if (g.m * g.n * g.batch == 0 || g.k == 0) {
    SEAM_RETURN_IF_ERROR(device_->Zero(out->ptr(), ArrayBytes(dot.shape())));  // sums of nothing
  } else {
    cuda::GemmShape shape;
    shape.dtype = dot.operand(0)->shape().dtype();
    shape.output_dtype = dot.shape().dtype();
    shape.batch = g.batch, shape.m = g.m, shape.n = g.n, shape.k = g.k;
    shape.transpose_a = g.lhs_transposed, shape.transpose_b = g.rhs_transposed;
    shape.stride_a = g.m * g.k, shape.stride_b = g.k * g.n, shape.stride_c = g.m * g.n;
    SEAM_RETURN_IF_ERROR(device_->Gemm(shape, lhs.buffer->ptr(), rhs.buffer->ptr(), out->ptr()));
  }
  return DeviceValue{dot.shape(), std::move(out), {}};
}

absl::Status DeviceStore::Launch(const Step& step, SlotValues<DeviceValue>& values) {
  const codegen::KernelIr& ir = *step.ir;
  std::vector<std::shared_ptr<cuda::DeviceBuffer>> scratch;  // alive until queued
  std::vector<cuda::DevicePointer> pointers;
  for (size_t k = 0; k < ir.buffers.size(); ++k) {
    const codegen::KernelBuffer& b = ir.buffers[k];
    switch (b.storage) {
      case codegen::Storage::kInput: {
        DeviceValue* in = values.Find(step.buffer_slots[k]);
        if (in == nullptr) {
          return absl::InternalError(
              absl::StrCat(ir.name, ": input ", b.value->name(), " missing"));
        }
        pointers.push_back(in->buffer->ptr());
        break;
      }
      case codegen::Storage::kOutput: {
        SEAM_ASSIGN_OR_RETURN(std::shared_ptr<cuda::DeviceBuffer> out, Allocate(b.value->shape()));
        pointers.push_back(out->ptr());
        values.Set(step.buffer_slots[k], DeviceValue{b.value->shape(), std::move(out), {}});
        break;
      }
      default: {
        SEAM_ASSIGN_OR_RETURN(std::shared_ptr<cuda::DeviceBuffer> buffer,
                              pool_->Take(b.elements * std::max(1, DTypeByteSize(b.dtype))));
        pointers.push_back(buffer->ptr());
        scratch.push_back(std::move(buffer));
        break;
      }
    }
  }
  std::vector<void*> arguments;
  for (cuda::DevicePointer& p : pointers) arguments.push_back(&p);
  const LaunchEntry& launch = launches_[step.launch];
  return kernels_->Launch(launch.kernel, launch.shape, arguments.data());
}

absl::StatusOr<DeviceValue> DeviceStore::LaunchOpKernel(const Step& step,
                                                        absl::Span<DeviceValue* const>,
                                                        std::optional<DeviceValue>) {
  return absl::InternalError(
      absl::StrCat(step.symbol, ": no CUDA op kernels"));  // none generated (yet)
}

}  // namespace seam::runtime
