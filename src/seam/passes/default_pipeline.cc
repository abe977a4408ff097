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

namespace seam {

const char kDefaultPipeline[] =
    "layout-normalization,sharding-remover,transfer-remover,collective-simplifier,"
    "optimization-barrier-expander,"
    "call-inliner,map-inline,flatten-call-graph,batchnorm-expander,gelu-expander,"
    "computation-deduplicator,dce,"
    "fixpoint(algsimp,cse,constant-folding,tuple-simplifier,zero-sized-hlo-elimination,"
    "gather-simplifier,sort-simplifier,reduce-decomposer,conditional-simplifier,"
    "while-loop-simplifier,dce),"
    "while-loop-invariant-code-motion,channels-last,"
    "fixpoint(reshape-mover,transpose-folding,conv-operand-folding,convert-mover,"
    "simplify-fp-conversions,slice-sinker,algsimp,cse,dce),"
    "dot-strength-reduction,broadcast-canonicalizer,"
    "fixpoint(algsimp,cse,constant-folding,tuple-simplifier,while-loop-simplifier,"
    "computation-deduplicator,dce)";

}  // namespace seam
