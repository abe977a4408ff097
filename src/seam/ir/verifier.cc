// Module verification: first the structural invariants every later stage
// relies on (so shape inference may walk operands and callees safely), then
// each instruction's declared shape against shape inference.
#include "seam/ir/verifier.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "seam/ir/shape_inference.h"
#include "seam/util/error_location.h"
#include "seam/util/status_macros.h"

namespace seam {
namespace {

template <typename... Args>
absl::Status InstructionError(const Instruction& i, const Args&... args) {
  return ErrorAt(i.location(), absl::StrCat("'", i.name(), "': ", args...));
}

template <typename... Args>
absl::Status ComputationError(const Computation& c, const Args&... args) {
  return ErrorAt(c.location(), absl::StrCat("computation '", c.name(), "' ", args...));
}

absl::Status CheckCallees(const Module& module, const Instruction& i) {
  for (const Computation* callee : i.CalledComputations()) {
    if (callee == nullptr) return InstructionError(i, "calls a computation that does not exist");
    if (callee->parent() != &module) {
      return InstructionError(i, "calls computation '", callee->name(), "' of another module");
    }
  }
  return absl::OkStatus();
}

// Calls nest at most this deep: the interpreter and the passes that follow
// calls recurse once per level, and real modules nest a few dozen.
constexpr size_t kMaxCallDepth = 256;

// Records the longest call chain from `c` (its callees' are known), or
// reports the call that takes it past kMaxCallDepth.
absl::Status NoteCallDepth(const Computation& c,
                           absl::flat_hash_map<const Computation*, size_t>& depth) {
  size_t deepest = 1;
  for (const auto& i : c.instructions()) {
    for (const Computation* callee : i->CalledComputations()) {
      const size_t through = depth.at(callee) + 1;
      if (through > kMaxCallDepth) {
        return InstructionError(*i, "calls nest more than ", kMaxCallDepth,
                                " deep from here; Seam follows at most that");
      }
      deepest = std::max(deepest, through);
    }
  }
  depth[&c] = deepest;
  return absl::OkStatus();
}

// A depth-first walk of the call graph that reports the call closing a
// cycle, so the error points at an instruction and names the whole cycle
// (MakeComputationPostOrder finds cycles too, but knows no locations), and
// the call past kMaxCallDepth.
absl::Status CheckCallGraph(const Module& module) {
  enum Mark { kNew, kActive, kDone };
  absl::flat_hash_map<const Computation*, Mark> marks;
  // The longest chain of calls from each finished computation, itself
  // included.
  absl::flat_hash_map<const Computation*, size_t> depth;
  struct Frame {
    const Computation* computation;
    size_t instruction = 0;
    size_t callee = 0;
  };
  for (const auto& start : module.computations()) {
    if (marks[start.get()] != kNew) continue;
    marks[start.get()] = kActive;
    std::vector<Frame> stack = {{start.get()}};
    while (!stack.empty()) {
      Frame& frame = stack.back();
      const auto& instructions = frame.computation->instructions();
      if (frame.instruction == instructions.size()) {
        marks[frame.computation] = kDone;
        SEAM_RETURN_IF_ERROR(NoteCallDepth(*frame.computation, depth));
        stack.pop_back();
        continue;
      }
      const Instruction& i = *instructions[frame.instruction];
      std::vector<Computation*> callees = i.CalledComputations();
      if (frame.callee == callees.size()) {
        ++frame.instruction;
        frame.callee = 0;
        continue;
      }
      const Computation* callee = callees[frame.callee++];
      Mark& mark = marks[callee];
      if (mark == kActive) {
        // `callee` is on the stack: the cycle runs from there to this call.
        std::vector<std::string> cycle;
        for (const Frame& f : stack) {
          if (f.computation == callee || !cycle.empty()) cycle.push_back(f.computation->name());
        }
        cycle.push_back(callee->name());
        return InstructionError(i, "call cycle: ", absl::StrJoin(cycle, " -> "));
      }
      if (mark == kNew) {
        mark = kActive;
        stack.push_back({callee});  // invalidates `frame`
      }
    }
  }
  return absl::OkStatus();
}

// Parameter numbers are 0..n-1, each used once.
absl::Status CheckParameterNumbers(const Computation& c) {
  absl::flat_hash_map<int64_t, const Instruction*> seen;
  for (const auto& i : c.instructions()) {
    if (i->opcode() != Opcode::kParameter) continue;
    int64_t n = i->parameter_number();
    if (n < 0) return InstructionError(*i, "parameter number must be non-negative, got ", n);
    auto [it, inserted] = seen.emplace(n, i.get());
    if (!inserted) {
      return InstructionError(*i, "parameter number ", n, " is already used by '",
                              it->second->name(), "'");
    }
  }
  // A gap: reported at the first parameter numbered past it.
  int missing = 0;
  while (missing < c.parameter_count() && c.parameter(missing) != nullptr) ++missing;
  for (int k = missing + 1; k < c.parameter_count(); ++k) {
    if (const Instruction* p = c.parameter(k); p != nullptr) {
      return InstructionError(*p, "parameter number ", k, " leaves a gap: computation '",
                              c.name(), "' has no parameter(", missing,
                              "); parameters must be numbered 0..n-1");
    }
  }
  if (missing < c.parameter_count()) {  // only nulls past the gap: a stale table
    return ComputationError(c, "has no parameter(", missing, "); parameters must be numbered 0..n-1");
  }
  return absl::OkStatus();
}

absl::Status CheckSameComputation(const Computation& c, const Instruction& i,
                                  const Instruction* other, absl::string_view role) {
  if (other == nullptr) return InstructionError(i, "has a missing ", role);
  if (other->parent() == &c) return absl::OkStatus();
  return InstructionError(i, role, " '", other->name(), "' belongs to ",
                          other->parent() == nullptr
                              ? std::string("no computation")
                              : absl::StrCat("computation '", other->parent()->name(), "'"),
                          ", not '", c.name(), "'");
}

// Operands come before users: in a post order, a use of a later instruction
// can only come from a cycle.
absl::Status CheckInstructionsAcyclic(const Computation& c) {
  std::vector<Instruction*> order = c.MakePostOrder();
  absl::flat_hash_map<const Instruction*, size_t> position;
  for (size_t k = 0; k < order.size(); ++k) position[order[k]] = k;
  for (size_t k = 0; k < order.size(); ++k) {
    std::vector<Instruction*> deps = order[k]->operands();
    const auto& control = order[k]->control_predecessors();
    deps.insert(deps.end(), control.begin(), control.end());
    for (const Instruction* dep : deps) {
      if (position.at(dep) >= k) {
        return InstructionError(*order[k], "depends on '", dep->name(),
                                "', which depends on it: the instructions form a cycle");
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckStructure(const Module& module, const Computation& c) {
  if (c.root() == nullptr) return ComputationError(c, "has no root instruction");
  if (c.root()->parent() != &c) {
    return ComputationError(c, "has root '", c.root()->name(), "' from another computation");
  }
  SEAM_RETURN_IF_ERROR(CheckParameterNumbers(c));
  for (const auto& i : c.instructions()) {
    for (int k = 0; k < i->operand_count(); ++k) {
      SEAM_RETURN_IF_ERROR(CheckSameComputation(c, *i, i->operand(k), absl::StrCat("operand ", k)));
    }
    for (const Instruction* predecessor : i->control_predecessors()) {
      SEAM_RETURN_IF_ERROR(CheckSameComputation(c, *i, predecessor, "control predecessor"));
    }
    SEAM_RETURN_IF_ERROR(CheckCallees(module, *i));
  }
  return CheckInstructionsAcyclic(c);
}

absl::Status CheckShape(const Instruction& i) {
  absl::StatusOr<std::optional<Shape>> inferred = InferShape(i);
  if (!inferred.ok()) return InstructionError(i, inferred.status().message());
  if (!inferred->has_value() || ShapesMatch(i.shape(), **inferred)) return absl::OkStatus();
  return InstructionError(i, "expected shape ", (*inferred)->ToString(false), " from '",
                          OpcodeName(i.opcode()), "' of its operands, got ",
                          i.shape().ToString(false));
}

}  // namespace

absl::Status VerifyModule(const Module& module) {
  if (module.entry() == nullptr) {
    return ErrorAt({}, absl::StrCat("module '", module.name(), "' has no entry computation"));
  }
  if (module.entry()->parent() != &module) {
    return ErrorAt({}, absl::StrCat("the entry computation of module '", module.name(),
                                    "' belongs to another module"));
  }
  // Structure first everywhere: inferring a call's shape reads its callee.
  for (const auto& c : module.computations()) SEAM_RETURN_IF_ERROR(CheckStructure(module, *c));
  SEAM_RETURN_IF_ERROR(CheckCallGraph(module));
  for (const auto& c : module.computations()) {
    for (const auto& i : c->instructions()) SEAM_RETURN_IF_ERROR(CheckShape(*i));
  }
  return absl::OkStatus();
}

}  // namespace seam
