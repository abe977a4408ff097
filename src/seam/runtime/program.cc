#include "seam/runtime/program.h"

#include <algorithm>

#include "seam/eval/ops.h"

namespace seam::runtime {

int64_t BranchIndex(const Literal& selector, int64_t branches) {
  if (selector.shape().dtype() == DType::kPred) return selector.GetBits(0) != 0 ? 0 : 1;
  int64_t index = selector.GetInt(0);
  return index < 0 || index >= branches ? branches - 1 : index;
}

int ForwardedOperand(const Instruction& instruction) {
  switch (instruction.opcode()) {
    case Opcode::kOptimizationBarrier:
    case Opcode::kAddDependency:
      return instruction.operand(0)->shape() == instruction.shape() ? 0 : -1;
    case Opcode::kCustomCall:
      return IsIdentityCustomCall(instruction) ? 0 : -1;
    default:
      return -1;
  }
}

bool RunsAsStructure(const Instruction& instruction) {
  switch (instruction.opcode()) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kTuple:
    case Opcode::kGetTupleElement:
    case Opcode::kAfterAll:
    case Opcode::kWhile:
    case Opcode::kConditional:
    case Opcode::kCall:
      return true;
    default:
      return ForwardedOperand(instruction) >= 0;
  }
}

std::vector<size_t> ReshapedReads(const Step& step) {
  if (step.members.empty() || step.members.size() != step.writes.size()) return {};
  std::vector<size_t> sources;
  for (const Instruction* out : step.writes) {
    if (out->opcode() != Opcode::kReshape) return {};
    const auto read = std::find(step.reads.begin(), step.reads.end(), out->operand(0));
    const size_t k = static_cast<size_t>(read - step.reads.begin());
    if (read == step.reads.end() || std::find(sources.begin(), sources.end(), k) != sources.end()) {
      return {};
    }
    sources.push_back(k);
  }
  return sources;
}

double ShapeBytes(const Shape& shape) {
  if (!shape.IsTuple()) {
    return shape.IsArray() ? static_cast<double>(shape.ArrayElementCount()) * DTypeByteSize(shape.dtype())
                           : 0;
  }
  double bytes = 0;
  for (const Shape& element : shape.tuple_shapes()) bytes += ShapeBytes(element);
  return bytes;
}

namespace {

// What a library call holds while it runs, at most: its operands and its
// result packed in the compute type (f32, or f64), plus an im2col matrix
// (row chunks of about 32 MB) for a convolution.
double LibraryScratchBytes(const Instruction& i) {
  if (i.opcode() != Opcode::kDot && i.opcode() != Opcode::kConvolution) return 0;
  const double element = i.shape().IsArray() && i.shape().dtype() == DType::kF64 ? 8 : 4;
  double elements = static_cast<double>(i.shape().ArrayElementCount());
  for (const Instruction* o : i.operands()) elements += static_cast<double>(o->shape().ArrayElementCount());
  return elements * element + (i.opcode() == Opcode::kConvolution ? 32.0 * (1 << 20) : 0);
}

}  // namespace

double EstimatePeakBytes(const Programs& programs, const Computation& computation) {
  auto it = programs.by_computation.find(&computation);
  if (it == programs.by_computation.end()) return 0;
  const Program& program = *it->second;
  absl::flat_hash_map<const Instruction*, int> remaining = program.readers;
  absl::flat_hash_map<const Instruction*, double> held;  // bytes each live value holds
  double live = 0, peak = 0;
  for (const Step& step : program.steps) {
    double inner = 0;  // what a called computation or a library call holds meanwhile
    if (step.kind == Step::Kind::kInstruction) {
      for (const Computation* called : step.instruction->CalledComputations()) {
        inner = std::max(inner, EstimatePeakBytes(programs, *called));
      }
      inner = std::max(inner, LibraryScratchBytes(*step.instruction));
    }
    for (const Instruction* w : step.writes) {
      switch (w->opcode()) {
        case Opcode::kParameter:        // the caller's
        case Opcode::kGetTupleElement:  // a view, or an element moved out
          continue;
        case Opcode::kTuple: {
          // Elements move in, but an argument or a constant is copied, and
          // so is a value placed twice or read again later (resnet50
          // returns its 80 MB of weights).
          absl::flat_hash_map<const Instruction*, int> placed;
          for (const Instruction* o : w->operands()) ++placed[o];
          double copied = 0;
          for (const auto& [o, times] : placed) {
            const bool kept = o->opcode() == Opcode::kParameter ||
                              o->opcode() == Opcode::kConstant || remaining[o] > times;
            copied += ShapeBytes(o->shape()) * (kept ? times : times - 1);
          }
          held[w] = copied;
          live += copied;
          continue;
        }
        default:
          held[w] = ShapeBytes(w->shape());
          live += held[w];
      }
    }
    peak = std::max(peak, live + inner);
    for (const Instruction* r : step.reads) {
      if (--remaining[r] != 0 || r == computation.root() || r->opcode() == Opcode::kConstant) continue;
      if (auto h = held.find(r); h != held.end()) {
        live -= h->second;
        held.erase(h);
      }
    }
  }
  return peak;
}

}  // namespace seam::runtime
