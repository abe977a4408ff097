#include "seam/runtime/executable.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>

#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "seam/codegen/op_kernels.h"
#include "seam/eval/ops.h"
#include "seam/runtime/host_blas.h"
#include "seam/util/machine.h"
#include "seam/util/status_macros.h"

namespace seam::runtime {

// A value during a run. Owned values may be recycled, moved or updated in
// place once their last reader runs; the rest (the caller's arguments,
// views into a tuple) are only read.
struct Executable::Held {
  std::shared_ptr<Literal> literal;
  bool owned = false;
};

namespace {

Executable::Held Owned(Literal value) {
  return {std::make_shared<Literal>(std::move(value)), true};
}

double ArgumentBytes(absl::Span<const Literal> arguments) {
  double bytes = 0;
  for (const Literal& a : arguments) bytes += ShapeBytes(a.shape());
  return bytes;
}

// Calls fn on each array of `value` (itself, or its tuple's, recursively).
template <typename Fn>
void ForEachArray(Literal& value, Fn&& fn) {
  if (value.shape().IsArray()) {
    fn(value);
    return;
  }
  for (Literal& element : value.mutable_tuple_elements()) ForEachArray(element, fn);
}

// A view of a value someone else keeps alive (no control block: an
// aliasing pointer with no owner).
Executable::Held Borrowed(const Literal& value) {
  return {std::shared_ptr<Literal>(std::shared_ptr<Literal>(), const_cast<Literal*>(&value)), false};
}

}  // namespace

// A run's values, one slot per value of its program (Program::slots; a
// step knows its values' slots): no allocation per value, no hashing per
// lookup.
class Executable::Values {
 public:
  explicit Values(const Program& program)
      : slots_(program.slots), held_(program.slots.size()), present_(program.slots.size(), 0) {}

  // The value in `slot`, or null when it is not (or no longer) held.
  Held* Find(int slot) { return present_[slot] ? &held_[slot] : nullptr; }
  void Set(int slot, Held value) {
    held_[slot] = std::move(value);
    present_[slot] = 1;
  }
  void Erase(int slot) {
    held_[slot] = Held{};
    present_[slot] = 0;
  }
  // By value, for the rare step that names values its slots do not list.
  Held* Find(const Instruction* v) {
    auto it = slots_.find(v);
    return it != slots_.end() ? Find(it->second) : nullptr;
  }
  void Set(const Instruction* v, Held value) { Set(slots_.at(v), std::move(value)); }
  // Calls fn on every value still held.
  template <typename Fn>
  void ForEach(Fn&& fn) {
    for (size_t k = 0; k < held_.size(); ++k) {
      if (present_[k]) fn(held_[k]);
    }
  }

