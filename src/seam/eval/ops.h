// The interpreter's op families, one file each. Every function computes the
// value of `instruction` from its operands' values and returns an error (never
// aborts) for what it does not support, naming the construct.
#pragma once

#include "absl/status/statusor.h"
#include "seam/eval/evaluator.h"
#include "seam/ir/instruction.h"

namespace seam {

// Why the interpreter has no semantics for `opcode`; empty when it has
// (custom-calls also need a handler for their target; see
// CheckInterpretable).
absl::string_view NotInterpretedBecause(Opcode opcode);
bool IsInterpretable(Opcode opcode);
// Whether a custom-call target has a documented handler (custom_call.cc).
bool HasCustomCallHandler(absl::string_view target);
// Whether `instruction` is a custom-call whose handler is the identity on
// one device (placement and transfer annotations) on an operand of its
// result's shape.
bool IsIdentityCustomCall(const Instruction& instruction);

// Routes an instruction to its family below.
absl::StatusOr<Literal> EvalInstruction(const Instruction& instruction,
                                        OperandValues operands, Evaluator& evaluator);

// `x`'s elements converted to `to`, as convert does.
absl::StatusOr<Literal> ConvertElements(const Literal& x, DType to);

// Unary, binary and ternary elementwise ops, compare, select, clamp, convert,
// bitcast-convert, reduce-precision, map (elementwise.cc, map calls back).
absl::StatusOr<Literal> EvalElementwise(const Instruction& instruction,
                                        OperandValues operands, Evaluator& evaluator);
// broadcast, reshape, bitcast, transpose, slice, dynamic-slice,
// dynamic-update-slice, concatenate, pad, reverse, iota, copy
// (data_movement.cc).
absl::StatusOr<Literal> EvalDataMovement(const Instruction& instruction,
                                         OperandValues operands);
// dynamic-update-slice's write, into `target` itself: `update` at the
// clamped `start_indices` (for runtimes that update a dead operand in place).
void UpdateSliceInPlace(Literal& target, const Literal& update, OperandValues start_indices);
// reduce, reduce-window, select-and-scatter (reduction.cc).
absl::StatusOr<Literal> EvalReduction(const Instruction& instruction,
                                      OperandValues operands, Evaluator& evaluator);
// gather and scatter (gather_scatter.cc).
absl::StatusOr<Literal> EvalGatherScatter(const Instruction& instruction,
                                          OperandValues operands, Evaluator& evaluator);
// dot (dot.cc) and convolution (convolution.cc).
absl::StatusOr<Literal> EvalDot(const Instruction& instruction, OperandValues operands);
absl::StatusOr<Literal> EvalConvolution(const Instruction& instruction,
                                        OperandValues operands);
// constant, tuple, get-tuple-element, call, while, conditional, copy-like
// barriers, after-all, partition-id, replica-id, and collectives with a single
// participant (control_flow.cc).
absl::StatusOr<Literal> EvalControlFlow(const Instruction& instruction,
                                        OperandValues operands, Evaluator& evaluator);
// batch-norm-training, -inference, -grad (batch_norm.cc).
absl::StatusOr<Literal> EvalBatchNorm(const Instruction& instruction, OperandValues operands);
// sort (sort.cc).
absl::StatusOr<Literal> EvalSort(const Instruction& instruction, OperandValues operands,
                                 Evaluator& evaluator);
// topk (topk.cc).
absl::StatusOr<Literal> EvalTopK(const Instruction& instruction, OperandValues operands);
// custom-call targets with a documented handler (custom_call.cc).
absl::StatusOr<Literal> EvalCustomCall(const Instruction& instruction, OperandValues operands);
// rng and rng-bit-generator (rng.cc).
absl::StatusOr<Literal> EvalRng(const Instruction& instruction, OperandValues operands);

}  // namespace seam
