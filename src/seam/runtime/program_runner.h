// The one runner of programs, for every backend: it walks a program's
// steps, binds parameters, runs control flow (while, conditional, call),
// hands values to the steps that read them, takes a value over where its
// last reader may consume it, releases the dead, and counts what ran. A
// backend is a value store: where values live (host memory, a device's),
// how a generated kernel launches on them, and what it serves natively
// (a library call); anything else runs on the host, in the host's BLAS or
// the interpreter, its operands brought over and its result sent back.
#pragma once

#include <algorithm>
#include <chrono>
#include <concepts>
#include <deque>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "seam/codegen/op_kernels.h"
#include "seam/eval/evaluator.h"
#include "seam/eval/ops.h"
#include "seam/runtime/buffer_pool.h"
#include "seam/runtime/host_blas.h"
#include "seam/runtime/program.h"
#include "seam/runtime/run_stats.h"
#include "seam/util/status_macros.h"

namespace seam::runtime {

using ProgramMap = absl::flat_hash_map<const Computation*, std::unique_ptr<Program>>;

// Host copies of values a step reads on the host (a deque: they stay put
// as it grows).
using HostCopies = std::deque<Literal>;

// A run's values, one slot per value of its program (Program::slots; a
// step knows its values' slots): no allocation per value, no hashing per
// lookup.
template <typename Value>
class SlotValues {
 public:
  explicit SlotValues(const Program& program)
      : slots_(program.slots), held_(program.slots.size()), present_(program.slots.size(), 0) {}

  // The value in `slot`, or null when it is not (or no longer) held.
  Value* Find(int slot) { return slot >= 0 && present_[slot] ? &held_[slot] : nullptr; }
  void Set(int slot, Value value) {
    held_[slot] = std::move(value);
    present_[slot] = 1;
  }
  void Erase(int slot) {
    held_[slot] = Value{};
    present_[slot] = 0;
  }
  // By value, for the step that names values its slots do not list (a
  // kernel's members, run one by one).
  Value* Find(const Instruction* v) {
    auto it = slots_.find(v);
    return it != slots_.end() ? Find(it->second) : nullptr;
  }
  void Set(const Instruction* v, Value value) { Set(slots_.at(v), std::move(value)); }
  int SlotOf(const Instruction* v) const {
    auto it = slots_.find(v);
    return it != slots_.end() ? it->second : -1;
  }
  template <typename Fn>
  void ForEach(Fn&& fn) {
    for (size_t k = 0; k < held_.size(); ++k) {
      if (present_[k]) fn(held_[k]);
    }
  }

 private:
  const absl::flat_hash_map<const Instruction*, int>& slots_;
  std::vector<Value> held_;
  std::vector<char> present_;
};

// What a backend provides: where its values live and what it runs itself.
template <typename Store>
concept ValueStore = requires(Store& store, typename Store::Value& value, const Step& step,
                              SlotValues<typename Store::Value>& values, const Instruction& i,
                              absl::Span<typename Store::Value* const> reads, Literal literal,
                              std::vector<typename Store::Value> elements, HostCopies& copies,
                              std::optional<typename Store::Value> in_place) {
  // Whether `value` is this run's alone: moving from it or writing into it
  // disturbs nobody (not an argument, a constant, or a view).
  { store.Sole(value) } -> std::same_as<bool>;
  // A value of its own with `value`'s contents: `value` itself when
  // `consume`, else a copy (or, where values are never written after
  // their step, a share).
  { store.Take(value, true) } -> std::same_as<absl::StatusOr<typename Store::Value>>;
  // A view of `value`, for a called computation to read.
  { store.View(value) } -> std::same_as<typename Store::Value>;
  // `value` again, for an instruction that forwards it: held as long as
  // either is, updated in place by neither meanwhile.
  { store.Share(value) } -> std::same_as<typename Store::Value>;
  // The memory of a dead value, for later values.
  store.Release(value);
  { store.Constant(i) } -> std::same_as<absl::StatusOr<typename Store::Value>>;
  // Element `index` of a tuple, moved out when `move_out`.
  { store.Element(value, int64_t{0}, true) } -> std::same_as<typename Store::Value>;
  { store.Tuple(i.shape(), std::move(elements)) } -> std::same_as<typename Store::Value>;
  // `value`'s bytes (its own) with another shape of as many.
  { store.Reshape(std::move(value), i.shape()) } -> std::same_as<typename Store::Value>;
  // The value on the host, copied into `copies` when it lives elsewhere.
  { store.OnHost(value, copies) } -> std::same_as<absl::StatusOr<const Literal*>>;
  { store.FromHost(std::move(literal)) } -> std::same_as<absl::StatusOr<typename Store::Value>>;
  // A library call the backend serves itself (with its epilogue, if it
  // has one), reading the step's reads; nullopt: it runs on the host.
  {
    store.RunNative(step, reads)
    } -> std::same_as<absl::StatusOr<std::optional<typename Store::Value>>>;
  // A generated kernel on its buffers, found and set by slot.
  { store.Launch(step, values) } -> std::same_as<absl::Status>;
  // A generated single-instruction kernel on its operands; `in_place`, when
  // set, is its in-place operand's memory to write the result into.
  {
    store.LaunchOpKernel(step, reads, std::move(in_place))
    } -> std::same_as<absl::StatusOr<typename Store::Value>>;
  { store.host_pool() } -> std::same_as<BufferPool&>;
  { store.evaluator() } -> std::same_as<Evaluator&>;
};

template <ValueStore Store>
class ProgramRunner {
 public:
  using Value = typename Store::Value;
  using Values = SlotValues<Value>;

