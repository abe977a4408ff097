#include "seam/runtime/host_blas.h"

#include "seam/runtime/blas_conv.h"
#include "seam/runtime/blas_dot.h"
#include "seam/runtime/onednn_conv.h"
#include "seam/runtime/openblas.h"

namespace seam::runtime {

bool HostBlasServes(const Instruction& i) {
  return ((i.opcode() == Opcode::kDot && BlasHandles(i)) ||
          (i.opcode() == Opcode::kConvolution && BlasConvolutionHandles(i))) &&
         LoadOpenBlas().ok();
}

absl::StatusOr<Literal> RunHostBlas(BufferPool& pool, const Instruction& i, const Literal& lhs,
                                    const Literal& rhs) {
  if (i.opcode() == Opcode::kConvolution) {
    // oneDNN's direct convolutions where it has them; im2col otherwise (and
    // without oneDNN).
    if (absl::StatusOr<Literal> direct = OneDnnConvolution(pool, i, lhs, rhs); direct.ok()) {
      return direct;
    }
    return BlasConvolution(pool, i, lhs, rhs);
  }
  return BlasDot(pool, i, lhs, rhs);
}

}  // namespace seam::runtime
