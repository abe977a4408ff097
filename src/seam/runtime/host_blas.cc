#include "seam/runtime/host_blas.h"

#include "seam/runtime/blas_conv.h"
#include "seam/runtime/blas_dot.h"
#include "seam/runtime/onednn_conv.h"
#include "seam/runtime/openblas.h"
#include "seam/runtime/thread_pool.h"
#include "seam/util/status_macros.h"

namespace seam::runtime {

bool HostBlasServes(const Instruction& i) {
  return ((i.opcode() == Opcode::kDot && BlasHandles(i)) ||
          (i.opcode() == Opcode::kConvolution && BlasConvolutionHandles(i))) &&
         LoadOpenBlas().ok();
}

namespace {

absl::StatusOr<Literal> RunLibrary(BufferPool& pool, const Instruction& i, const Literal& lhs,
                                   const Literal& rhs, ResultEpilogue* epilogue) {
  if (i.opcode() == Opcode::kConvolution) {
    // oneDNN's direct convolutions where it has them; im2col otherwise (and
    // without oneDNN).
    if (absl::StatusOr<Literal> direct = OneDnnConvolution(pool, i, lhs, rhs, epilogue); direct.ok()) {
      return direct;
    }
    return BlasConvolution(pool, i, lhs, rhs);
  }
  return BlasDot(pool, i, lhs, rhs, epilogue);
}

// Pieces of this many elements (64 KB of f32) stay in L2 between the
// epilogue's read and write.
constexpr int64_t kEpiloguePiece = int64_t{1} << 14;

}  // namespace

absl::StatusOr<Literal> RunHostBlas(BufferPool& pool, const Instruction& i, const Literal& lhs,
                                    const Literal& rhs, ResultEpilogue* epilogue) {
  SEAM_ASSIGN_OR_RETURN(Literal result, RunLibrary(pool, i, lhs, rhs, epilogue));
  if (epilogue != nullptr && !epilogue->applied) {
    void* memory = result.mutable_bytes().data();
    ThreadPool::Global().ParallelFor(result.element_count(), kEpiloguePiece,
                                     [&](int64_t begin, int64_t end, int) {
                                       epilogue->ApplyRange(memory, begin, end);
                                     });
    epilogue->applied = true;
  }
  return result;
}

}  // namespace seam::runtime
