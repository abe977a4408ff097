#include "seam/eval/evaluator.h"

#include <unistd.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "seam/eval/ops.h"
#include "seam/eval/random_fill.h"
#include "seam/util/error_location.h"
#include "seam/util/machine.h"
#include "seam/util/status_macros.h"

namespace seam {

// The post order of a computation and, for each step, the steps whose values
// die there, so large intermediates are freed as soon as possible.
struct Evaluator::Schedule {
  std::vector<const Instruction*> order;
  std::vector<std::vector<int>> operand_slots;  // per step: slots of operands
  std::vector<std::vector<int>> release_after;  // per step: slots to free
  int root_slot = -1;
};

namespace {

// Whether an op's float result is a rounded one, which another correct
// implementation could round otherwise: arithmetic, reductions, library
// and composite ops. Data movement, control flow (whose bodies' ops are
// nudged themselves) and the exact elementwise ops are not.
bool RoundsItsResult(Opcode op) { return ComputesOnElements(op) && !IsExact(op); }

int64_t ByteSize(const Literal& literal) {
  int64_t bytes = static_cast<int64_t>(literal.bytes().size());
  for (const Literal& element : literal.tuple_elements()) bytes += ByteSize(element);
  return bytes;
}

double ShapeBytes(const Shape& shape) {
  if (shape.IsTuple()) {
    double bytes = 0;
    for (const Shape& element : shape.tuple_shapes()) bytes += ShapeBytes(element);
    return bytes;
  }
  if (!shape.IsArray()) return 0;
  return static_cast<double>(shape.ElementCount().value_or(0)) * DTypeByteSize(shape.dtype());
}

// 3/4 of the machine's memory, and no more than 9/10 of what it has
// available as the interpreter starts running: other processes' memory is not the
// interpreter's to take (an f64 MobileNet beside another run was killed
// by the OOM killer at 17 GB of 23).
int64_t DefaultMemoryLimit() {
  double limit = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE) * 0.75;
  if (limit <= 0) limit = static_cast<double>(int64_t{1} << 40);
  if (const int64_t available = AvailableMemoryBytes(); available > 0) {
    limit = std::min(limit, 0.9 * static_cast<double>(available));
  }
  return static_cast<int64_t>(limit);
}

// Takes a value out of a slot whose last use is the current step instead of
// copying it: tuple and get-tuple-element would otherwise duplicate whole
// loop states.
bool CanMoveFrom(const std::vector<std::optional<Literal>>& owned, int slot,
                 const std::vector<int>& release_after) {
  return owned[slot].has_value() &&
         std::find(release_after.begin(), release_after.end(), slot) != release_after.end();
}

}  // namespace

Evaluator::Evaluator() = default;
Evaluator::~Evaluator() = default;

const Evaluator::Schedule& Evaluator::ScheduleFor(const Computation& computation) {
  std::unique_ptr<Schedule>& cached = schedules_[&computation];
  if (cached != nullptr) return *cached;
  cached = std::make_unique<Schedule>();
  Schedule& s = *cached;
  std::vector<Instruction*> order = computation.MakePostOrder();
  absl::flat_hash_map<const Instruction*, int> slot;
  for (size_t i = 0; i < order.size(); ++i) slot[order[i]] = static_cast<int>(i);
  std::vector<int> last_use(order.size(), -1);
  s.operand_slots.resize(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    s.order.push_back(order[i]);
    for (const Instruction* operand : order[i]->operands()) {
      int o = slot.at(operand);
      s.operand_slots[i].push_back(o);
      last_use[o] = static_cast<int>(i);
    }
  }
  s.root_slot = slot.at(computation.root());
  s.release_after.resize(order.size());
  for (size_t v = 0; v < order.size(); ++v) {
    if (static_cast<int>(v) != s.root_slot && last_use[v] >= 0) {
      s.release_after[last_use[v]].push_back(static_cast<int>(v));
    }
  }
  return s;
}