 private:
  const absl::flat_hash_map<const Instruction*, int>& slots_;
  std::vector<Held> held_;
  std::vector<char> present_;
};

namespace {

// The argument list of a one-parameter computation. (Not an initializer
// list: its copy would hold the value until the call returns.)
std::vector<Executable::Held> Only(Executable::Held argument) {
  std::vector<Executable::Held> arguments;
  arguments.push_back(std::move(argument));
  return arguments;
}

// For an alias step whose every member is an output reshaping a distinct
// value the step reads (a reshape keeps its operand's bytes): per write,
// the index of its read. Empty otherwise (the interpreter runs it).
std::vector<size_t> ReshapedReads(const Step& step) {
  if (step.kernel == nullptr || step.kernel->instructions.size() != step.writes.size()) return {};
  std::vector<size_t> sources;
  for (const Instruction* out : step.writes) {
    if (out->opcode() != Opcode::kReshape) return {};
    const auto read = std::find(step.reads.begin(), step.reads.end(), out->operand(0));
    const size_t k = static_cast<size_t>(read - step.reads.begin());
    if (read == step.reads.end() || std::find(sources.begin(), sources.end(), k) != sources.end()) {
      return {};
    }
    sources.push_back(k);
  }
  return sources;
}

}  // namespace

Executable::~Executable() = default;

absl::StatusOr<std::unique_ptr<Executable>> Executable::Load(const Module& module, CpuCode code,
                                                             const ExecutableOptions& options) {
  std::unique_ptr<Executable> executable(new Executable());
  SEAM_RETURN_IF_ERROR(executable->Build(module, std::move(code), options));
  return executable;
}

absl::Status Executable::Build(const Module& module, CpuCode code,
                               const ExecutableOptions& options) {
  module_ = &module;
  profile_steps_ = options.profile_steps;
  evaluator_.set_wide_accumulation(true);  // as the kernels accumulate
  plan_ = std::move(code.plan);            // the steps' pointers into it stay valid
  Programs programs = std::move(code.programs);
  SEAM_RETURN_IF_ERROR(CheckMemory(module, programs));
  programs_ = std::move(programs.by_computation);
  irs_ = std::move(programs.irs);
  stats_.compiled_kernels = programs.compiled_kernels;
  stats_.op_kernels = programs.op_kernels;
  stats_.aliases = programs.aliases;
  stats_.blas_calls = programs.library_calls;
  stats_.epilogues = programs.epilogues;
  stats_.fallbacks = std::move(programs.fallbacks);
  stats_.distinct_kernels = code.distinct_kernels;
  stats_.codegen_seconds = code.codegen_seconds;
  if (code.source.empty()) return absl::OkStatus();
  SEAM_ASSIGN_OR_RETURN(CompileResult compiled, CompileAndLoad(code.source));
  object_ = compiled.object;
  stats_.compile_seconds = compiled.seconds;
  stats_.cache_hit = compiled.cache_hit;
  stats_.shared_object = compiled.path;
  for (auto& [computation, program] : programs_) {
    for (Step& s : program->steps) {
      if (s.kind != Step::Kind::kKernel && s.kind != Step::Kind::kOpKernel && s.epilogue == nullptr) {
        continue;
      }
      SEAM_ASSIGN_OR_RETURN(void* address, object_->Symbol(s.symbol));
      s.launch = static_cast<int>(launches_.size());
      Launch& launch = launches_.emplace_back();
      if (s.epilogue != nullptr) {
        launch.epilogue = reinterpret_cast<seam_cpu_epilogue>(address);
        continue;
      }
      launch.function = reinterpret_cast<seam_cpu_kernel>(address);
      if (options.profile_kernels && s.kind == Step::Kind::kKernel) {
        launch.profile = static_cast<int>(profile_.size());
        profile_.push_back({s.kernel, 0, 0});
      }
    }
  }
  return absl::OkStatus();
}

// The estimate of what a run holds at once, refused before anything runs
// when the machine does not have it.
absl::Status Executable::CheckMemory(const Module& module, const Programs& programs) {
  double arguments = 0;
  for (const Instruction* p : module.entry()->parameters()) {
    if (p != nullptr) arguments += ShapeBytes(p->shape());
  }
  stats_.estimated_peak_bytes = arguments + EstimatePeakBytes(programs, *module.entry());
  // Memory beyond what a whole run holds at once is never needed.
  pool_.set_limit(static_cast<size_t>(stats_.estimated_peak_bytes));
  const double available = static_cast<double>(AvailableMemoryBytes());
  if (available > 0 && stats_.estimated_peak_bytes > available) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "'%s' needs about %.2f GiB at its peak (arguments, constants, results and intermediates); "
        "this machine has %.2f GiB available",
        module.name(), stats_.estimated_peak_bytes / (1 << 30), available / (1 << 30)));
  }
  return absl::OkStatus();
}