  // `programs` holds every computation's; `stats` counts what ran (and its
  // time, per kind of step, when `time_steps`).
  ProgramRunner(Store& store, const ProgramMap& programs, ExecutableStats& stats, bool time_steps)
      : store_(store), programs_(programs), stats_(stats), time_steps_(time_steps) {}

  // Runs `program` on one argument per parameter; the result is the run's own.
  absl::StatusOr<Value> Run(const Program& program, std::vector<Value> arguments) {
    Frame frame(program);
    for (const Step& step : program.steps) {
      const auto start =
          time_steps_ ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
      SEAM_RETURN_IF_ERROR(RunStep(frame, step, arguments));
      if (time_steps_) {
        stats_.CountTime(
            step, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      }
      ReleaseDead(frame, step);
    }
    const int root_slot = frame.values.SlotOf(program.computation->root());
    Value* root = frame.values.Find(root_slot);
    if (root == nullptr) return absl::InternalError("the root was not computed");
    // What is not the run's alone (an argument, a view, a value shared
    // elsewhere) is copied, never moved from.
    SEAM_ASSIGN_OR_RETURN(Value result, store_.Take(*root, store_.Sole(*root)));
    frame.values.Erase(root_slot);
    frame.values.ForEach([&](Value& v) { store_.Release(v); });  // values nothing read
    return result;
  }

 private:
  struct Frame {
    explicit Frame(const Program& p) : program(p), values(p), remaining(p.readers_by_slot) {}
    const Program& program;
    Values values;
    std::vector<int> remaining;  // reads still to come, by slot
  };

  const Program& ProgramOf(const Computation* c) const { return *programs_.at(c); }

  // The step's read number `k`.
  absl::StatusOr<Value*> Read(Frame& frame, const Step& step, size_t k) {
    Value* value = frame.values.Find(step.read_slots[k]);
    if (value == nullptr) {
      return absl::InternalError(
          absl::StrCat("value of ", step.reads[k]->name(), " is not computed yet"));
    }
    return value;
  }

  absl::StatusOr<std::vector<Value*>> Reads(Frame& frame, const Step& step, size_t count) {
    std::vector<Value*> reads;
    reads.reserve(count);
    for (size_t k = 0; k < count; ++k) {
      SEAM_ASSIGN_OR_RETURN(Value * value, Read(frame, step, k));
      reads.push_back(value);
    }
    return reads;
  }

  // Whether `step`, reading its read `k` once, is the last to need it, and
  // so may consume it.
  bool MayConsume(const Frame& frame, const Step& step, size_t k, Value& value) {
    const Instruction* v = step.reads[k];
    return store_.Sole(value) && frame.remaining[step.read_slots[k]] == 1 &&
           v != frame.program.computation->root() &&
           std::count(step.reads.begin(), step.reads.end(), v) == 1;
  }

  // Read `k` as a value of its own: consumed when this step may, else copied.
  absl::StatusOr<Value> TakeRead(Frame& frame, const Step& step, size_t k) {
    SEAM_ASSIGN_OR_RETURN(Value * value, Read(frame, step, k));
    return store_.Take(*value, MayConsume(frame, step, k, *value));
  }

  absl::Status RunStep(Frame& frame, const Step& step, std::vector<Value>& arguments) {
    switch (step.kind) {
      case Step::Kind::kInstruction:
        return RunInstruction(frame, step, arguments);
      case Step::Kind::kKernel:
        return store_.Launch(step, frame.values);
      case Step::Kind::kOpKernel:
        return RunOpKernel(frame, step);
      case Step::Kind::kAlias:
        if (std::vector<size_t> sources = ReshapedReads(step); !sources.empty()) {
          // Reshapes of row-major arrays have their inputs' bytes: each
          // taken over when this is the input's last reader, else copied.
          for (size_t j = 0; j < sources.size(); ++j) {
            SEAM_ASSIGN_OR_RETURN(Value bytes, TakeRead(frame, step, sources[j]));
            frame.values.Set(step.write_slots[j],
                             store_.Reshape(std::move(bytes), step.writes[j]->shape()));
          }
          return absl::OkStatus();
        }
        // Not plain reshapes: the interpreter's is a copy with the new shape.
        return InterpretMembers(frame, step);
      case Step::Kind::kInterpretKernel:
        return InterpretMembers(frame, step);
    }
    return absl::InternalError("unknown step");
  }

  absl::Status RunInstruction(Frame& frame, const Step& step, std::vector<Value>& arguments) {
    const Instruction& i = *step.instruction;
    const int out = step.write_slots[0];
    switch (i.opcode()) {
      case Opcode::kParameter:
        frame.values.Set(out, std::move(arguments[i.parameter_number()]));
        return absl::OkStatus();
      case Opcode::kConstant: {
        SEAM_ASSIGN_OR_RETURN(Value constant, store_.Constant(i));
        frame.values.Set(out, std::move(constant));
        return absl::OkStatus();
      }
      case Opcode::kAfterAll: {  // a token orders, it holds nothing
        SEAM_ASSIGN_OR_RETURN(Value token, store_.FromHost(Literal(Shape::Token())));
        frame.values.Set(out, std::move(token));
        return absl::OkStatus();
      }
      case Opcode::kGetTupleElement: {
        SEAM_ASSIGN_OR_RETURN(Value * tuple, Read(frame, step, 0));
        const bool move_out =
            frame.program.split_tuples.contains(i.operand(0)) && store_.Sole(*tuple);
        frame.values.Set(out, store_.Element(*tuple, *i.attrs().index, move_out));
        return absl::OkStatus();
      }
      case Opcode::kTuple: {
        std::vector<Value> elements;
        elements.reserve(i.operand_count());
        for (int k = 0; k < i.operand_count(); ++k) {
          SEAM_ASSIGN_OR_RETURN(Value element, TakeRead(frame, step, k));
          elements.push_back(std::move(element));
        }
        frame.values.Set(out, store_.Tuple(i.shape(), std::move(elements)));
        return absl::OkStatus();
      }
      case Opcode::kWhile: {
        SEAM_ASSIGN_OR_RETURN(Value state, TakeRead(frame, step, 0));
        SEAM_ASSIGN_OR_RETURN(Value result, RunWhile(i, std::move(state)));
        frame.values.Set(out, std::move(result));
        return absl::OkStatus();
      }
      case Opcode::kConditional: {
        SEAM_ASSIGN_OR_RETURN(std::vector<Value*> reads, Reads(frame, step, i.operand_count()));
        HostCopies copies;
        SEAM_ASSIGN_OR_RETURN(const Literal* selector, store_.OnHost(*reads[0], copies));
        std::vector<Computation*> branches = i.CalledComputations();
        const int64_t index = BranchIndex(*selector, static_cast<int64_t>(branches.size()));
        SEAM_ASSIGN_OR_RETURN(Value result,
                              Run(ProgramOf(branches[index]), Views({reads[1 + index]})));
        frame.values.Set(out, std::move(result));
        return absl::OkStatus();
      }
      case Opcode::kCall: {
        SEAM_ASSIGN_OR_RETURN(std::vector<Value*> reads, Reads(frame, step, i.operand_count()));
        SEAM_ASSIGN_OR_RETURN(Value result, Run(ProgramOf(*i.attrs().to_apply), Views(reads)));
        frame.values.Set(out, std::move(result));
        return absl::OkStatus();
      }
      default:
        break;
    }
    if (const int k = ForwardedOperand(i); k >= 0) {
      SEAM_ASSIGN_OR_RETURN(Value * value, Read(frame, step, static_cast<size_t>(k)));
      frame.values.Set(out, store_.Share(*value));
      return absl::OkStatus();
    }
    SEAM_ASSIGN_OR_RETURN(std::vector<Value*> reads, Reads(frame, step, step.reads.size()));
    SEAM_ASSIGN_OR_RETURN(std::optional<Value> native, store_.RunNative(step, reads));
    if (native.has_value()) {
      frame.values.Set(out, *std::move(native));
      return absl::OkStatus();
    }
    SEAM_ASSIGN_OR_RETURN(Value value,
                          RunOnHost(i, absl::MakeSpan(reads).subspan(0, i.operand_count())));
    frame.values.Set(out, std::move(value));
    return absl::OkStatus();
  }

  std::vector<Value> Views(const std::vector<Value*>& values) {
    std::vector<Value> views;
    views.reserve(values.size());
    for (Value* v : values) views.push_back(store_.View(*v));
    return views;
  }

  // The loop state is the loop's own: each body run consumes it (its
  // elements may be updated in place) and returns the next.
  absl::StatusOr<Value> RunWhile(const Instruction& i, Value state) {
    const Program& condition = ProgramOf(*i.attrs().condition);
    const Program& body = ProgramOf(*i.attrs().body);
    while (true) {
      std::vector<Value> view;
      view.push_back(store_.View(state));
      SEAM_ASSIGN_OR_RETURN(Value go, Run(condition, std::move(view)));
      HostCopies copies;
      SEAM_ASSIGN_OR_RETURN(const Literal* on_host, store_.OnHost(go, copies));
      const bool again = on_host->GetBits(0) != 0;
      // Back to the store: a loop's memory must not grow with its trip count.
      store_.Release(go);
      if (!again) return state;
      std::vector<Value> own;
      own.push_back(std::move(state));
      SEAM_ASSIGN_OR_RETURN(state, Run(body, std::move(own)));
    }
  }

  // An instruction no backend path serves: dots and convolutions on the
  // host's BLAS (far faster than the interpreter), the rest interpreted.
  absl::StatusOr<Value> RunOnHost(const Instruction& i, absl::Span<Value* const> operands) {
    HostCopies copies;
    std::vector<const Literal*> on_host;
    for (Value* o : operands) {
      SEAM_ASSIGN_OR_RETURN(const Literal* h, store_.OnHost(*o, copies));
      on_host.push_back(h);
    }
    SEAM_ASSIGN_OR_RETURN(Literal result,
                          HostBlasServes(i)
                              ? RunHostBlas(store_.host_pool(), i, *on_host[0], *on_host[1])
                              : EvalInstruction(i, on_host, store_.evaluator()));
    return store_.FromHost(std::move(result));
  }

  absl::Status RunOpKernel(Frame& frame, const Step& step) {
    const Instruction& i = *step.instruction;
    SEAM_ASSIGN_OR_RETURN(std::vector<Value*> reads, Reads(frame, step, i.operand_count()));
    // The result takes over its in-place operand's memory when this is
    // that operand's last reader (the kernel then skips the copy).
    std::optional<Value> in_place;
    if (const int k = codegen::InPlaceOperand(i); k >= 0 && MayConsume(frame, step, k, *reads[k])) {
      SEAM_ASSIGN_OR_RETURN(in_place, store_.Take(*reads[k], true));
      ++stats_.in_place_updates;
    }
    SEAM_ASSIGN_OR_RETURN(Value result, store_.LaunchOpKernel(step, reads, std::move(in_place)));
    frame.values.Set(step.write_slots[0], std::move(result));
    return absl::OkStatus();
  }

  // A kernel member by member in the interpreter, on the host, each value
  // from outside brought over once however many members read it.
  absl::Status InterpretMembers(Frame& frame, const Step& step) {
    HostCopies copies;
    absl::node_hash_map<const Instruction*, Literal> computed;  // members' results
    absl::flat_hash_map<const Instruction*, const Literal*> on_host;
    for (const Instruction* m : step.members) {
      std::vector<const Literal*> operands;
      for (const Instruction* o : m->operands()) {
        auto it = on_host.find(o);
        if (it == on_host.end()) {
          Value* value = frame.values.Find(o);
          if (value == nullptr) {
            return absl::InternalError(
                absl::StrCat("value of ", o->name(), " is not computed yet"));
          }
          SEAM_ASSIGN_OR_RETURN(const Literal* h, store_.OnHost(*value, copies));
          it = on_host.emplace(o, h).first;
        }
        operands.push_back(it->second);
      }
      SEAM_ASSIGN_OR_RETURN(Literal value, EvalInstruction(*m, operands, store_.evaluator()));
      on_host[m] = &computed.insert_or_assign(m, std::move(value)).first->second;
    }
    for (size_t j = 0; j < step.writes.size(); ++j) {
      SEAM_ASSIGN_OR_RETURN(Value value, store_.FromHost(std::move(computed.at(step.writes[j]))));
      frame.values.Set(step.write_slots[j], std::move(value));
    }
    return absl::OkStatus();
  }

  // Values whose last reader this step was hand their memory back.
  void ReleaseDead(Frame& frame, const Step& step) {
    for (size_t k = 0; k < step.reads.size(); ++k) {
      const int slot = step.read_slots[k];
      if (--frame.remaining[slot] != 0 || step.reads[k] == frame.program.computation->root())
        continue;
      Value* dead = frame.values.Find(slot);
      if (dead == nullptr) continue;
      store_.Release(*dead);
      frame.values.Erase(slot);
    }
  }

  Store& store_;
  const ProgramMap& programs_;
  ExecutableStats& stats_;
  bool time_steps_;
};

}  // namespace seam::runtime
