// Pipelines of passes built from a spec string:
//   spec  := step (',' step)*
//   step  := NAME | PIPELINE | 'fixpoint' '(' spec ')'
// `fixpoint(...)` repeats its body until no pass in it changes the module (at
// most PipelineOptions::max_fixpoint_iterations times); a named pipeline
// (`default`, or a phase of it such as `simplify`) stands for its spec.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "seam/ir/module.h"
#include "seam/passes/pass.h"

namespace seam {

// Seam's default pipeline: the clean graph the fusion planner starts from.
extern const char kDefaultPipeline[];

// A pipeline a spec may name like a pass.
struct NamedPipeline {
  absl::string_view name;
  absl::string_view spec;
  absl::string_view description;
};
// `default` first, then the default pipeline's fixpoint phases in its order.
absl::Span<const NamedPipeline> NamedPipelines();
const NamedPipeline* FindNamedPipeline(absl::string_view name);

struct PipelineOptions {
  // Run the verifier after every pass and fail naming the pass that broke it.
  bool verify_each = false;
  // When set, the module is written to this directory after every pass that
  // changed it, as NNNN.<module>.<pass>.hlo.
  std::string dump_to;
  int max_fixpoint_iterations = 25;
};

// What one pass run did.
struct PassRunRecord {
  std::string pass;
  bool changed = false;
  double seconds = 0;
  int64_t ops_before = 0;
  int64_t ops_after = 0;
};

struct PipelineReport {
  std::vector<PassRunRecord> runs;
  // fixpoint(...) bodies that were still changing the module when they hit
  // the iteration limit.
  int unconverged_fixpoints = 0;
  // A table of per-pass totals: runs, changes, time, op-count delta.
  std::string Summary() const;
};

class Pipeline {
 public:
  // Parses `spec`; errors name the column, e.g. "--passes: unknown pass
  // 'dcee' at column 5 (did you mean 'dce'?)".
  static absl::StatusOr<Pipeline> Parse(absl::string_view spec);
  // As Parse, but `none` and the empty spec, which leave a module as
  // written, give no pipeline.
  static absl::StatusOr<std::optional<Pipeline>> ParseUnlessNone(absl::string_view spec);

  Pipeline(Pipeline&&) = default;
  Pipeline& operator=(Pipeline&&) = default;

  // True when any pass changed the module.
  absl::StatusOr<bool> Run(Module& module, const PipelineOptions& options = {},
                           PipelineReport* report = nullptr);

  // The spec in canonical form (`default` expanded).
  std::string ToString() const;

 private:
  struct Step {
    std::unique_ptr<Pass> pass;        // a single pass, or
    std::vector<Step> fixpoint_body;   // fixpoint(...) when pass is null
  };
  class Parser;
  class Runner;
  Pipeline() = default;

  std::vector<Step> steps_;
};

}  // namespace seam