absl::StatusOr<Literal> Executable::Run(absl::Span<const Literal> arguments) {
  SEAM_RETURN_IF_ERROR(CheckArguments(*module_->entry(), arguments));
  std::vector<Held> borrowed;
  for (const Literal& a : arguments) borrowed.push_back(Borrowed(a));
  return RunEntry(std::move(borrowed), ArgumentBytes(arguments));
}

absl::StatusOr<Literal> Executable::RunDonating(std::vector<Literal>& arguments,
                                                absl::Span<const int64_t> donated) {
  SEAM_RETURN_IF_ERROR(CheckArguments(*module_->entry(), arguments));
  const double bytes = ArgumentBytes(arguments);
  std::vector<Held> held;
  for (const Literal& a : arguments) held.push_back(Borrowed(a));
  for (int64_t p : donated) {
    if (p >= 0 && p < static_cast<int64_t>(held.size())) held[p] = Owned(std::move(arguments[p]));
  }
  return RunEntry(std::move(held), bytes);
}

absl::StatusOr<Literal> Executable::RunEntry(std::vector<Held> arguments, double argument_bytes) {
  SEAM_ASSIGN_OR_RETURN(Literal result, RunProgram(*programs_.at(module_->entry()), std::move(arguments)));
  stats_.peak_bytes = std::max<double>(
      stats_.peak_bytes, static_cast<double>(pool_.peak_bytes()) + constant_bytes_ + argument_bytes);
  // After each of the first runs, while the pool learns which sizes a run
  // asks for (MobileNetV2 still freed 0.4 GB a run with the limit raised
  // once); then it stays, so that best fits that miss cannot ratchet it up
  // run by run (resnet50: 100 MB more over 30 runs).
  if (runs_raising_pool_limit_ > 0) {
    pool_.RaiseLimitToPeak();
    --runs_raising_pool_limit_;
  }
  ForEachArray(result, [&](Literal& a) { pool_.Disown(a.bytes()); });
  return result;
}

// An array's bytes in pooled memory, copied on the pool.
Literal Executable::CopyOfBytes(const Literal& array) {
  Literal copy = pool_.TakeLiteral(array.shape());
  const uint8_t* from = array.bytes().data();
  uint8_t* to = copy.mutable_bytes().data();
  ThreadPool::Global().ParallelFor(static_cast<int64_t>(array.bytes().size()), int64_t{1} << 20,
                                   [&](int64_t begin, int64_t end, int) {
                                     std::memcpy(to + begin, from + begin, end - begin);
                                   });
  return copy;
}

// A copy of `value` (an array, or a tuple of them) in pooled memory, copied
// on the pool: memory the pool has touched already, where a fresh
// allocation faults in every page (GPT-2's outputs, a few MB of
// parameters and caches returned as they are: 1.9-3.0 ms per run).
Literal Executable::CopyOf(const Literal& value) {
  if (!value.shape().IsTuple()) return CopyOfBytes(value);
  std::vector<Literal> elements;
  for (const Literal& element : value.tuple_elements()) elements.push_back(CopyOf(element));
  return Literal::Tuple(value.shape(), std::move(elements));
}

// An uninitialized value of `shape` (an array, or a tuple of arrays) in
// pooled memory.
Literal Executable::TakeResult(const Shape& shape) {
  if (!shape.IsTuple()) return pool_.TakeLiteral(shape);
  std::vector<Literal> elements;
  for (const Shape& element : shape.tuple_shapes()) elements.push_back(TakeResult(element));
  return Literal::Tuple(shape, std::move(elements));
}

void Executable::Recycle(Literal value) {
  ForEachArray(value, [&](Literal& a) { pool_.Adopt(std::move(a.mutable_bytes())); });
}

absl::Status Executable::RunAndDiscard(absl::Span<const Literal> arguments) {
  SEAM_ASSIGN_OR_RETURN(Literal out, Run(arguments));
  Recycle(std::move(out));
  return absl::OkStatus();
}

