// Seam's default pipeline, in one place. Order: simplify calls and control
// flow first so later passes see one flat graph, then drive the local
// simplifiers to a fixpoint, then put the graph in the canonical form the
// fusion planner expects.
#include "seam/passes/pipeline.h"

namespace seam {

const char kDefaultPipeline[] =
    "computation-deduplicator,dce,"
    "fixpoint(cse,constant-folding,dce)";

}  // namespace seam
