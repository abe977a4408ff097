// The reference interpreter: runs a Module on Literals following XLA's
// operation semantics. It is the oracle every compiled path is checked
// against, so it favours obvious correctness over speed.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "seam/ir/literal.h"
#include "seam/ir/module.h"

namespace seam {

using OperandValues = absl::Span<const Literal* const>;

class Evaluator {
 public:
  Evaluator();
  ~Evaluator();

  // Runs the entry computation. Fails when the arguments' count, element
  // types or dimensions do not match the entry parameters.
  absl::StatusOr<Literal> Run(const Module& module, absl::Span<const Literal> arguments);

  // Runs `computation` on one value per parameter (already checked).
  absl::StatusOr<Literal> Call(const Computation& computation, OperandValues arguments);

  // The most bytes of intermediate values the interpreter may hold at once;
  // past it, a run fails naming the instruction instead of being killed by
  // the operating system. Default: 3/4 of the machine's physical memory,
  // at most 9/10 of the memory available at its first check; a value of
  // 64 MiB or more must also fit in 9/10 of what is available as it is made.
  void set_memory_limit(int64_t bytes) { memory_limit_ = bytes; }

  // When set, a run fails at the first instruction it would start after
  // `deadline`, naming it: a loop that runs too long (or forever) ends
  // with an error. One instruction is never interrupted.
  void set_deadline(absl::Time deadline) { deadline_ = deadline; }

  // Reduces with a recognised reducer (add, max...) accumulate bf16 and f16
  // in f32, as Seam's compiled kernels do, and f32 in f64, closer to the
  // exact sum than any order of f32 additions (a compiled kernel adds in
  // blocks and across threads); each result rounds once at the end. By
  // default every step rounds, as XLA's CPU backend does. The oracle for
  // compiled paths sets this.
  void set_wide_accumulation(bool wide) { wide_accumulation_ = wide; }
  bool wide_accumulation() const { return wide_accumulation_; }

  // Monte Carlo arithmetic at the ulp: every float result of an op that
  // rounds (arithmetic, reductions, dots, convolutions, batch norms; not
  // data movement, selects or comparisons) moves one ulp up or down,
  // pseudo-randomly from `seed` (NudgeByOneUlp). How far the outputs then
  // move is how far any other correct rounding of the module could take
  // them: `seam run --verify` judges outputs that amplify rounding by it.
  void set_rounding_nudge(std::optional<uint64_t> seed) { rounding_nudge_ = seed; }

 private:
  struct Schedule;
  const Schedule& ScheduleFor(const Computation& computation);
  absl::Status CheckRoomFor(const Instruction& instruction) const;
  absl::flat_hash_map<const Computation*, std::unique_ptr<Schedule>> schedules_;
  // Worked out on the first check, not when an Evaluator is made: passes
  // make one per run only to fold constants, which never asks.
  mutable std::optional<int64_t> memory_limit_;
  bool wide_accumulation_ = false;
  std::optional<uint64_t> rounding_nudge_;
  std::optional<absl::Time> deadline_;
  int64_t live_bytes_ = 0;  // intermediates held by all active Calls
};

// Fails, naming the instruction and its location, when some instruction of
// `module` has no interpreter semantics (an op or a custom-call target), so a
// run stops before it starts rather than midway.
absl::Status CheckInterpretable(const Module& module);
// Every such instruction, each as that error.
std::vector<absl::Status> UninterpretableOps(const Module& module);

// Checks that `arguments` fit the parameters of `computation`; the error says
// which argument and what was expected.
absl::Status CheckArguments(const Computation& computation,
                            absl::Span<const Literal> arguments);

}  // namespace seam