absl::Status Executable::RunKernel(const Step& step, Values& values) {
  const codegen::KernelIr& ir = *step.ir;
  std::vector<void*> buffers;
  buffers.reserve(ir.buffers.size());
  std::vector<ByteBuffer> scratch;
  for (size_t k = 0; k < ir.buffers.size(); ++k) {
    const codegen::KernelBuffer& b = ir.buffers[k];
    switch (b.storage) {
      case codegen::Storage::kInput: {
        Held* in = step.buffer_slots[k] >= 0 ? values.Find(step.buffer_slots[k]) : nullptr;
        if (in == nullptr) {
          return absl::InternalError(absl::StrCat(ir.name, ": input ", b.value->name(), " missing"));
        }
        buffers.push_back(in->literal->mutable_bytes().data());
        break;
      }
      case codegen::Storage::kOutput: {
        Held out = Owned(pool_.TakeLiteral(b.value->shape()));
        buffers.push_back(out.literal->mutable_bytes().data());
        values.Set(step.buffer_slots[k], std::move(out));
        break;
      }
      default: {
        int64_t bytes = std::max<int64_t>(1, b.elements * std::max(1, DTypeByteSize(b.dtype)));
        scratch.push_back(pool_.Take(static_cast<size_t>(bytes)));
        buffers.push_back(scratch.back().data());
        break;
      }
    }
  }
  const Launch& launch = launches_[step.launch];
  const seam_pool* threads = ThreadPool::Global().c_interface();
  if (launch.profile >= 0) {
    auto start = std::chrono::steady_clock::now();
    launch.function(buffers.data(), threads);
    KernelProfile& p = profile_[launch.profile];
    p.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ++p.launches;
  } else {
    launch.function(buffers.data(), threads);
  }
  for (ByteBuffer& b : scratch) pool_.Give(std::move(b));
  return absl::OkStatus();
}

// The loop state is the loop's own: each body run consumes it (its
// elements may be updated in place) and returns the next.
absl::StatusOr<Literal> Executable::RunWhile(const Instruction& i, Literal state) {
  const Program& condition = *programs_.at(*i.attrs().condition);
  const Program& body = *programs_.at(*i.attrs().body);
  while (true) {
    SEAM_ASSIGN_OR_RETURN(Literal go, RunProgram(condition, Only(Borrowed(state))));
    const bool again = go.GetBits(0) != 0;
    Recycle(std::move(go));  // back to the pool: a loop's memory must not grow with its trip count
    if (!again) return state;
    SEAM_ASSIGN_OR_RETURN(state, RunProgram(body, Only(Owned(std::move(state)))));
  }
}

// Built on first use and kept: an elided constant's data is filled once
// (deterministically, from its name), never once per run.
absl::StatusOr<const Literal*> Executable::Constant(const Instruction& i) {
  auto it = constants_.find(&i);
  if (it == constants_.end()) {
    SEAM_ASSIGN_OR_RETURN(Literal value, EvalInstruction(i, {}, evaluator_));
    constant_bytes_ += ShapeBytes(value.shape());
    it = constants_.emplace(&i, std::make_unique<Literal>(std::move(value))).first;
  }
  return it->second.get();
}

absl::StatusOr<Literal> Executable::RunInstruction(const Instruction& i,
                                                   absl::Span<const Literal* const> operands) {
  switch (i.opcode()) {
    case Opcode::kConditional: {
      std::vector<Computation*> branches = i.CalledComputations();
      int64_t index = BranchIndex(*operands[0], static_cast<int64_t>(branches.size()));
      return RunProgram(*programs_.at(branches[index]), Only(Borrowed(*operands[1 + index])));
    }
    case Opcode::kCall: {
      std::vector<Held> arguments;
      for (const Literal* o : operands) arguments.push_back(Borrowed(*o));
      return RunProgram(*programs_.at(*i.attrs().to_apply), std::move(arguments));
    }
    case Opcode::kDot:
    case Opcode::kConvolution:
      if (HostBlasServes(i)) return RunHostBlas(pool_, i, *operands[0], *operands[1]);
      break;
    default:
      break;
  }
  return EvalInstruction(i, operands, evaluator_);
}

