#include "seam/runtime/cuda_executable.h"

#include <algorithm>
#include <chrono>

#include "absl/container/node_hash_map.h"
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
class CudaExecutable::DevicePool : public std::enable_shared_from_this<DevicePool> {
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
    return std::shared_ptr<cuda::DeviceBuffer>(
        new cuda::DeviceBuffer(std::move(buffer)), [pool](cuda::DeviceBuffer* b) {
          pool->free_[b->bytes()].push_back(std::move(*b));
          delete b;
        });
  }

 private:
  std::shared_ptr<GpuDevice> device_;
  absl::flat_hash_map<int64_t, std::vector<cuda::DeviceBuffer>> free_;
};

namespace {

using Values = absl::flat_hash_map<const Instruction*, DeviceValue>;

int64_t ArrayBytes(const Shape& shape) {
  return shape.ElementCount().value_or(0) * DTypeByteSize(shape.dtype());
}

absl::StatusOr<const DeviceValue*> Find(const Values& values, const Instruction* v) {
  auto it = values.find(v);
  if (it == values.end()) {
    return absl::InternalError(absl::StrCat("value of ", v->name(), " is not computed yet"));
  }
  return &it->second;
}

}  // namespace

bool CublasTakes(const Instruction& dot) {
  if (dot.opcode() != Opcode::kDot || !BlasHandles(dot)) return false;
  DType in = dot.operand(0)->shape().dtype(), out = dot.shape().dtype();
  bool types = dot.operand(1)->shape().dtype() == in &&
               (out == in || ((in == DType::kBF16 || in == DType::kF16) && out == DType::kF32));
  return types && GemmOfDot(dot).InPlace();
}

CudaExecutable::~CudaExecutable() {
  // Work still queued (after a failed run) finishes before its memory and
  // code go; then values and kernels go before the pool and the context.
  if (device_ != nullptr) device_->Synchronize().IgnoreError();
  constants_.clear();
  launches_.clear();
  loaded_.reset();
}

absl::StatusOr<std::unique_ptr<CudaExecutable>> CudaExecutable::Load(
    const Module& module, std::shared_ptr<GpuDevice> device, CudaProgram program,
    Programs programs) {
  std::unique_ptr<CudaExecutable> executable(new CudaExecutable());
  SEAM_RETURN_IF_ERROR(
      executable->Build(module, std::move(device), std::move(program), std::move(programs)));
  return executable;
}