absl::StatusOr<Literal> Evaluator::Call(const Computation& computation,
                                        OperandValues arguments) {
  const Schedule& s = ScheduleFor(computation);
  std::vector<std::optional<Literal>> owned(s.order.size());
  std::vector<int64_t> owned_bytes(s.order.size(), 0);
  std::vector<const Literal*> value(s.order.size(), nullptr);
  std::vector<const Literal*> operands;
  // Whatever happens, the bytes this call holds stop counting when it ends.
  struct Release {
    Evaluator& evaluator;
    const std::vector<int64_t>& bytes;
    ~Release() {
      for (int64_t b : bytes) evaluator.live_bytes_ -= b;
    }
  } release{*this, owned_bytes};
  for (size_t i = 0; i < s.order.size(); ++i) {
    const Instruction& instruction = *s.order[i];
    if (instruction.opcode() == Opcode::kParameter) {
      int64_t n = instruction.parameter_number();
      if (n < 0 || n >= static_cast<int64_t>(arguments.size())) {
        return ErrorAt(instruction.location(),
                       absl::StrCat("'", instruction.name(), "': no argument for parameter ", n));
      }
      value[i] = arguments[n];
    } else if (instruction.opcode() == Opcode::kGetTupleElement &&
               CanMoveFrom(owned, s.operand_slots[i][0], s.release_after[i])) {
      int tuple_slot = s.operand_slots[i][0];
      owned[i] = std::move(owned[tuple_slot]->mutable_tuple_elements()[*instruction.attrs().index]);
      value[i] = &*owned[i];
      owned_bytes[i] = ByteSize(*owned[i]);  // moved, so the total is unchanged
      owned_bytes[tuple_slot] -= owned_bytes[i];
    } else {
      if (deadline_.has_value() && absl::Now() > *deadline_) {
        return ErrorAt(
            instruction.location(),
            absl::StrCat("'", instruction.name(), "': the interpreter ran past its time limit"));
      }
      SEAM_RETURN_IF_ERROR(CheckRoomFor(instruction));
      operands.clear();
      for (int o : s.operand_slots[i]) operands.push_back(value[o]);
      absl::StatusOr<Literal> result = EvalInstruction(instruction, operands, *this);
      if (!result.ok()) {
        // Errors from nested computations already name their instruction.
        if (ErrorLocation(result.status()).has_value()) return result.status();
        return ErrorAt(instruction.location(), absl::StrCat("'", instruction.name(), "' (",
                                                            OpcodeName(instruction.opcode()),
                                                            "): ", result.status().message()));
      }
      // A value of another form than declared (a gap in the verifier) ends
      // the run here, before any later instruction misreads it.
      if (!result->shape().CompatibleIgnoringDynamism(instruction.shape())) {
        return ErrorAt(
            instruction.location(),
            absl::StrCat("'", instruction.name(), "' (", OpcodeName(instruction.opcode()),
                         "): the interpreter made ", result->shape().ToString(false), " where ",
                         instruction.shape().ToString(false), " is declared"));
      }
      owned[i] = std::move(*result);
      if (rounding_nudge_.has_value() && RoundsItsResult(instruction.opcode())) {
        NudgeByOneUlp(*owned[i], *rounding_nudge_ + i * 0x9e3779b97f4a7c15ull);
      }
      value[i] = &*owned[i];
      owned_bytes[i] = ByteSize(*owned[i]);
      live_bytes_ += owned_bytes[i];
    }
    for (int dead : s.release_after[i]) {
      owned[dead].reset();
      live_bytes_ -= owned_bytes[dead];
      owned_bytes[dead] = 0;
    }
  }
  if (owned[s.root_slot].has_value()) {
    live_bytes_ -= owned_bytes[s.root_slot];  // handed to the caller
    owned_bytes[s.root_slot] = 0;
    return std::move(*owned[s.root_slot]);
  }
  return *value[s.root_slot];  // the root is a parameter: copy it
}

