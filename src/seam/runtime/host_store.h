// Where the CPU backend's values live during a run: host memory from a
// pool that learns a run's sizes, constants computed once and read in
// place, and generated kernels called on the values' bytes. Owned values
// may be recycled, moved or updated in place once their last reader runs;
// the rest (the caller's arguments, constants, views into a tuple) are
// only read.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "seam/codegen/cpu_kernel_abi.h"
#include "seam/eval/evaluator.h"
#include "seam/ir/literal.h"
#include "seam/runtime/buffer_pool.h"
#include "seam/runtime/program_runner.h"

namespace seam::runtime {

// One compiled kernel's measured time over all runs so far: the planned
// kernel (Step::planned of Program::planned's computation) and its sums.
struct KernelProfile {
  int computation = -1;
  int kernel = -1;
  double seconds = 0;  // summed over launches
  int64_t launches = 0;
};

// A value during a run: shared so that views (tuple elements) keep their
// tuple alive.
struct HostValue {
  std::shared_ptr<Literal> literal;
  bool owned = false;

  static HostValue Owned(Literal value) {
    return {std::make_shared<Literal>(std::move(value)), true};
  }
  // A view of a value someone else keeps alive (an aliasing pointer with
  // no owner).
  static HostValue Borrowed(const Literal& value) {
    return {std::shared_ptr<Literal>(std::shared_ptr<Literal>(), const_cast<Literal*>(&value)),
            false};
  }
};

class HostStore {
 public:
  using Value = HostValue;

  // A launch step's compiled function, and its entry in the profile; or a
  // library call's epilogue.
  struct LaunchEntry {
    seam_cpu_kernel function = nullptr;
    seam_cpu_epilogue epilogue = nullptr;
    int profile = -1;
  };

  HostStore();

  // What ValueStore asks of a backend (see ProgramRunner).
  bool Sole(const HostValue& value) const { return value.owned && value.literal.use_count() == 1; }
  absl::StatusOr<HostValue> Take(HostValue& value, bool consume);
  HostValue View(const HostValue& value) { return HostValue::Borrowed(*value.literal); }
  HostValue Share(const HostValue& value) { return value; }
  void Release(HostValue& value);
  absl::StatusOr<HostValue> Constant(const Instruction& constant);
  HostValue Element(HostValue& tuple, int64_t index, bool move_out);
  HostValue Tuple(const Shape& shape, std::vector<HostValue> elements);
  HostValue Reshape(HostValue bytes, const Shape& shape);
  absl::StatusOr<const Literal*> OnHost(const HostValue& value, HostCopies&) {
    return value.literal.get();
  }
  absl::StatusOr<HostValue> FromHost(Literal value) { return HostValue::Owned(std::move(value)); }
  absl::StatusOr<std::optional<HostValue>> RunNative(const Step& step,
                                                     absl::Span<HostValue* const> reads);
  absl::Status Launch(const Step& step, SlotValues<HostValue>& values);
  absl::StatusOr<HostValue> LaunchOpKernel(const Step& step, absl::Span<HostValue* const> reads,
                                           std::optional<HostValue> in_place);
  BufferPool& host_pool() { return pool_; }
  Evaluator& evaluator() { return evaluator_; }

  // A copy of `value` (an array, or a tuple of them) in pooled memory.
  Literal CopyOf(const Literal& value);
  // Hands a result's memory (the caller's from now on, or back) to the pool.
  void Disown(Literal& result);
  void Recycle(Literal value);

  // Each launch step's entry (Step::launch indexes these).
  std::vector<LaunchEntry>& launches() { return launches_; }
  std::vector<KernelProfile>& profile() { return profile_; }
  const std::vector<KernelProfile>& profile() const { return profile_; }
  double constant_bytes() const { return constant_bytes_; }

 private:
  Literal CopyOfBytes(const Literal& array);
  Literal TakeResult(const Shape& shape);

  Evaluator evaluator_;
  BufferPool pool_;
  // Every constant's value once computed, read in place by every run.
  absl::flat_hash_map<const Instruction*, std::unique_ptr<Literal>> constants_;
  double constant_bytes_ = 0;
  std::vector<LaunchEntry> launches_;
  std::vector<KernelProfile> profile_;
};

}  // namespace seam::runtime