absl::Status CudaExecutable::Build(const Module& module, std::shared_ptr<GpuDevice> device,
                                   CudaProgram program, Programs programs) {
  module_ = &module;
  evaluator_.set_wide_accumulation(true);  // as the kernels accumulate
  device_ = std::move(device);
  pool_ = std::make_shared<DevicePool>(device_);
  const cuda::DeviceInfo& info = device_->info();
  program_ = std::move(program);  // the steps' pointers into its plan stay valid
  programs_ = std::move(programs.by_computation);
  irs_ = std::move(programs.irs);
  stats_.compiled_kernels = programs.compiled_kernels;
  stats_.distinct_kernels = static_cast<int64_t>(program_.kernels.size());
  stats_.aliases = programs.aliases;
  stats_.blas_calls = programs.library_calls;
  stats_.fallbacks = std::move(programs.fallbacks);
  stats_.codegen_seconds = program_.codegen_seconds;
  stats_.compile_seconds = program_.ptx.seconds + program_.cubin.seconds;
  stats_.cache_hit = program_.cubin.cache_hit;
  stats_.shared_object = program_.cubin.path;
  if (program_.kernels.empty()) return absl::OkStatus();

  // Loading counts as compiling: the emulator compiles the kernels for
  // the host here.
  const auto load_start = std::chrono::steady_clock::now();
  SEAM_ASSIGN_OR_RETURN(loaded_, device_->Load(program_));
  stats_.compile_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count();
  absl::flat_hash_map<std::string, int> launch_of;
  for (size_t k = 0; k < program_.kernels.size(); ++k) {
    const codegen::CudaKernel& kernel = program_.kernels[k];
    cuda::LaunchShape shape{program_.resources[k].grid, kernel.threads, kernel.shared_bytes,
                            kernel.grid_barriers};
    if (shape.cooperative) {
      // Every block of a kernel with grid barriers must be resident: the
      // plan assumed the target's SM count, the device may have fewer.
      SEAM_ASSIGN_OR_RETURN(int per_sm, loaded_->MaxActiveBlocksPerMultiprocessor(
                                            k, shape.threads, shape.dynamic_shared_bytes));
      if (per_sm == 0) {
        return absl::ResourceExhaustedError(
            absl::StrCat("kernel ", kernel.name, " fits no block on an SM of ", info.name));
      }
      shape.grid = std::min<int64_t>(shape.grid, int64_t{per_sm} * info.multiprocessors);
    }
    launch_of[kernel.name] = static_cast<int>(launches_.size());
    launches_.push_back({k, shape});
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

absl::StatusOr<std::shared_ptr<cuda::DeviceBuffer>> CudaExecutable::Allocate(const Shape& shape) {
  return pool_->Take(ArrayBytes(shape));
}

absl::StatusOr<DeviceValue> CudaExecutable::Send(const Literal& value) {
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
  if (bytes > 0)
    SEAM_RETURN_IF_ERROR(device_->CopyToDevice(sent.buffer->ptr(), value.bytes().data(), bytes));
  return sent;
}

absl::StatusOr<Literal> CudaExecutable::Download(const DeviceValue& value) {
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
  if (bytes > 0)
    SEAM_RETURN_IF_ERROR(
        device_->CopyToHost(out.mutable_bytes().data(), value.buffer->ptr(), bytes));
  return out;
}

absl::StatusOr<std::vector<DeviceValue>> CudaExecutable::Upload(absl::Span<const Literal> arguments) {
  SEAM_RETURN_IF_ERROR(CheckArguments(*module_->entry(), arguments));
  std::vector<DeviceValue> sent;
  for (const Literal& a : arguments) {
    SEAM_ASSIGN_OR_RETURN(DeviceValue value, Send(a));
    sent.push_back(std::move(value));
  }
  return sent;
}

absl::StatusOr<DeviceValue> CudaExecutable::RunOnDevice(const std::vector<DeviceValue>& arguments) {
  if (arguments.size() != module_->entry()->parameters().size()) {
    return absl::InvalidArgumentError(absl::StrCat("the entry computation takes ",
                                                   module_->entry()->parameters().size(),
                                                   " arguments, not ", arguments.size()));
  }
  return RunProgram(*programs_.at(module_->entry()), arguments);
}

absl::StatusOr<Literal> CudaExecutable::Run(absl::Span<const Literal> arguments) {
  SEAM_ASSIGN_OR_RETURN(std::vector<DeviceValue> sent, Upload(arguments));
  SEAM_ASSIGN_OR_RETURN(DeviceValue result, RunOnDevice(sent));
  return Download(result);
}

absl::Status CudaExecutable::RunKernel(const Step& step, Values& values) {
  const codegen::KernelIr& ir = *step.ir;
  std::vector<std::shared_ptr<cuda::DeviceBuffer>> held;  // scratch, alive until queued
  std::vector<cuda::DevicePointer> pointers;
  for (const codegen::KernelBuffer& b : ir.buffers) {
    switch (b.storage) {
      case codegen::Storage::kInput: {
        SEAM_ASSIGN_OR_RETURN(const DeviceValue* in, Find(values, b.value));
        pointers.push_back(in->buffer->ptr());
        break;
      }
      case codegen::Storage::kOutput: {
        SEAM_ASSIGN_OR_RETURN(std::shared_ptr<cuda::DeviceBuffer> out, Allocate(b.value->shape()));
        pointers.push_back(out->ptr());
        values[b.value] = {b.value->shape(), std::move(out), {}};
        break;
      }
      default: {
        SEAM_ASSIGN_OR_RETURN(std::shared_ptr<cuda::DeviceBuffer> scratch,
                              pool_->Take(b.elements * std::max(1, DTypeByteSize(b.dtype))));
        pointers.push_back(scratch->ptr());
        held.push_back(std::move(scratch));
        break;
      }
    }
  }
  std::vector<void*> arguments;
  for (cuda::DevicePointer& p : pointers) arguments.push_back(&p);
  const Launch& launch = launches_[step.launch];
  return loaded_->Launch(launch.kernel, launch.shape, arguments.data());
}

absl::StatusOr<DeviceValue> CudaExecutable::Interpret(const Instruction& i,
                                                      absl::Span<const DeviceValue* const> operands) {
  std::vector<Literal> host;
  for (const DeviceValue* o : operands) {
    SEAM_ASSIGN_OR_RETURN(Literal value, Download(*o));
    host.push_back(std::move(value));
  }
  std::vector<const Literal*> pointers;
  for (const Literal& h : host) pointers.push_back(&h);
  // Dots cuBLAS does not take and convolutions run on the host's BLAS (far
  // faster than the interpreter) until the GPU has its own.
  SEAM_ASSIGN_OR_RETURN(Literal result, HostBlasServes(i)
                                            ? RunHostBlas(host_pool_, i, host[0], host[1])
                                            : EvalInstruction(i, pointers, evaluator_));
  return Send(result);
}

// Member by member in the interpreter, on the host (an alias's reshape is
// the interpreter's copy with the new shape).
absl::Status CudaExecutable::InterpretKernel(const Step& step, Values& values) {
  const fusion::Kernel& kernel = *step.kernel;
  bool reshapes = std::all_of(kernel.instructions.begin(), kernel.instructions.end(),
                              [](const Instruction* m) { return m->opcode() == Opcode::kReshape; });
  if (kernel.alias_only && reshapes && kernel.inputs.size() == 1) {
    // Reshapes of row-major arrays: the output views the input's bytes.
    // (A bitcast may change the layout, which moves data: interpreted.)
    SEAM_ASSIGN_OR_RETURN(const DeviceValue* in, Find(values, kernel.inputs[0]));
    // Copied first: inserting the outputs may move the map's entries.
    const DeviceValue input = *in;
    bool same_bytes = std::all_of(kernel.outputs.begin(), kernel.outputs.end(), [&](const Instruction* o) {
      return ArrayBytes(o->shape()) == ArrayBytes(input.shape);
    });
    if (same_bytes) {
      for (const Instruction* o : kernel.outputs) values[o] = {o->shape(), input.buffer, {}};
      return absl::OkStatus();
    }
  }
  // Members' results and the kernel's inputs, each input downloaded once
  // however many members read it. (Node map: operands point into it while
  // it grows.)
  absl::node_hash_map<const Instruction*, Literal> local;
  for (const Instruction* m : kernel.instructions) {
    std::vector<const Literal*> operands;
    for (const Instruction* o : m->operands()) {
      auto it = local.find(o);
      if (it == local.end()) {
        SEAM_ASSIGN_OR_RETURN(const DeviceValue* held, Find(values, o));
        SEAM_ASSIGN_OR_RETURN(Literal value, Download(*held));
        it = local.emplace(o, std::move(value)).first;
      }
      operands.push_back(&it->second);
    }
    SEAM_ASSIGN_OR_RETURN(Literal value, EvalInstruction(*m, operands, evaluator_));
    local.emplace(m, std::move(value));
  }
  for (const Instruction* o : kernel.outputs) {
    SEAM_ASSIGN_OR_RETURN(values[o], Send(local.at(o)));
  }
  return absl::OkStatus();
}

absl::StatusOr<DeviceValue> CudaExecutable::Gemm(const Instruction& dot, const DeviceValue& lhs,
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

absl::StatusOr<DeviceValue> CudaExecutable::RunInstruction(const Instruction& i, Values& values) {
  std::vector<const DeviceValue*> operands;
  for (const Instruction* o : i.operands()) {
    SEAM_ASSIGN_OR_RETURN(const DeviceValue* held, Find(values, o));
    operands.push_back(held);
  }
  switch (i.opcode()) {
    case Opcode::kConstant: {
      if (auto it = constants_.find(&i); it != constants_.end()) return it->second;
      SEAM_ASSIGN_OR_RETURN(DeviceValue sent, Interpret(i, {}));
      constants_[&i] = sent;
      return sent;
    }
    case Opcode::kTuple: {
      DeviceValue tuple{i.shape(), nullptr, {}};
      for (const DeviceValue* o : operands) tuple.elements.push_back(*o);
      return tuple;
    }
    case Opcode::kGetTupleElement:
      return operands[0]->elements.at(*i.attrs().index);
    case Opcode::kWhile: {
      const Program& condition = *programs_.at(*i.attrs().condition);
      const Program& body = *programs_.at(*i.attrs().body);
      DeviceValue state = *operands[0];
      while (true) {
        SEAM_ASSIGN_OR_RETURN(DeviceValue go, RunProgram(condition, {state}));
        SEAM_ASSIGN_OR_RETURN(Literal on_host, Download(go));
        if (on_host.GetBits(0) == 0) return state;
        SEAM_ASSIGN_OR_RETURN(state, RunProgram(body, {std::move(state)}));
      }
    }
    case Opcode::kConditional: {
      std::vector<Computation*> branches = i.CalledComputations();
      SEAM_ASSIGN_OR_RETURN(Literal selector, Download(*operands[0]));
      int64_t index = BranchIndex(selector, static_cast<int64_t>(branches.size()));
      return RunProgram(*programs_.at(branches[index]), {*operands[1 + index]});
    }
    case Opcode::kCall: {
      std::vector<DeviceValue> arguments;
      for (const DeviceValue* o : operands) arguments.push_back(*o);
      return RunProgram(*programs_.at(*i.attrs().to_apply), std::move(arguments));
    }
    case Opcode::kDot:
      if (device_->HasGemm() && CublasTakes(i)) return Gemm(i, *operands[0], *operands[1]);
      break;
    default:
      break;
  }
  return Interpret(i, operands);
}

absl::StatusOr<DeviceValue> CudaExecutable::RunProgram(const Program& program,
                                                       std::vector<DeviceValue> arguments) {
  Values values;
  absl::flat_hash_map<const Instruction*, int> remaining = program.readers;
  for (const Step& step : program.steps) {
    switch (step.kind) {
      case Step::Kind::kInstruction: {
        const Instruction& i = *step.instruction;
        if (i.opcode() == Opcode::kParameter) {
          values[&i] = std::move(arguments.at(i.parameter_number()));
          break;
        }
        SEAM_ASSIGN_OR_RETURN(DeviceValue value, RunInstruction(i, values));
        values[&i] = std::move(value);
        break;
      }
      case Step::Kind::kKernel:
        SEAM_RETURN_IF_ERROR(RunKernel(step, values));
        break;
      case Step::Kind::kOpKernel:  // the CUDA backend generates none (yet)
        return absl::InternalError(absl::StrCat(step.symbol, ": no CUDA op kernels"));
      case Step::Kind::kAlias:
      case Step::Kind::kInterpretKernel:
        SEAM_RETURN_IF_ERROR(InterpretKernel(step, values));
        break;
    }
    // Dead values hand their buffers back to the pool.
    for (const Instruction* r : step.reads) {
      if (--remaining[r] == 0 && r != program.computation->root()) values.erase(r);
    }
  }
  auto root = values.find(program.computation->root());
  if (root == values.end()) return absl::InternalError("the root was not computed");
  return std::move(root->second);
}

}  // namespace seam::runtime
