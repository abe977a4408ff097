#include "seam/compiler/program_builder.h"

#include <algorithm>
#include <queue>

#include "absl/strings/str_cat.h"
#include "seam/runtime/thread_pool.h"

namespace seam::compiler {

using codegen::LoweredKernel;
using codegen::LoweredPlan;
using runtime::Program;
using runtime::Programs;
using runtime::Step;
using runtime::ThreadPool;

namespace {

// Tuples whose every reader is a get-tuple-element of an index no other
// reader takes.
absl::flat_hash_set<const Instruction*> SplitTuples(const Computation& computation) {
  absl::flat_hash_set<const Instruction*> split;
  for (const Instruction* i : computation.MakePostOrder()) {
    if (!i->shape().IsTuple() || i == computation.root()) continue;
    absl::flat_hash_set<int64_t> taken;
    bool only_distinct_elements = true;
    for (const Instruction* user : i->users()) {
      only_distinct_elements &=
          user->opcode() == Opcode::kGetTupleElement && taken.insert(*user->attrs().index).second;
    }
    if (only_distinct_elements) split.insert(i);
  }
  return split;
}

// What every executor runs itself: structure, control flow, library calls,
// values passed on unchanged.
bool RunsNatively(const Instruction& i, const IsLibraryCall& library_call) {
  return runtime::RunsAsStructure(i) || library_call(i);
}

// Orders steps so each runs after the producers of what it reads; among
// ready steps, the earliest in the computation's post order first.
std::vector<Step> Schedule(std::vector<Step> steps) {
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
  std::vector<Step> order;
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

// The launch (or interpretation, or alias) of planned kernel `k`.
Step KernelStep(const fusion::Kernel& k, int planned, int position) {
  Step step;
  step.planned = planned;
  step.members = k.instructions;
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
  step.position = position;
  return step;
}

// Each lowered kernel's code, emitted on the pool, by computation and
// kernel (an unlowered kernel's: its lowering error).
std::vector<std::vector<absl::StatusOr<std::string>>> EmitKernels(const LoweredPlan& lowered,
                                                                  const GenerateKernel& generate) {
  std::vector<std::vector<absl::StatusOr<std::string>>> code(lowered.size());
  std::vector<std::pair<size_t, size_t>> jobs;
  for (size_t c = 0; c < lowered.size(); ++c) {
    for (size_t k = 0; k < lowered[c].size(); ++k) {
      if (!lowered[c][k].ir.ok()) {
        code[c].push_back(lowered[c][k].ir.status());
        continue;
      }
      code[c].push_back(absl::UnknownError("not emitted"));
      jobs.push_back({c, k});
    }
  }
  auto emit = [&](int64_t job) -> absl::Status {
    const auto [c, k] = jobs[static_cast<size_t>(job)];
    code[c][k] = generate.emit(*lowered[c][k].ir, lowered[c][k].name);
    return absl::OkStatus();  // each kernel keeps its own status
  };
  ThreadPool::Global().ParallelForEach(static_cast<int64_t>(jobs.size()), emit).IgnoreError();
  return code;
}

}  // namespace

LoweredPlan LowerPlan(const fusion::FusionPlan& plan) {
  LoweredPlan lowered(plan.computations.size());
  std::vector<std::pair<size_t, size_t>> jobs;
  for (size_t c = 0; c < plan.computations.size(); ++c) {
    const fusion::ComputationPlan& cp = plan.computations[c];
    lowered[c].resize(cp.kernels.size());
    for (size_t k = 0; k < cp.kernels.size(); ++k) {
      if (cp.kernels[k].alias_only) continue;
      lowered[c][k].name = absl::StrCat("seam_c", c, "_k", cp.kernels[k].id);
      jobs.push_back({c, k});
    }
  }
  auto lower = [&](int64_t job) -> absl::Status {
    const auto [c, k] = jobs[static_cast<size_t>(job)];
    LoweredKernel& l = lowered[c][k];
    l.ir = codegen::LowerKernel(plan.computations[c].kernels[k], plan.device, l.name);
    if (l.ir.ok()) l.ir->excess_precision = plan.excess_precision;
    return absl::OkStatus();  // each kernel keeps its own status
  };
  ThreadPool::Global().ParallelForEach(static_cast<int64_t>(jobs.size()), lower).IgnoreError();
  return lowered;
}

Programs BuildPrograms(const fusion::FusionPlan& plan, LoweredPlan lowered,
                       const GenerateKernel& generate, const IsLibraryCall& library_call,
                       const DescribeFallback& describe_fallback,
                       const GenerateOpKernel& generate_op,
                       const GenerateEpilogue& generate_epilogue) {
  Programs out;
  std::vector<std::vector<absl::StatusOr<std::string>>> code = EmitKernels(lowered, generate);
  for (size_t c = 0; c < plan.computations.size(); ++c) {
    const fusion::ComputationPlan& cp = plan.computations[c];
    auto program = std::make_unique<Program>();
    program->computation = cp.computation;
    program->planned = static_cast<int>(c);
    absl::flat_hash_map<const Instruction*, int> position;
    absl::flat_hash_set<const Instruction*> in_kernels;
    for (const Instruction* i : cp.computation->MakePostOrder()) {
      position[i] = static_cast<int>(position.size());
    }
    for (size_t kernel = 0; kernel < cp.kernels.size(); ++kernel) {
      const fusion::Kernel& k = cp.kernels[kernel];
      Step step = KernelStep(k, static_cast<int>(kernel), position[k.instructions.back()]);
      for (const Instruction* i : k.instructions) in_kernels.insert(i);
      if (k.alias_only) {
        step.kind = Step::Kind::kAlias;
        ++out.aliases;
      } else {
        LoweredKernel& l = lowered[c][kernel];
        absl::StatusOr<std::string> symbol = l.ir.ok()
                                                 ? generate.keep(l.name, std::move(code[c][kernel]))
                                                 : absl::StatusOr<std::string>(l.ir.status());
        if (symbol.ok()) {
          step.kind = Step::Kind::kKernel;
          out.irs.push_back(std::make_unique<codegen::KernelIr>(std::move(*l.ir)));
          step.ir = out.irs.back().get();
          step.symbol = std::move(*symbol);
          ++out.compiled_kernels;
        } else {
          step.kind = Step::Kind::kInterpretKernel;
          out.fallbacks.push_back(
              absl::StrCat(k.Name(), " interpreted: ", symbol.status().message()));
        }
      }
      program->steps.push_back(std::move(step));
    }
    // Library calls with an epilogue the backend generates: the epilogue's
    // ops (but broadcasts kernels still compute for other readers) run in
    // the call's step.
    absl::flat_hash_map<const Instruction*, std::pair<const fusion::Epilogue*, std::string>>
        epilogues;
    for (const fusion::StandaloneOp& call : cp.library_calls) {
      if (call.epilogue.empty() || !library_call(*call.op)) continue;
      absl::StatusOr<std::string> symbol =
          generate_epilogue
              ? generate_epilogue(*call.op, call.epilogue,
                                  absl::StrCat("seam_c", c, "_epilogue", position[call.op]))
              : absl::UnimplementedError("no generated code");
      if (!symbol.ok()) continue;  // its ops run one by one
      epilogues[call.op] = {&call.epilogue, *std::move(symbol)};
      for (const Instruction* op : call.epilogue.ops) in_kernels.insert(op);
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
      if (auto e = epilogues.find(i); e != epilogues.end()) {
        const fusion::Epilogue& epilogue = *e->second.first;
        step.epilogue = true;
        step.symbol = e->second.second;
        // After the call's operands, before any control predecessor.
        step.reads.insert(step.reads.begin() + i->operand_count(), epilogue.inputs.begin(),
                          epilogue.inputs.end());
        step.writes = {epilogue.result};
        ++out.epilogues;
      }
      if (library_call(*i)) ++out.library_calls;
      if (!RunsNatively(*i, library_call)) {
        absl::StatusOr<std::string> symbol =
            generate_op ? generate_op(*i, absl::StrCat("seam_c", c, "_op", position[i]))
                        : absl::UnimplementedError("no generated code");
        if (symbol.ok()) {
          step.kind = Step::Kind::kOpKernel;
          step.symbol = std::move(*symbol);
          ++out.op_kernels;
        } else {
          out.fallbacks.push_back(
              absl::StrCat(i->name(), " (", OpcodeName(i->opcode()),
                           "): ", describe_fallback ? describe_fallback(*i) : "interpreter",
                           generate_op ? absl::StrCat(" (", symbol.status().message(), ")") : ""));
        }
      }
      program->steps.push_back(std::move(step));
    }
    program->steps = Schedule(std::move(program->steps));
    for (const Step& s : program->steps) {
      for (const Instruction* r : s.reads) ++program->readers[r];
      for (const std::vector<const Instruction*>* values : {&s.reads, &s.writes}) {
        for (const Instruction* v : *values) {
          program->slots.try_emplace(v, static_cast<int>(program->slots.size()));
        }
      }
    }
    for (Step& s : program->steps) {
      for (const Instruction* r : s.reads) s.read_slots.push_back(program->slots.at(r));
      for (const Instruction* w : s.writes) s.write_slots.push_back(program->slots.at(w));
      if (s.ir == nullptr) continue;
      for (const codegen::KernelBuffer& b : s.ir->buffers) {
        auto slot = program->slots.find(b.value);
        const bool bound =
            b.storage == codegen::Storage::kInput || b.storage == codegen::Storage::kOutput;
        s.buffer_slots.push_back(bound && slot != program->slots.end() ? slot->second : -1);
      }
    }
    program->readers_by_slot.assign(program->slots.size(), 0);
    for (const auto& [value, reads] : program->readers) {
      program->readers_by_slot[program->slots.at(value)] = reads;
    }
    program->split_tuples = SplitTuples(*cp.computation);
    out.by_computation[cp.computation] = std::move(program);
  }
  return out;
}

}  // namespace seam::compiler
