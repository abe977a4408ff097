#include "seam/runtime/executable.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <queue>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "seam/codegen/emit_cpu.h"
#include "seam/codegen/render_common.h"
#include "seam/eval/ops.h"
#include "seam/fusion/op_class.h"
#include "seam/fusion/plan_printer.h"
#include "seam/runtime/blas_conv.h"
#include "seam/runtime/blas_dot.h"
#include "seam/util/status_macros.h"

namespace seam::runtime {

using KernelFunction = void (*)(void* const*);

struct Executable::Step {
  enum class Kind { kKernel, kInterpretKernel, kAlias, kInstruction };
  Kind kind = Kind::kInstruction;
  const fusion::Kernel* kernel = nullptr;
  const codegen::KernelIr* ir = nullptr;
  std::string symbol;
  KernelFunction function = nullptr;
  int profile = -1;  // index into profile_ when kernels are timed
  const Instruction* instruction = nullptr;
  std::vector<const Instruction*> reads;   // values it needs
  std::vector<const Instruction*> writes;  // values it produces
  int position = 0;                        // post-order position, for a stable schedule
};

struct Executable::Program {
  const Computation* computation = nullptr;
  std::vector<Step> steps;
  absl::flat_hash_map<const Instruction*, int> readers;  // reads of each value, over all steps
  // Tuples read only by get-tuple-elements, each of another index: those
  // may take their element out instead of viewing it.
  absl::flat_hash_set<const Instruction*> split_tuples;
};

// A value during a run. Owned values may be recycled, moved or updated in
// place once their last reader runs; the rest (the caller's arguments,
// views into a tuple) are only read.
struct Executable::Held {
  std::shared_ptr<Literal> literal;
  bool owned = false;
};

namespace {

using Values = absl::flat_hash_map<const Instruction*, Executable::Held>;

Executable::Held Owned(Literal value) {
  return {std::make_shared<Literal>(std::move(value)), true};
}

Executable::Held Borrowed(const Literal& value) {
  return {std::shared_ptr<Literal>(const_cast<Literal*>(&value), [](Literal*) {}), false};
}

// The argument list of a one-parameter computation. (Not an initializer
// list: its copy would hold the value until the call returns.)
std::vector<Executable::Held> Only(Executable::Held argument) {
  std::vector<Executable::Held> arguments;
  arguments.push_back(std::move(argument));
  return arguments;
}

// Tuples whose every reader is a get-tuple-element of an index no other
// reader takes.
absl::flat_hash_set<const Instruction*> SplitTuples(const Computation& computation) {
  absl::flat_hash_set<const Instruction*> split;
  for (const Instruction* i : computation.MakePostOrder()) {
    if (!i->shape().IsTuple() || i == computation.root()) continue;
    absl::flat_hash_set<int64_t> taken;
    bool only_distinct_elements = true;
    for (const Instruction* user : i->users()) {
      only_distinct_elements &= user->opcode() == Opcode::kGetTupleElement &&
                                taken.insert(*user->attrs().index).second;
    }
    if (only_distinct_elements) split.insert(i);
  }
  return split;
}

// Dots and convolutions that BLAS serves.
bool IsLibraryCall(const Instruction& i) {
  return (i.opcode() == Opcode::kDot && BlasHandles(i)) ||
         (i.opcode() == Opcode::kConvolution && BlasConvolutionHandles(i));
}

bool RunsNatively(const Instruction& i) {
  switch (i.opcode()) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kTuple:
    case Opcode::kGetTupleElement:
    case Opcode::kWhile:
    case Opcode::kConditional:
    case Opcode::kCall:
      return true;
    case Opcode::kDot:
    case Opcode::kConvolution:
      return IsLibraryCall(i);
    default:
      return false;
  }
}

// Orders steps so each runs after the producers of what it reads; among
// ready steps, the earliest in the computation's post order first.
std::vector<Executable::Step> Schedule(std::vector<Executable::Step> steps) {
  absl::flat_hash_map<const Instruction*, int> producer;
  for (size_t k = 0; k < steps.size(); ++k) {
    for (const Instruction* w : steps[k].writes) producer[w] = static_cast<int>(k);
  }
  std::vector<std::vector<int>> next(steps.size());
  std::vector<int> waiting(steps.size(), 0);
  for (size_t k = 0; k < steps.size(); ++k) {
    absl::flat_hash_set<int> from;
    for (const Instruction* r : steps[k].reads) {
      auto it = producer.find(r);
      if (it != producer.end() && it->second != static_cast<int>(k)) from.insert(it->second);
    }
    for (int f : from) {
      next[f].push_back(static_cast<int>(k));
      ++waiting[k];
    }
  }
  using Entry = std::pair<int, int>;  // position, step
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> ready;
  for (size_t k = 0; k < steps.size(); ++k) {
    if (waiting[k] == 0) ready.push({steps[k].position, static_cast<int>(k)});
  }
  std::vector<Executable::Step> order;
  while (!ready.empty()) {
    int k = ready.top().second;
    ready.pop();
    order.push_back(steps[k]);
    for (int n : next[k]) {
      if (--waiting[n] == 0) ready.push({steps[n].position, n});
    }
  }
  return order;
}

absl::Status Dump(const std::string& dir, const fusion::FusionPlan& plan, const std::string& source) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) return absl::PermissionDeniedError(absl::StrCat("cannot create ", dir, ": ", error.message()));
  std::ofstream(dir + "/plan.txt") << fusion::PlanToText(plan);
  std::ofstream(dir + "/kernels.cc") << source;
  return absl::OkStatus();
}

