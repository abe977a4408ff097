// Seam's default pipeline, in one place. Order:
//  1. Row-major layouts first (the fusion planner and code generators need
//     them, and passes then never meet two layouts of one value); then the
//     single-device meaning: drop sharding, transfers onto the device,
//     collectives and barriers, so the graph is what one device computes.
//  2. One flat graph: inline calls and maps, give every loop body and
//     branch its own computation (so loop passes may reshape it), one copy
//     of each distinct reducer (so reduces compare by pointer), expand
//     batch norms and GELU custom-calls (so the fusion planner sees their
//     reductions and elementwise ops).
//  3. Local simplification to a fixpoint: algebra, CSE, constants, tuples,
//     dead code, the canonical forms of gathers, sorts and reduces, and
//     conditionals and loops that constants made trivial.
//  4. Loop-invariant code out of loops; activations that convolutions
//     write channel-major kept channels-last between them (the layout
//     direct convolution kernels want); data movement sunk, folded and
//     merged (reshapes, transposes, converts, slices; pads and reverses
//     into the convolutions' windows), simplifying after each.
//  5. Small matrix-by-vector dots as multiply and reduce (memory-bound
//     work the stitched kernels do better than a library call); increasing
//     broadcast dimensions, the form the fusion planner expects; a last
//     cleanup.
// Left out, as target decisions for the backends: expanders that only grow
// the graph (logistic, rng-bit-generator, dot decomposition, tree
// reductions) and dot-merger, whose concatenated weights cost a copy per
// step unless they are constants.
#include "seam/passes/pipeline.h"

#include <array>

namespace seam {
namespace {

// The phases of the default pipeline that loop to a fixpoint (its steps 3,
// 4 and 5), named so specs and the gym's actions may run one whole: a
// mover's single run leaves what the loop would carry on.
constexpr char kSimplify[] =
    "fixpoint(algsimp,cse,constant-folding,tuple-simplifier,zero-sized-hlo-elimination,"
    "gather-simplifier,sort-simplifier,reduce-decomposer,conditional-simplifier,"
    "while-loop-simplifier,dce)";
constexpr char kSinkDataMovement[] =
    "fixpoint(reshape-mover,transpose-folding,conv-operand-folding,convert-mover,"
    "simplify-fp-conversions,slice-sinker,algsimp,cse,dce)";
constexpr char kCleanup[] =
    "fixpoint(algsimp,cse,constant-folding,tuple-simplifier,while-loop-simplifier,"
    "computation-deduplicator,dce)";

}  // namespace

const char kDefaultPipeline[] =
    "layout-normalization,sharding-remover,transfer-remover,collective-simplifier,"
    "optimization-barrier-expander,"
    "call-inliner,map-inline,flatten-call-graph,batchnorm-expander,gelu-expander,"
    "computation-deduplicator,dce,simplify,"
    "while-loop-invariant-code-motion,channels-last,sink-data-movement,"
    "dot-strength-reduction,broadcast-canonicalizer,cleanup";

absl::Span<const NamedPipeline> NamedPipelines() {
  static const std::array<NamedPipeline, 4> kNamed = {{
      {"default", kDefaultPipeline,
       "Seam's default pipeline: canonical forms, then these phases with single passes between "
       "them"},
      {"simplify", kSimplify,
       "Local simplification to a fixpoint: algebra, CSE, constants, tuples, dead code, "
       "canonical gathers, sorts and reduces, trivial conditionals and loops"},
      {"sink-data-movement", kSinkDataMovement,
       "Data movement sunk, folded and merged to a fixpoint (reshapes, transposes, converts, "
       "slices, convolution windows), simplifying after each"},
      {"cleanup", kCleanup,
       "The default pipeline's last cleanup to a fixpoint: algebra, CSE, constants, tuples, "
       "loops, shared computations, dead code"},
  }};
  return kNamed;
}

const NamedPipeline* FindNamedPipeline(absl::string_view name) {
  for (const NamedPipeline& named : NamedPipelines()) {
    if (named.name == name) return &named;
  }
  return nullptr;
}

}  // namespace seam