absl::StatusOr<Literal> Executable::RunWithEpilogue(const Step& step,
                                                    absl::Span<const Literal* const> operands,
                                                    absl::Span<void* const> inputs) {
  const Instruction& call = *step.instruction;
  const Shape& shape = step.epilogue->result->shape();
  // Written over the call's own result where it has the same type.
  const bool in_place = shape.dtype() == call.shape().dtype();
  std::optional<Literal> separate;
  if (!in_place) separate.emplace(TakeResult(shape));
  void* const out = in_place ? nullptr : separate->mutable_bytes().data();
  const seam_cpu_epilogue function = launches_[step.launch].epilogue;
  auto apply = [&](void* result, int64_t begin, int64_t end, int64_t column_begin, int64_t column_end) {
    absl::InlinedVector<void*, 8> buffers;
    buffers.push_back(result);
    buffers.insert(buffers.end(), inputs.begin(), inputs.end());
    buffers.push_back(in_place ? result : out);
    function(buffers.data(), begin, end, column_begin, column_end);
  };
  ResultEpilogue epilogue{apply};
  epilogue.columns = call.shape().rank() == 0 ? 1 : call.shape().dims().back();
  SEAM_ASSIGN_OR_RETURN(Literal value, RunHostBlas(pool_, call, *operands[0], *operands[1], &epilogue));
  if (!in_place) {
    pool_.Give(std::move(value.mutable_bytes()));
    return *std::move(separate);
  }
  return Literal::FromBytes(shape, std::move(value.mutable_bytes()));
}

