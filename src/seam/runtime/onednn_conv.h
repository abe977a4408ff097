// Convolutions through oneDNN's direct convolution primitives instead of
// im2col + GEMM. An HLO convolution is stated as one of the three
// convolutions oneDNN knows, in the roles of a forward convolution
// (source, weights, destination):
//   - forward: the HLO window as it is (input, kernel -> output);
//   - data gradient: an input-dilated window (a strided convolution's data
//     gradient) is the backward-data pass of the forward convolution whose
//     stride is that dilation, the kernel read flipped;
//   - weight gradient: batch groups, or a window larger than what it
//     produces, is the backward-weights pass of the forward convolution
//     whose stride is the HLO window dilation and whose dilation is the HLO
//     stride (the image batch is the contracted dimension).
// Activations are read and written where they lie (plain layouts given by
// strides) when oneDNN has an optimized kernel for that, else copied into
// and out of the blocked layouts it picks; weights always take its layout
// (copied on each call: they may change between calls).
#pragma once

#include "absl/status/statusor.h"
#include "seam/ir/instruction.h"
#include "seam/ir/literal.h"
#include "seam/runtime/buffer_pool.h"

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

// The result and temporaries come from `pool`; oneDNN's OpenMP team runs
// on as many threads as Seam's pool has.
absl::StatusOr<Literal> OneDnnConvolution(BufferPool& pool, const Instruction& conv,
                                          const Literal& input, const Literal& kernel);

}  // namespace seam::runtime
