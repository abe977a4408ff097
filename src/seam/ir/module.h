// A module: computations, one of them the entry, plus module-level
// attributes and debug tables kept verbatim.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "seam/ir/attributes.h"
#include "seam/ir/computation.h"
#include "absl/strings/string_view.h"

namespace seam {

// One of the debug tables (FileNames, FunctionNames, FileLocations,
// StackFrames) that newer dumps write after the HloModule line.
struct DebugTable {
  std::string name;
  std::vector<std::pair<int64_t, std::string>> rows;  // id, value as written
};

class Module {
 public:
  explicit Module(std::string name) : name_(std::move(name)) {}
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  Computation* AddComputation(std::unique_ptr<Computation> computation);
  // Removes a computation that nothing calls and that is not the entry.
  void RemoveComputation(Computation* computation);
  // In the order they were added (text order after parsing).
  const std::vector<std::unique_ptr<Computation>>& computations() const {
    return computations_;
  }
  Computation* FindComputation(absl::string_view name) const;

  Computation* entry() const { return entry_; }
  void set_entry(Computation* entry) { entry_ = entry; }

  // Callees before callers. Fails when the call graph has a cycle, naming one
  // computation on it.
  absl::StatusOr<std::vector<Computation*>> MakeComputationPostOrder() const;

  // `HloModule name, key=value, ...` attributes, verbatim and in order.
  const std::vector<VerbatimAttribute>& attributes() const { return attributes_; }
  std::vector<VerbatimAttribute>& mutable_attributes() { return attributes_; }
  // The entry parameters the `input_output_alias` attribute lets a run take
  // over (XLA's donated buffers), each once, in increasing order.
  std::vector<int64_t> DonatedParameters() const;
  const std::vector<DebugTable>& debug_tables() const { return debug_tables_; }
  std::vector<DebugTable>& mutable_debug_tables() { return debug_tables_; }

  int64_t InstructionCount() const;

  // Instructions added, removed or replaced by another since the module was
  // made: how much a pass rewrote (the gym's rewrite-hit feature).
  int64_t edit_count() const { return edit_count_; }
  void CountEdits(int64_t n) { edit_count_ += n; }

 private:
  std::string name_;
  std::vector<std::unique_ptr<Computation>> computations_;
  Computation* entry_ = nullptr;
  std::vector<VerbatimAttribute> attributes_;
  std::vector<DebugTable> debug_tables_;
  int64_t edit_count_ = 0;
};

}  // namespace seam
