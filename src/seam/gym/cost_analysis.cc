#include "seam/gym/cost_analysis.h"

#include <vector>

#include "absl/container/flat_hash_set.h"
#include "seam/codegen/op_kernels.h"
#include "seam/fusion/cost_model.h"
#include "seam/fusion/planner.h"
#include "seam/ir/module_clone.h"
#include "seam/passes/pipeline.h"
#include "seam/runtime/program.h"

namespace seam::gym {
namespace {

double Elements(const Shape& shape) { return static_cast<double>(shape.ArrayElementCount()); }

bool IsTranscendental(Opcode op) {
  return IsExpensive(op) && op != Opcode::kDivide && op != Opcode::kRemainder;
}

// Instructions of an applied computation (a reducer): its cost per application.
double OpsPerApplication(const Instruction& op) {
  double ops = 0;
  for (const Computation* applied : op.CalledComputations()) {
    for (const auto& i : applied->instructions()) {
      if (i->opcode() != Opcode::kParameter && i->opcode() != Opcode::kTuple) ++ops;
    }
  }
  return std::max(1.0, ops);
}

void CountInstruction(const Instruction& i, ArithmeticCounts& counts) {
  Opcode op = i.opcode();
  double out = Elements(i.shape());
  switch (OpcodeCategory(op)) {
    case OpCategory::kElementwise:
      (IsTranscendental(op) ? counts.transcendentals : counts.flops) += out;
      return;
    case OpCategory::kLibrary:
      counts.flops += op == Opcode::kDot || op == Opcode::kConvolution ? fusion::LibraryFlops(i) : out;
      return;
    case OpCategory::kReduction: {
      double in = i.operand_count() > 0 ? Elements(i.operand(0)->shape()) : 0;
      if (op == Opcode::kReduce) {
        const Shape& shape = i.shape();
        double outputs = shape.IsTuple() && !shape.tuple_shapes().empty()
                             ? Elements(shape.tuple_shapes()[0]) : out;
        counts.flops += std::max(0.0, in - outputs) * OpsPerApplication(i);
      } else if (op == Opcode::kReduceWindow && i.attrs().window.has_value()) {
        double window = 1;
        for (const WindowDim& d : i.attrs().window->dims) window *= static_cast<double>(d.size);
        counts.flops += out * window * OpsPerApplication(i);
      } else {
        counts.flops += std::max(in, out);
      }
      return;
    }
    case OpCategory::kComposite:
      // Batch norms: about a mean, a variance and a normalisation per element.
      counts.flops += 8 * (i.operand_count() > 0 ? Elements(i.operand(0)->shape()) : out);
      return;
    default:
      return;
  }
}

bool RunsAsSequence(Opcode op) {
  return op == Opcode::kCall || op == Opcode::kWhile || op == Opcode::kConditional ||
         op == Opcode::kAsyncStart;
}

// What the executable for `device` leaves to the interpreter, and the time
// that takes beyond what the plan priced: standalone ops without generated
// code of their own (the CPU's op kernels; the CUDA backend has none), and
// opaque ops that are neither structure nor forwarded values.
double InterpretedExtraUs(const fusion::FusionPlan& plan, const target::DeviceSpec& device) {
  double extra = 0;
  for (const fusion::ComputationPlan& c : plan.computations) {
    for (const fusion::StandaloneOp& s : c.standalone) {
      if (!device.is_gpu() && codegen::EmitCpuOpKernel(*s.op, "probe").ok()) continue;
      extra += fusion::EstimateInterpretedTimeUs(*s.op) - s.cost.time_us;
    }
    for (const fusion::StandaloneOp& s : c.opaque) {
      if (!runtime::RunsAsStructure(*s.op)) extra += fusion::EstimateInterpretedTimeUs(*s.op);
    }
  }
  return extra;
}

}  // namespace

const char kPlanningPrerequisites[] =
    "layout-normalization,call-inliner,flatten-call-graph,batchnorm-expander,gelu-expander";

ArithmeticCounts CountArithmetic(const Module& module) {
  ArithmeticCounts counts;
  if (module.entry() == nullptr) return counts;
  absl::flat_hash_set<const Computation*> seen = {module.entry()};
  std::vector<const Computation*> work = {module.entry()};
  while (!work.empty()) {
    const Computation* computation = work.back();
    work.pop_back();
    for (const auto& i : computation->instructions()) {
      CountInstruction(*i, counts);
      if (!RunsAsSequence(i->opcode())) continue;
      for (const Computation* called : i->CalledComputations()) {
        if (seen.insert(called).second) work.push_back(called);
      }
    }
  }
  return counts;
}

absl::StatusOr<StitchEstimate> EstimateAfterStitch(const Module& module,
                                                   const target::DeviceSpec& device) {
  std::unique_ptr<Module> copy = CloneModule(module);
  absl::StatusOr<Pipeline> prerequisites = Pipeline::Parse(kPlanningPrerequisites);
  if (!prerequisites.ok()) return prerequisites.status();
  if (absl::StatusOr<bool> ran = prerequisites->Run(*copy); !ran.ok()) return ran.status();
  fusion::PlanOptions options;
  options.strategy = fusion::Strategy::kStitch;
  options.device = device;
  absl::StatusOr<fusion::FusionPlan> plan = fusion::PlanModule(*copy, options);
  if (!plan.ok()) return plan.status();
  fusion::PlanTotals totals = plan->Totals();
  StitchEstimate estimate;
  estimate.interpreted_us = InterpretedExtraUs(*plan, device);
  estimate.time_us = totals.cost.time_us + totals.library_cost.time_us + estimate.interpreted_us;
  estimate.dram_bytes = totals.cost.dram_bytes();
  estimate.kernels = totals.MemoryIntensiveKernels();
  estimate.planned_ops = copy->InstructionCount();
  return estimate;
}

}  // namespace seam::gym
