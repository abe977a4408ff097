#include "seam/ir/module.h"

#include <algorithm>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "seam/util/status_macros.h"
#include "absl/strings/string_view.h"

namespace seam {

// input_output_alias={ {1}: (0, {}, may-alias), {2}: (1, {}, must-alias) }:
// the parameter number is what follows each "(" that follows a ":".
std::vector<int64_t> Module::DonatedParameters() const {
  std::vector<int64_t> donated;
  for (const VerbatimAttribute& a : attributes_) {
    if (a.name != "input_output_alias") continue;
    absl::string_view text = a.value;
    for (size_t colon = text.find(':'); colon != absl::string_view::npos;
         colon = text.find(':', colon + 1)) {
      size_t at = text.find_first_not_of(' ', colon + 1);
      if (at == absl::string_view::npos || text[at] != '(') continue;
      at = text.find_first_not_of(' ', at + 1);
      int64_t number = 0;
      bool digits = false;
      for (; at < text.size() && text[at] >= '0' && text[at] <= '9'; ++at, digits = true) {
        number = number * 10 + (text[at] - '0');
        if (number > (int64_t{1} << 40)) break;  // no parameter is numbered so
      }
      if (digits) donated.push_back(number);
    }
  }
  std::sort(donated.begin(), donated.end());
  donated.erase(std::unique(donated.begin(), donated.end()), donated.end());
  return donated;
}

Computation* Module::AddComputation(std::unique_ptr<Computation> computation) {
  computation->parent_ = this;
  computations_.push_back(std::move(computation));
  return computations_.back().get();
}

void Module::RemoveComputation(Computation* computation) {
  SEAM_CHECK(computation != entry_);
  auto it = std::find_if(computations_.begin(), computations_.end(),
                         [&](const auto& c) { return c.get() == computation; });
  SEAM_CHECK(it != computations_.end());
  computations_.erase(it);
}

Computation* Module::FindComputation(absl::string_view name) const {
  for (const auto& computation : computations_) {
    if (computation->name() == name) return computation.get();
  }
  return nullptr;
}

absl::StatusOr<std::vector<Computation*>> Module::MakeComputationPostOrder()
    const {
  enum class Mark { kNone, kActive, kDone };
  absl::flat_hash_map<const Computation*, Mark> marks;
  std::vector<Computation*> order;
  // Iterative DFS over callees with an explicit stack of pending callees.
  struct Frame {
    Computation* computation;
    std::vector<Computation*> callees;
    size_t next = 0;
  };
  auto callees_of = [](Computation* c) {
    std::vector<Computation*> callees;
    for (const auto& instruction : c->instructions()) {
      for (Computation* callee : instruction->CalledComputations()) {
        if (callee != nullptr) callees.push_back(callee);
      }
    }
    return callees;
  };
  for (const auto& root : computations_) {
    if (marks[root.get()] != Mark::kNone) continue;
    std::vector<Frame> stack;
    marks[root.get()] = Mark::kActive;
    stack.push_back({root.get(), callees_of(root.get())});
    while (!stack.empty()) {
      Frame& frame = stack.back();
      if (frame.next < frame.callees.size()) {
        Computation* callee = frame.callees[frame.next++];
        Mark& mark = marks[callee];
        if (mark == Mark::kActive) {
          // `callee` is on the stack: the cycle runs from there to here.
          std::vector<std::string> cycle;
          for (const Frame& f : stack) {
            if (f.computation == callee || !cycle.empty()) {
              cycle.push_back(f.computation->name());
            }
          }
          cycle.push_back(callee->name());
          return absl::InvalidArgumentError(
              absl::StrCat("call cycle: ", absl::StrJoin(cycle, " -> ")));
        }
        if (mark == Mark::kNone) {
          mark = Mark::kActive;
          stack.push_back({callee, callees_of(callee)});
        }
        continue;
      }
      marks[frame.computation] = Mark::kDone;
      order.push_back(frame.computation);
      stack.pop_back();
    }
  }
  return order;
}

int64_t Module::InstructionCount() const {
  int64_t count = 0;
  for (const auto& computation : computations_) {
    count += computation->instruction_count();
  }
  return count;
}

}  // namespace seam
