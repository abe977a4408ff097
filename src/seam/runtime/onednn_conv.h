// Convolutions through oneDNN's direct convolution primitives instead of
// im2col + GEMM, each stated as oneDNN's forward, data-gradient or
// weight-gradient convolution (its oneDNN form). Activations are read
// and written where they lie (plain layouts given by strides) when oneDNN
// has an optimized kernel for that, else copied into and out of the
// blocked layouts it picks; weights always take its layout (copied on each
// call: they may change between calls). The work is shared out over Seam's
// threads by images, or by output features, else left to oneDNN's OpenMP
// team.
#pragma once

#include <functional>

#include "absl/status/statusor.h"
#include "seam/ir/instruction.h"
#include "seam/ir/literal.h"
#include "seam/runtime/buffer_pool.h"
#include "seam/runtime/result_epilogue.h"

namespace seam::runtime {

// Whether the convolution has a oneDNN form: f32 (or bf16 operands with a
// bf16 or f32 result), 1-3 spatial dimensions, no negative padding. (It
// may still fail: without oneDNN, or where only its reference loops would
// take it.)
bool OneDnnConvolutionServes(const Instruction& conv);

// What oneDNN runs for the convolution: its form, implementation and the
// arrays it copies into its own layouts (for plans and tests); an error
// where OneDnnConvolution would not run it.
absl::StatusOr<std::string> OneDnnConvolutionImplementation(const Instruction& conv);

// For benchmarks: oneDNN's convolution primitive alone, as a library's own
// benchmark times it: every array in the layouts it picks, prepared once,
// on its OpenMP team of as many threads as Seam's pool. Each call of the
// function returned runs it once.
absl::StatusOr<std::function<absl::Status()>> OneDnnConvolutionAlone(const Instruction& conv);

// The result and temporaries come from `pool`; the work is shared out over
// Seam's pool, or else run on oneDNN's OpenMP team of as many threads.
// `epilogue`, when given, is applied to each share's result as it is
// written where shares are ranges of it (images of an output whose batch
// is outermost, features of one whose features are innermost).
// Unimplemented for a convolution it does not serve (callers go on to
// im2col).
absl::StatusOr<Literal> OneDnnConvolution(BufferPool& pool, const Instruction& conv,
                                          const Literal& input, const Literal& kernel,
                                          ResultEpilogue* epilogue = nullptr);

}  // namespace seam::runtime