absl::StatusOr<Literal> Executable::RunProgram(const Program& program, std::vector<Held> arguments) {
  Values values(program);
  std::vector<int> remaining = program.readers_by_slot;  // reads still to come
  // The step's read number `k`.
  auto find = [&](const Step& step, size_t k) -> absl::StatusOr<Held*> {
    Held* held = values.Find(step.read_slots[k]);
    if (held == nullptr) {
      return absl::InternalError(absl::StrCat("value of ", step.reads[k]->name(), " is not computed yet"));
    }
    return held;
  };
  // Whether `step`, reading its read `k` once, is the last to need its memory.
  auto last_holder = [&](const Step& step, size_t k, const Held& held) {
    const Instruction* v = step.reads[k];
    return held.owned && held.literal.use_count() == 1 && remaining[step.read_slots[k]] == 1 &&
           v != program.computation->root() &&
           std::count(step.reads.begin(), step.reads.end(), v) == 1;
  };
  // Read `k` as a value of its own: moved when this step is its last
  // holder, else copied.
  auto take = [&](const Step& step, size_t k) -> absl::StatusOr<Literal> {
    SEAM_ASSIGN_OR_RETURN(Held * held, find(step, k));
    if (last_holder(step, k, *held)) return std::move(*held->literal);
    return CopyOf(*held->literal);
  };
  for (const Step& step : program.steps) {
    const auto step_start = profile_steps_ ? std::chrono::steady_clock::now()
                                           : std::chrono::steady_clock::time_point{};
    switch (step.kind) {
      case Step::Kind::kInstruction: {
        const Instruction& i = *step.instruction;
        switch (i.opcode()) {
          case Opcode::kParameter:
            values.Set(step.write_slots[0], std::move(arguments[i.parameter_number()]));
            break;
          case Opcode::kConstant: {
            SEAM_ASSIGN_OR_RETURN(const Literal* constant, Constant(i));
            values.Set(step.write_slots[0], Borrowed(*constant));
            break;
          }
          case Opcode::kGetTupleElement: {
            SEAM_ASSIGN_OR_RETURN(Held * tuple, find(step, 0));
            Literal& element = tuple->literal->mutable_tuple_elements()[*i.attrs().index];
            if (program.split_tuples.contains(i.operand(0)) && tuple->owned &&
                tuple->literal.use_count() == 1) {
              values.Set(step.write_slots[0], Owned(std::move(element)));
            } else {
              values.Set(step.write_slots[0], {std::shared_ptr<Literal>(tuple->literal, &element), false});
            }
            break;
          }
          case Opcode::kTuple: {
            std::vector<Literal> elements;
            elements.reserve(i.operand_count());
            for (int k = 0; k < i.operand_count(); ++k) {
              SEAM_ASSIGN_OR_RETURN(Literal element, take(step, k));
              elements.push_back(std::move(element));
            }
            values.Set(step.write_slots[0], Owned(Literal::Tuple(i.shape(), std::move(elements))));
            break;
          }
          case Opcode::kWhile: {
            SEAM_ASSIGN_OR_RETURN(Literal state, take(step, 0));
            SEAM_ASSIGN_OR_RETURN(Literal result, RunWhile(i, std::move(state)));
            values.Set(step.write_slots[0], Owned(std::move(result)));
            break;
          }
          default: {
            std::vector<const Literal*> operands;
            for (int k = 0; k < i.operand_count(); ++k) {
              SEAM_ASSIGN_OR_RETURN(Held * held, find(step, k));
              operands.push_back(held->literal.get());
            }
            if (step.epilogue != nullptr) {
              std::vector<void*> inputs;
              for (size_t k = i.operand_count(); k < step.reads.size(); ++k) {
                SEAM_ASSIGN_OR_RETURN(Held * held, find(step, k));
                inputs.push_back(held->literal->mutable_bytes().data());
              }
              SEAM_ASSIGN_OR_RETURN(Literal value, RunWithEpilogue(step, operands, inputs));
              values.Set(step.write_slots[0], Owned(std::move(value)));
              break;
            }
            SEAM_ASSIGN_OR_RETURN(Literal value, RunInstruction(i, operands));
            values.Set(step.write_slots[0], Owned(std::move(value)));
            break;
          }
        }
        break;
      }
      case Step::Kind::kKernel:
        SEAM_RETURN_IF_ERROR(RunKernel(step, values));
        break;
      case Step::Kind::kOpKernel: {
        const Instruction& i = *step.instruction;
        std::vector<void*> buffers;
        for (int k = 0; k < i.operand_count(); ++k) {
          SEAM_ASSIGN_OR_RETURN(Held * held, find(step, k));
          buffers.push_back(held->literal->mutable_bytes().data());
        }
        // The result takes over its in-place operand's memory when this is
        // that operand's last reader (the kernel then skips the copy).
        const int in_place = codegen::InPlaceOperand(i);
        auto result_memory = [&]() -> absl::StatusOr<Literal> {
          if (in_place >= 0) {
            SEAM_ASSIGN_OR_RETURN(Held * target, find(step, in_place));
            if (last_holder(step, in_place, *target)) {
              ++stats_.in_place_updates;
              return take(step, in_place);
            }
          }
          return TakeResult(i.shape());
        };
        SEAM_ASSIGN_OR_RETURN(Literal result, result_memory());
        if (result.shape().IsTuple()) {
          for (Literal& e : result.mutable_tuple_elements()) buffers.push_back(e.mutable_bytes().data());
        } else {
          buffers.push_back(result.mutable_bytes().data());
        }
        launches_[step.launch].function(buffers.data(), ThreadPool::Global().c_interface());
        values.Set(step.write_slots[0], Owned(std::move(result)));
        break;
      }
      case Step::Kind::kAlias: {
        // Reshapes of row-major arrays have their inputs' bytes: each taken
        // over when this is the input's last reader, else copied on the
        // pool. (Several at once where the planner grouped independent
        // reshapes, attention's q, k and v: the interpreter copied them
        // into fresh, zeroed memory.)
        const std::vector<size_t> sources = ReshapedReads(step);
        if (!sources.empty()) {
          for (size_t j = 0; j < sources.size(); ++j) {
            SEAM_ASSIGN_OR_RETURN(Literal bytes, take(step, sources[j]));
            values.Set(step.write_slots[j],
                       Owned(Literal::FromBytes(step.writes[j]->shape(),
                                                std::move(bytes.mutable_bytes()))));
          }
          break;
        }
        [[fallthrough]];
      }
      case Step::Kind::kInterpretKernel: {
        // Member by member in the interpreter (an alias that is not a plain
        // reshape: the interpreter's is a copy with the new shape).
        absl::flat_hash_map<const Instruction*, std::shared_ptr<Literal>> local;
        for (const Instruction* m : step.kernel->instructions) {
          std::vector<const Literal*> operands;
          for (const Instruction* o : m->operands()) {
            auto it = local.find(o);
            if (it != local.end()) {
              operands.push_back(it->second.get());
              continue;
            }
            Held* held = values.Find(o);
            if (held == nullptr) {
              return absl::InternalError(absl::StrCat("value of ", o->name(), " is not computed yet"));
            }
            operands.push_back(held->literal.get());
          }
          SEAM_ASSIGN_OR_RETURN(Literal value, EvalInstruction(*m, operands, evaluator_));
          local[m] = std::make_shared<Literal>(std::move(value));
        }
        for (const Instruction* o : step.kernel->outputs) values.Set(o, {local.at(o), true});
        break;
      }
    }
    if (profile_steps_) {
      CountTime(step, std::chrono::duration<double>(std::chrono::steady_clock::now() - step_start)
                          .count());
    }
    for (size_t k = 0; k < step.reads.size(); ++k) {
      const int slot = step.read_slots[k];
      if (--remaining[slot] != 0 || step.reads[k] == program.computation->root()) continue;
      Held* dead = values.Find(slot);
      if (dead == nullptr) continue;
      GiveBack(*dead);
      values.Erase(slot);
    }
  }
  auto root_slot = program.slots.find(program.computation->root());
  Held* root = root_slot != program.slots.end() ? values.Find(root_slot->second) : nullptr;
  if (root == nullptr) return absl::InternalError("the root was not computed");
  // What is not the run's alone (an argument, a view, a value shared
  // elsewhere) is copied, never moved from.
  Literal result = !root->owned || root->literal.use_count() > 1 ? CopyOf(*root->literal)
                                                                 : std::move(*root->literal);
  values.Erase(root_slot->second);
  values.ForEach([&](Held& held) { GiveBack(held); });  // values nothing read
  return result;
}

// A control-flow step's time is its steps', counted as they run.
void Executable::CountTime(const Step& step, double seconds) {
  StepTimes& t = stats_.time;
  switch (step.kind) {
    case Step::Kind::kKernel: t.kernels += seconds; return;
    case Step::Kind::kOpKernel: t.op_kernels += seconds; return;
    case Step::Kind::kAlias: t.other += seconds; return;  // a reshape: bytes taken or copied
    case Step::Kind::kInterpretKernel: t.interpreter += seconds; return;
    case Step::Kind::kInstruction: break;
  }
  switch (step.instruction->opcode()) {
    case Opcode::kWhile:
    case Opcode::kCall:
    case Opcode::kConditional: return;
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kTuple:
    case Opcode::kGetTupleElement: t.other += seconds; return;
    default:
      (HostBlasServes(*step.instruction) ? t.library : t.interpreter) += seconds;
  }
}

// The last holder of an owned value: its memory serves the next values.
void Executable::GiveBack(Held& held) {
  if (!held.owned || held.literal.use_count() != 1) return;
  ForEachArray(*held.literal, [&](Literal& a) { pool_.Give(std::move(a.mutable_bytes())); });
}

}  // namespace seam::runtime
