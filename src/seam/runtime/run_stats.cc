#include "seam/runtime/run_stats.h"

#include "seam/runtime/host_blas.h"

namespace seam::runtime {

void ExecutableStats::CountPrograms(Programs& programs) {
  compiled_kernels = programs.compiled_kernels;
  op_kernels = programs.op_kernels;
  aliases = programs.aliases;
  blas_calls = programs.library_calls;
  epilogues = programs.epilogues;
  fallbacks = std::move(programs.fallbacks);
}

void ExecutableStats::CountTime(const Step& step, double seconds) {
  StepTimes& t = time;
  switch (step.kind) {
    case Step::Kind::kKernel:
      t.kernels += seconds;
      return;
    case Step::Kind::kOpKernel:
      t.op_kernels += seconds;
      return;
    case Step::Kind::kAlias:
      t.other += seconds;
      return;  // a reshape: bytes taken or copied
    case Step::Kind::kInterpretKernel:
      t.interpreter += seconds;
      return;
    case Step::Kind::kInstruction:
      break;
  }
  switch (step.instruction->opcode()) {
    case Opcode::kWhile:
    case Opcode::kCall:
    case Opcode::kConditional:
      return;
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kTuple:
    case Opcode::kGetTupleElement:
      t.other += seconds;
      return;
    default:
      (HostBlasServes(*step.instruction) ? t.library : t.interpreter) += seconds;
  }
}

}  // namespace seam::runtime