// Fails before evaluating `instruction` when its result, plus the scratch
// buffers of the ops that pack operands in a wide type (dot, convolution:
// up to twice their operands), would take the interpreter past its limit.
absl::Status Evaluator::CheckRoomFor(const Instruction& instruction) const {
  double needed = ShapeBytes(instruction.shape());
  if (instruction.opcode() == Opcode::kDot || instruction.opcode() == Opcode::kConvolution) {
    needed *= 2;  // the wide accumulator
    for (const Instruction* operand : instruction.operands()) {
      needed += 2 * ShapeBytes(operand->shape());
    }
  }
  // Large values also ask the machine what is still available: other
  // processes may have taken memory since the interpreter started.
  constexpr double kAskAbove = 64.0 * (1 << 20);
  if (const int64_t available = needed >= kAskAbove ? AvailableMemoryBytes() : 0;
      available > 0 && needed > 0.9 * static_cast<double>(available)) {
    return ErrorAt(instruction.location(),
                   absl::StrFormat("'%s': the interpreter would need %.1f GiB for this value on "
                                   "top of %.1f GiB it holds; the machine has %.1f GiB available",
                                   instruction.name(), needed / double(1 << 30),
                                   live_bytes_ / double(1 << 30), available / double(1 << 30)));
  }
  if (!memory_limit_.has_value()) memory_limit_ = DefaultMemoryLimit();
  if (live_bytes_ + needed <= *memory_limit_) return absl::OkStatus();
  return ErrorAt(instruction.location(),
                 absl::StrFormat("'%s': the interpreter would need %.1f GiB for this value on top "
                                 "of %.1f GiB it holds, over its limit of %.1f GiB (3/4 of this "
                                 "machine's memory, at most 9/10 of what was available)",
                                 instruction.name(), needed / double(1 << 30),
                                 live_bytes_ / double(1 << 30), *memory_limit_ / double(1 << 30)));
}

std::vector<absl::Status> UninterpretableOps(const Module& module) {
  std::vector<absl::Status> found;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      Opcode op = instruction->opcode();
      if (op == Opcode::kCustomCall) {
        std::string target = instruction->attrs().custom_call_target.value_or("");
        if (!HasCustomCallHandler(target)) {
          found.push_back(ErrorAt(instruction->location(),
                                  absl::StrCat("'", instruction->name(), "': custom-call target \"",
                                               target, "\" has no interpreter handler")));
        }
      } else if (!IsInterpretable(op)) {
        found.push_back(
            ErrorAt(instruction->location(),
                    absl::StrCat("'", instruction->name(), "': the interpreter does not support '",
                                 OpcodeName(op), "': ", NotInterpretedBecause(op))));
      }
    }
  }
  return found;
}

absl::Status CheckInterpretable(const Module& module) {
  std::vector<absl::Status> found = UninterpretableOps(module);
  return found.empty() ? absl::OkStatus() : found.front();
}

absl::Status CheckArguments(const Computation& computation,
                            absl::Span<const Literal> arguments) {
  if (arguments.size() != computation.parameters().size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", computation.name(), "' takes ", computation.parameters().size(),
                     " argument(s), got ", arguments.size()));
  }
  for (size_t i = 0; i < arguments.size(); ++i) {
    const Shape& expected = computation.parameter(static_cast<int>(i))->shape();
    const Shape& got = arguments[i].shape();
    if (!expected.Compatible(got)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "argument ", i, " ('", computation.parameter(static_cast<int>(i))->name(),
          "') must be ", expected.ToString(false), ", got ", got.ToString(false)));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Literal> Evaluator::Run(const Module& module,
                                       absl::Span<const Literal> arguments) {
  SEAM_RETURN_IF_ERROR(CheckArguments(*module.entry(), arguments));
  std::vector<const Literal*> pointers;
  int64_t argument_bytes = 0;
  for (const Literal& argument : arguments) {
    pointers.push_back(&argument);
    argument_bytes += ByteSize(argument);
  }
  // The arguments take memory too.
  live_bytes_ += argument_bytes;
  absl::StatusOr<Literal> result = Call(*module.entry(), pointers);
  live_bytes_ -= argument_bytes;
  return result;
}

}  // namespace seam
