// The module cache: a module after a pass pipeline, kept on disk beside the
// kernel cache so that a module run before starts without its passes. The
// key is a hash of the HLO text, the pipeline in canonical form and the
// identity of the Seam build doing the work (the file holding this code, by
// size and modification time), so an entry never outlives the passes that
// made it. An entry is the canonical print of the optimized module (less
// its instructions' op names and source lines, `metadata`, which nothing
// that runs a module reads, and which the module handed back lacks too
// whether it came from the cache or not), which parses back to the same
// module (and so to the same plan and kernels),
// headed by its key and a hash of its body: an entry that is truncated,
// edited or foreign fails those checks, is removed and rebuilt. Entries are
// written to a temporary file and renamed, so processes may share the cache.
#pragma once

#include <memory>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "seam/ir/module.h"
#include "seam/passes/pipeline.h"

namespace seam::compiler {

struct OptimizedModule {
  std::unique_ptr<Module> module;
  bool cache_hit = false;
  double parse_seconds = 0;   // the HLO file, or the cached entry on a hit
  double passes_seconds = 0;  // 0 on a hit
};

// The module of HLO file `path` after `pipeline`, from the module cache
// when it holds it; otherwise `load` parses the file (its errors are the
// file's own), the pipeline runs and the result is stored. A cache that
// cannot be read or written only costs the next start its passes.
absl::StatusOr<OptimizedModule> LoadOptimizedModule(
    const std::string& path, Pipeline& pipeline, const PipelineOptions& options,
    absl::FunctionRef<absl::StatusOr<std::unique_ptr<Module>>()> load);
// The same for HLO `text` held in memory (`load` parses it).
absl::StatusOr<OptimizedModule> OptimizeModuleText(
    const std::string& text, Pipeline& pipeline, const PipelineOptions& options,
    absl::FunctionRef<absl::StatusOr<std::unique_ptr<Module>>()> load);

}  // namespace seam::compiler