std::string Describe(const Instruction& i, absl::string_view why) {
  return absl::StrCat(i.name(), " (", OpcodeName(i.opcode()), "): ", why);
}

}  // namespace

Executable::~Executable() = default;

absl::StatusOr<std::unique_ptr<Executable>> Executable::Compile(const Module& module,
                                                                const ExecutableOptions& options) {
  std::unique_ptr<Executable> executable(new Executable());
  SEAM_RETURN_IF_ERROR(executable->Build(module, options));
  return executable;
}

absl::Status Executable::Build(const Module& module, const ExecutableOptions& options) {
  module_ = &module;
  evaluator_.set_wide_accumulation(true);  // as the kernels accumulate
  auto start = std::chrono::steady_clock::now();
  SEAM_ASSIGN_OR_RETURN(plan_, fusion::PlanModule(module, options.plan));
  std::vector<std::string> sources;
  codegen::KernelDeduplicator distinct;
  for (size_t c = 0; c < plan_.computations.size(); ++c) {
    const fusion::ComputationPlan& cp = plan_.computations[c];
    auto program = std::make_unique<Program>();
    program->computation = cp.computation;
    absl::flat_hash_map<const Instruction*, int> position;
    absl::flat_hash_set<const Instruction*> in_kernels;
    for (const Instruction* i : cp.computation->MakePostOrder()) {
      position[i] = static_cast<int>(position.size());
    }
    for (const fusion::Kernel& k : cp.kernels) {
      Step step;
      step.kernel = &k;
      // Every value from outside, scalar constants included (the compiled
      // kernel inlines those, the interpreter reads them).
      absl::flat_hash_set<const Instruction*> members(k.instructions.begin(), k.instructions.end());
      for (const Instruction* m : k.instructions) {
        for (const Instruction* o : m->operands()) {
          if (!members.contains(o) &&
              std::find(step.reads.begin(), step.reads.end(), o) == step.reads.end()) {
            step.reads.push_back(o);
          }
        }
      }
      step.writes = k.outputs;
      step.position = position[k.instructions.back()];
      for (const Instruction* i : k.instructions) in_kernels.insert(i);
      if (k.alias_only) {
        step.kind = Step::Kind::kAlias;
        ++stats_.aliases;
      } else {
        std::string symbol = absl::StrCat("seam_c", c, "_k", k.id);
        absl::StatusOr<codegen::KernelIr> ir = codegen::LowerKernel(k, options.plan.device, symbol);
        absl::StatusOr<std::string> source =
            ir.ok() ? codegen::EmitCpuKernel(*ir) : absl::StatusOr<std::string>(ir.status());
        if (source.ok()) {
          step.kind = Step::Kind::kKernel;
          irs_.push_back(std::make_unique<codegen::KernelIr>(std::move(*ir)));
          step.ir = irs_.back().get();
          bool fresh = false;
          step.symbol = distinct.Add(symbol, *source, &fresh);
          if (fresh) sources.push_back(std::move(*source));
          ++stats_.compiled_kernels;
        } else {
          step.kind = Step::Kind::kInterpretKernel;
          stats_.fallbacks.push_back(absl::StrCat(k.Name(), " interpreted: ", source.status().message()));
        }
      }
      program->steps.push_back(std::move(step));
    }
    for (const Instruction* i : cp.computation->MakePostOrder()) {
      if (in_kernels.contains(i)) continue;
      Step step;
      step.instruction = i;
      step.reads.assign(i->operands().begin(), i->operands().end());
      step.reads.insert(step.reads.end(), i->control_predecessors().begin(),
                        i->control_predecessors().end());
      step.writes = {i};
      step.position = position[i];
      if (IsLibraryCall(*i)) ++stats_.blas_calls;
      if (!RunsNatively(*i)) stats_.fallbacks.push_back(Describe(*i, "interpreter"));
      program->steps.push_back(std::move(step));
    }
    program->steps = Schedule(std::move(program->steps));
    for (const Step& s : program->steps) {
      for (const Instruction* r : s.reads) ++program->readers[r];
    }
    program->split_tuples = SplitTuples(*cp.computation);
    programs_[cp.computation] = std::move(program);
  }
  stats_.distinct_kernels = static_cast<int64_t>(sources.size());
  std::string source = codegen::CpuSourceFile(sources);
  stats_.codegen_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!options.dump_to.empty()) SEAM_RETURN_IF_ERROR(Dump(options.dump_to, plan_, source));
  if (sources.empty()) return absl::OkStatus();
  SEAM_ASSIGN_OR_RETURN(CompileResult compiled, CompileAndLoad(source));
  object_ = compiled.object;
  stats_.compile_seconds = compiled.seconds;
  stats_.cache_hit = compiled.cache_hit;
  stats_.shared_object = compiled.path;
  for (auto& [computation, program] : programs_) {
    for (Step& s : program->steps) {
      if (s.kind != Step::Kind::kKernel) continue;
      SEAM_ASSIGN_OR_RETURN(void* address, object_->Symbol(s.symbol));
      s.function = reinterpret_cast<KernelFunction>(address);
      if (options.profile_kernels) {
        s.profile = static_cast<int>(profile_.size());
        profile_.push_back({s.kernel, 0, 0});
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Literal> Executable::Run(absl::Span<const Literal> arguments) {
  SEAM_RETURN_IF_ERROR(CheckArguments(*module_->entry(), arguments));
  std::vector<Held> borrowed;
  for (const Literal& a : arguments) borrowed.push_back(Borrowed(a));
  return RunProgram(*programs_.at(module_->entry()), std::move(borrowed));
}

void Executable::Recycle(Literal value) {
  for (Literal& element : value.mutable_tuple_elements()) Recycle(std::move(element));
  if (value.shape().IsArray()) pool_.Give(std::move(value.mutable_bytes()));
}

absl::Status Executable::RunKernel(const Step& step, Values& values) {
  const codegen::KernelIr& ir = *step.ir;
  std::vector<void*> buffers;
  std::vector<ByteBuffer> scratch;
  for (const codegen::KernelBuffer& b : ir.buffers) {
    switch (b.storage) {
      case codegen::Storage::kInput: {
        auto it = values.find(b.value);
        if (it == values.end()) {
          return absl::InternalError(absl::StrCat(ir.name, ": input ", b.value->name(), " missing"));
        }
        buffers.push_back(it->second.literal->mutable_bytes().data());
        break;
      }
      case codegen::Storage::kOutput: {
        Held out = Owned(pool_.TakeLiteral(b.value->shape()));
        buffers.push_back(out.literal->mutable_bytes().data());
        values[b.value] = std::move(out);
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
  if (step.profile >= 0) {
    auto start = std::chrono::steady_clock::now();
    step.function(buffers.data());
    KernelProfile& p = profile_[step.profile];
    p.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ++p.launches;
  } else {
    step.function(buffers.data());
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
    if (go.GetBits(0) == 0) return state;
    SEAM_ASSIGN_OR_RETURN(state, RunProgram(body, Only(Owned(std::move(state)))));
  }
}

absl::StatusOr<Literal> Executable::RunInstruction(const Instruction& i,
                                                   absl::Span<const Literal* const> operands) {
  switch (i.opcode()) {
    case Opcode::kConditional: {
      std::vector<Computation*> branches = i.CalledComputations();
      int64_t index;
      if (operands[0]->shape().dtype() == DType::kPred) {
        index = operands[0]->GetBits(0) != 0 ? 0 : 1;  // true_computation, false_computation
      } else {
        index = operands[0]->GetInt(0);
        if (index < 0 || index >= static_cast<int64_t>(branches.size())) index = branches.size() - 1;
      }
      return RunProgram(*programs_.at(branches[index]), Only(Borrowed(*operands[1 + index])));
    }
    case Opcode::kCall: {
      std::vector<Held> arguments;
      for (const Literal* o : operands) arguments.push_back(Borrowed(*o));
      return RunProgram(*programs_.at(*i.attrs().to_apply), std::move(arguments));
    }
    case Opcode::kDot:
      if (BlasHandles(i)) return BlasDot(pool_, i, *operands[0], *operands[1]);
      break;
    case Opcode::kConvolution:
      if (BlasConvolutionHandles(i)) return BlasConvolution(pool_, i, *operands[0], *operands[1]);
      break;
    default:
      break;
  }
  return EvalInstruction(i, operands, evaluator_);
}

absl::StatusOr<Literal> Executable::RunProgram(const Program& program, std::vector<Held> arguments) {
  Values values;
  absl::flat_hash_map<const Instruction*, int> remaining = program.readers;
  auto find = [&](const Instruction* r) -> absl::StatusOr<Held*> {
    auto it = values.find(r);
    if (it == values.end()) {
      return absl::InternalError(absl::StrCat("value of ", r->name(), " is not computed yet"));
    }
    return &it->second;
  };
  // Whether `step`, reading `v` once, is the last to need v's memory.
  auto last_holder = [&](const Step& step, const Instruction* v, const Held& held) {
    return held.owned && held.literal.use_count() == 1 && remaining[v] == 1 &&
           v != program.computation->root() &&
           std::count(step.reads.begin(), step.reads.end(), v) == 1;
  };
  // Operand `v` as a value of its own: moved when this step is its last
  // holder, else copied.
  auto take = [&](const Step& step, const Instruction* v) -> absl::StatusOr<Literal> {
    SEAM_ASSIGN_OR_RETURN(Held * held, find(v));
    if (last_holder(step, v, *held)) return std::move(*held->literal);
    return Literal(*held->literal);
  };
  for (const Step& step : program.steps) {
    switch (step.kind) {
      case Step::Kind::kInstruction: {
        const Instruction& i = *step.instruction;
        switch (i.opcode()) {
          case Opcode::kParameter:
            values[&i] = std::move(arguments[i.parameter_number()]);
            break;
          case Opcode::kGetTupleElement: {
            SEAM_ASSIGN_OR_RETURN(Held * tuple, find(i.operand(0)));
            Literal& element = tuple->literal->mutable_tuple_elements()[*i.attrs().index];
            if (program.split_tuples.contains(i.operand(0)) && tuple->owned &&
                tuple->literal.use_count() == 1) {
              values[&i] = Owned(std::move(element));
            } else {
              values[&i] = {std::shared_ptr<Literal>(tuple->literal, &element), false};
            }
            break;
          }
          case Opcode::kTuple: {
            std::vector<Literal> elements;
            for (const Instruction* o : i.operands()) {
              SEAM_ASSIGN_OR_RETURN(Literal element, take(step, o));
              elements.push_back(std::move(element));
            }
            values[&i] = Owned(Literal::Tuple(i.shape(), std::move(elements)));
            break;
          }
          case Opcode::kDynamicUpdateSlice: {
            SEAM_ASSIGN_OR_RETURN(Held * target, find(i.operand(0)));
            if (last_holder(step, i.operand(0), *target)) ++stats_.in_place_updates;
            SEAM_ASSIGN_OR_RETURN(Literal updated, take(step, i.operand(0)));
            std::vector<const Literal*> starts;
            for (int k = 2; k < i.operand_count(); ++k) {
              SEAM_ASSIGN_OR_RETURN(Held * start, find(i.operand(k)));
              starts.push_back(start->literal.get());
            }
            SEAM_ASSIGN_OR_RETURN(Held * update, find(i.operand(1)));
            UpdateSliceInPlace(updated, *update->literal, starts);
            values[&i] = Owned(std::move(updated));
            break;
          }
          case Opcode::kWhile: {
            SEAM_ASSIGN_OR_RETURN(Literal state, take(step, i.operand(0)));
            SEAM_ASSIGN_OR_RETURN(Literal result, RunWhile(i, std::move(state)));
            values[&i] = Owned(std::move(result));
            break;
          }
          default: {
            std::vector<const Literal*> operands;
            for (const Instruction* o : i.operands()) {
              SEAM_ASSIGN_OR_RETURN(Held * held, find(o));
              operands.push_back(held->literal.get());
            }
            SEAM_ASSIGN_OR_RETURN(Literal value, RunInstruction(i, operands));
            values[&i] = Owned(std::move(value));
            break;
          }
        }
        break;
      }
      case Step::Kind::kKernel:
        SEAM_RETURN_IF_ERROR(RunKernel(step, values));
        break;
      case Step::Kind::kAlias:
      case Step::Kind::kInterpretKernel: {
        // Member by member in the interpreter (an alias is a reshape: the
        // interpreter's is a copy with the new shape).
        absl::flat_hash_map<const Instruction*, std::shared_ptr<Literal>> local;
        for (const Instruction* m : step.kernel->instructions) {
          std::vector<const Literal*> operands;
          for (const Instruction* o : m->operands()) {
            auto it = local.find(o);
            if (it != local.end()) {
              operands.push_back(it->second.get());
              continue;
            }
            SEAM_ASSIGN_OR_RETURN(Held * held, find(o));
            operands.push_back(held->literal.get());
          }
          SEAM_ASSIGN_OR_RETURN(Literal value, EvalInstruction(*m, operands, evaluator_));
          local[m] = std::make_shared<Literal>(std::move(value));
        }
        for (const Instruction* o : step.kernel->outputs) values[o] = {local.at(o), true};
        break;
      }
    }
    for (const Instruction* r : step.reads) {
      if (--remaining[r] != 0 || r == program.computation->root()) continue;
      auto dead = values.find(r);
      if (dead == values.end()) continue;
      // The last holder of an owned array: its memory serves the next value.
      Held& held = dead->second;
      if (held.owned && held.literal.use_count() == 1 && held.literal->shape().IsArray()) {
        pool_.Give(std::move(held.literal->mutable_bytes()));
      }
      values.erase(dead);
    }
  }
  auto root = values.find(program.computation->root());
  if (root == values.end()) return absl::InternalError("the root was not computed");
  // What is not the run's alone (an argument, a view, a value shared
  // elsewhere) is copied, never moved from.
  if (!root->second.owned || root->second.literal.use_count() > 1) return *root->second.literal;
  return std::move(*root->second.literal);
}

}  // namespace seam::runtime
