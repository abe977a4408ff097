// Shape inference per op family: the shape each op gives small HLO snippets,
// and the message for each kind of malformed operand or attribute.
#include "seam/ir/shape_inference.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "seam/text/parser.h"

namespace seam {
namespace {

// Parses `entry` (the body of an ENTRY computation, after `extra` helper
// computations) without verifying, and describes the root's inferred shape:
// the shape text, "none" when not inferred, or "error: <message>".
std::string Infer(const std::string& entry, const std::string& extra = "") {
  std::string text = absl::StrCat("HloModule m\n", extra, "\nENTRY e {\n", entry, "\n}\n");
  absl::StatusOr<std::unique_ptr<Module>> module =
      ParseHloModule(text, "t.hlo", ParseOptions{.verify = false});
  if (!module.ok()) return absl::StrCat("parse error: ", module.status().message());
  absl::StatusOr<std::optional<Shape>> shape = InferShape(*(*module)->entry()->root());
  if (!shape.ok()) return absl::StrCat("error: ", shape.status().message());
  return shape->has_value() ? (*shape)->ToString(false) : "none";
}

constexpr char kAdd[] = R"(
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
})";

TEST(ShapeInference, ElementwiseBinary) {
  EXPECT_EQ(Infer("a = f32[2,3] parameter(0)\n ROOT r = f32[2,3] add(a, a)"), "f32[2,3]");
  EXPECT_EQ(Infer("a = f32[2,3] parameter(0)\n b = f32[3] parameter(1)\n"
                  " ROOT r = f32[2,3] add(a, b)"),
            "error: operands of 'add' must have the same dimensions, got f32[2,3] and f32[3]");
  EXPECT_EQ(Infer("a = f32[2] parameter(0)\n b = s32[2] parameter(1)\n"
                  " ROOT r = f32[2] add(a, b)"),
            "error: operands of 'add' must have the same element type, got f32[2] and s32[2]");
  EXPECT_EQ(Infer("a = s32[4] parameter(0)\n ROOT r = pred[4] compare(a, a), direction=LT"),
            "pred[4]");
  EXPECT_EQ(Infer("a = f64[4] parameter(0)\n ROOT r = c128[4] complex(a, a)"), "c128[4]");
}

// The element types each op computes on: the opcode table's column.
TEST(ShapeInference, ElementwiseOperandTypes) {
  EXPECT_EQ(Infer("a = f32[2] parameter(0)\n b = s32[2] parameter(1)\n"
                  " ROOT r = f32[2] shift-left(a, b)"),
            "error: 'shift-left' needs an integer operand, got f32[2]");
  EXPECT_EQ(Infer("a = f32[2] parameter(0)\n ROOT r = f32[2] xor(a, a)"),
            "error: 'xor' needs a pred or integer operand, got f32[2]");
  EXPECT_EQ(Infer("a = pred[2] parameter(0)\n ROOT r = pred[2] xor(a, a)"), "pred[2]");
  EXPECT_EQ(Infer("a = s32[2] parameter(0)\n ROOT r = s32[2] sqrt(a)"),
            "error: 'sqrt' needs a complex or floating-point operand, got s32[2]");
  EXPECT_EQ(Infer("a = c64[2] parameter(0)\n ROOT r = c64[2] sqrt(a)"), "c64[2]");
  EXPECT_EQ(Infer("a = c64[2] parameter(0)\n ROOT r = c64[2] floor(a)"),
            "error: 'floor' needs a floating-point operand, got c64[2]");
  EXPECT_EQ(Infer("a = pred[2] parameter(0)\n ROOT r = pred[2] negate(a)"),
            "error: 'negate' needs an integer, floating-point or complex operand, got pred[2]");
  EXPECT_EQ(Infer("a = c64[2] parameter(0)\n ROOT r = c64[2] maximum(a, a)"),
            "error: 'maximum' needs a pred, integer or floating-point operand, got c64[2]");
  EXPECT_EQ(Infer("a = c64[2] parameter(0)\n ROOT r = pred[2] compare(a, a), direction=EQ"),
            "pred[2]");
  EXPECT_EQ(Infer("a = c64[2] parameter(0)\n ROOT r = pred[2] compare(a, a), direction=LT"),
            "error: complex numbers have no order: 'compare' on c64[2] takes direction EQ or NE");
  // Types Seam only parses and prints pass: computing on them is refused later.
  EXPECT_EQ(Infer("a = f8e4m3fn[2] parameter(0)\n ROOT r = f8e4m3fn[2] sqrt(a)"), "f8e4m3fn[2]");
}

TEST(ShapeInference, ElementwiseUnary) {
  EXPECT_EQ(Infer("a = f32[4] parameter(0)\n ROOT r = bf16[4] convert(a)"), "bf16[4]");
  EXPECT_EQ(Infer("a = f32[4] parameter(0)\n ROOT r = pred[4] is-finite(a)"), "pred[4]");
  EXPECT_EQ(Infer("a = s32[4] parameter(0)\n ROOT r = pred[4] is-finite(a)"),
            "error: 'is-finite' needs a floating-point operand, got s32[4]");
  EXPECT_EQ(Infer("a = c64[4] parameter(0)\n ROOT r = f32[4] abs(a)"), "f32[4]");
  EXPECT_EQ(Infer("a = c64[4] parameter(0)\n ROOT r = f32[4] imag(a)"), "f32[4]");
  EXPECT_EQ(Infer("a = f32[4] parameter(0)\n ROOT r = f32[4] reduce-precision(a), "
                  "exponent_bits=5, mantissa_bits=10"),
            "f32[4]");
}

TEST(ShapeInference, BitcastConvertChangesTheMinorDimensionWithTheWidth) {
  EXPECT_EQ(Infer("a = u32[2] parameter(0)\n ROOT r = f32[2] bitcast-convert(a)"), "f32[2]");
  EXPECT_EQ(Infer("a = f32[2] parameter(0)\n ROOT r = u8[2,4] bitcast-convert(a)"), "u8[2,4]");
  EXPECT_EQ(Infer("a = u8[2,4] parameter(0)\n ROOT r = f32[2] bitcast-convert(a)"), "f32[2]");
  EXPECT_EQ(Infer("a = u8[2,2] parameter(0)\n ROOT r = f32[2] bitcast-convert(a)"),
            "error: 'bitcast-convert' from u8 to f32 needs a last operand dimension of 4, got "
            "u8[2,2]");
}

TEST(ShapeInference, SelectAndClampAcceptScalarOperands) {
  EXPECT_EQ(Infer("p = pred[] parameter(0)\n a = f32[3] parameter(1)\n"
                  " ROOT r = f32[3] select(p, a, a)"),
            "f32[3]");
  EXPECT_EQ(Infer("p = pred[2] parameter(0)\n a = f32[3] parameter(1)\n"
                  " ROOT r = f32[3] select(p, a, a)"),
            "error: the predicate of 'select' must be a scalar or have the branches' dimensions, "
            "got pred[2] for f32[3]");
  EXPECT_EQ(Infer("lo = f32[] parameter(0)\n a = f32[3] parameter(1)\n"
                  " ROOT r = f32[3] clamp(lo, a, lo)"),
            "f32[3]");
  EXPECT_EQ(Infer("lo = s32[] parameter(0)\n a = f32[3] parameter(1)\n"
                  " ROOT r = f32[3] clamp(lo, a, lo)"),
            "error: operands of 'clamp' must have the same element type, got s32[] and f32[3]");
}

TEST(ShapeInference, Map) {
  EXPECT_EQ(Infer("a = f32[5] parameter(0)\n ROOT r = f32[5] map(a, a), dimensions={0}, "
                  "to_apply=add",
                  kAdd),
            "f32[5]");
}

TEST(ShapeInference, BroadcastReshapeBitcastTranspose) {
  EXPECT_EQ(Infer("a = f32[3] parameter(0)\n ROOT r = f32[2,3] broadcast(a), dimensions={1}"),
            "f32[2,3]");
  EXPECT_EQ(Infer("a = f32[3] parameter(0)\n ROOT r = f32[3,2] broadcast(a), dimensions={1}"),
            "error: operand dimension 0 of 'broadcast' (size 3) maps to result dimension 1 of "
            "size 2; the sizes must be equal");
  EXPECT_EQ(Infer("a = f32[6] parameter(0)\n ROOT r = f32[2,3] reshape(a)"), "f32[2,3]");
  EXPECT_EQ(Infer("a = f32[6] parameter(0)\n ROOT r = f32[2,4] reshape(a)"),
            "error: 'reshape' must keep the element count, but f32[6] has 6 and f32[2,4] has 8");
  EXPECT_EQ(Infer("a = f32[6] parameter(0)\n ROOT r = s16[12] bitcast(a)"), "s16[12]");
  EXPECT_EQ(Infer("a = f32[2,3,4] parameter(0)\n ROOT r = f32[4,2,3] transpose(a), "
                  "dimensions={2,0,1}"),
            "f32[4,2,3]");
  EXPECT_EQ(Infer("a = f32[2,3] parameter(0)\n ROOT r = f32[2,3] transpose(a), dimensions={0,0}"),
            "error: dimensions of 'transpose' names dimension 0 twice");
}

TEST(ShapeInference, SlicesAndUpdates) {
  EXPECT_EQ(Infer("a = f32[10,8] parameter(0)\n ROOT r = f32[3,8] slice(a), "
                  "slice={[1:8:3], [0:8]}"),
            "f32[3,8]");
  EXPECT_EQ(Infer("a = f32[10] parameter(0)\n ROOT r = f32[3] slice(a), slice={[5:12]}"),
            "error: range [5:12:1] of 'slice' does not fit dimension 0 of f32[10]");
  std::string indices = "a = f32[10,8] parameter(0)\n i = s32[] parameter(1)\n";
  EXPECT_EQ(Infer(indices + " ROOT r = f32[2,8] dynamic-slice(a, i, i), "
                            "dynamic_slice_sizes={2,8}"),
            "f32[2,8]");
  EXPECT_EQ(Infer(indices + " ROOT r = f32[2,8] dynamic-slice(a, i), dynamic_slice_sizes={2,8}"),
            "error: 'dynamic-slice' of f32[10,8] takes 3 operands (one start index per "
            "dimension), got 2");
  // The old form passes the start indices as one vector.
  EXPECT_EQ(Infer("a = f32[10,8] parameter(0)\n v = s32[2] parameter(1)\n"
                  " ROOT r = f32[2,8] dynamic-slice(a, v), dynamic_slice_sizes={2,8}"),
            "f32[2,8]");
  EXPECT_EQ(Infer(indices + " u = f32[2,9] parameter(2)\n"
                            " ROOT r = f32[10,8] dynamic-update-slice(a, u, i, i)"),
            "error: the update of 'dynamic-update-slice' must have the operand's type and rank "
            "and fit in it, got f32[2,9] for f32[10,8]");
}

TEST(ShapeInference, ConcatenatePadReverseIota) {
  EXPECT_EQ(Infer("a = f32[2,3] parameter(0)\n b = f32[2,5] parameter(1)\n"
                  " ROOT r = f32[2,8] concatenate(a, b), dimensions={1}"),
            "f32[2,8]");
  EXPECT_EQ(Infer("a = f32[2,3] parameter(0)\n b = f32[3,5] parameter(1)\n"
                  " ROOT r = f32[2,8] concatenate(a, b), dimensions={1}"),
            "error: operands of 'concatenate' must agree except in dimension 1, got f32[2,3] and "
            "f32[3,5]");
  // 4 + 3 interior + 1 + 2 = 10; -1 + 5 + 0 = 4.
  EXPECT_EQ(Infer("a = f32[4,5] parameter(0)\n z = f32[] constant(0)\n"
                  " ROOT r = f32[10,4] pad(a, z), padding=1_2_1x-1_0"),
            "f32[10,4]");
  EXPECT_EQ(Infer("a = f32[4,5] parameter(0)\n ROOT r = f32[4,5] reverse(a), dimensions={1}"),
            "f32[4,5]");
  EXPECT_EQ(Infer("ROOT r = s32[4,5] iota(), iota_dimension=2"),
            "error: iota_dimension=2 of 'iota' is out of range for s32[4,5]");
}

TEST(ShapeInference, GatherAndScatter) {
  // An embedding lookup: rows of a [100,64] table picked by s32[8,3] ids.
  EXPECT_EQ(Infer("t = f32[100,64] parameter(0)\n ids = s32[8,3,1] parameter(1)\n"
                  " ROOT r = f32[8,3,64] gather(t, ids), offset_dims={2}, "
                  "collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=2, "
                  "slice_sizes={1,64}"),
            "f32[8,3,64]");
  EXPECT_EQ(Infer("t = f32[100,64] parameter(0)\n ids = s32[8,1] parameter(1)\n"
                  " ROOT r = f32[8,64] gather(t, ids), offset_dims={1}, "
                  "collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, "
                  "slice_sizes={2,64}"),
            "error: slice size 2 of 'gather' does not fit dimension 0 of f32[100,64] (collapsed "
            "dimensions need size 1)");
  // A collapsed dimension of size 0 has nothing to give a non-empty result
  // (found by fuzz_hlo_passes: the interpreter read past the operand).
  EXPECT_EQ(Infer("x = f32[5,6,7] parameter(0)\n many = s32[4,2] parameter(1)\n"
                  " ROOT g = f32[4,3,7] gather(x, many), offset_dims={1,2}, "
                  "collapsed_slice_dims={1}, start_index_map={0,1}, index_vector_dim=1, "
                  "slice_sizes={3,0,7}"),
            "error: 'gather' collapses dimension 1 of f32[5,6,7] with slice size 0, which leaves "
            "nothing to gather into f32[4,3,7]");
  EXPECT_EQ(Infer("x = f32[5,6,7] parameter(0)\n none = s32[0,2] parameter(1)\n"
                  " ROOT g = f32[0,3,7] gather(x, none), offset_dims={1,2}, "
                  "collapsed_slice_dims={1}, start_index_map={0,1}, index_vector_dim=1, "
                  "slice_sizes={3,0,7}"),
            "f32[0,3,7]");
  std::string scatter =
      "t = f32[100,64] parameter(0)\n ids = s32[8,1] parameter(1)\n"
      " u = f32[8,64] parameter(2)\n ROOT r = f32[100,64] scatter(t, ids, u), "
      "update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
      "index_vector_dim=1, to_apply=add";
  EXPECT_EQ(Infer(scatter, kAdd), "f32[100,64]");
}

TEST(ShapeInference, Reduce) {
  EXPECT_EQ(Infer("a = f32[4,5,6] parameter(0)\n z = f32[] constant(0)\n"
                  " ROOT r = f32[5] reduce(a, z), dimensions={0,2}, to_apply=add",
                  kAdd),
            "f32[5]");
  EXPECT_EQ(Infer("a = s32[4] parameter(0)\n z = s32[] constant(0)\n"
                  " ROOT r = s32[] reduce(a, z), dimensions={0}, to_apply=add",
                  kAdd),
            "error: to_apply computation 'add' of 'reduce' is (f32[], f32[]) -> f32[], expected "
            "(s32[], s32[]) -> s32[]");
  // Variadic: an argmax reduces values and indices together.
  constexpr char kArgmax[] = R"(
argmax {
  v0 = f32[] parameter(0)
  i0 = s32[] parameter(1)
  v1 = f32[] parameter(2)
  i1 = s32[] parameter(3)
  ge = pred[] compare(v0, v1), direction=GE
  v = f32[] select(ge, v0, v1)
  i = s32[] select(ge, i0, i1)
  ROOT t = (f32[], s32[]) tuple(v, i)
})";
  EXPECT_EQ(Infer("a = f32[4,5] parameter(0)\n b = s32[4,5] parameter(1)\n"
                  " z = f32[] constant(0)\n k = s32[] constant(0)\n"
                  " ROOT r = (f32[4], s32[4]) reduce(a, b, z, k), dimensions={1}, "
                  "to_apply=argmax",
                  kArgmax),
            "(f32[4], s32[4])");
}

TEST(ShapeInference, ReduceWindowAndSelectAndScatter) {
  // Max pooling 3x3, stride 2, padding 1: floor((112 + 2 - 3) / 2) + 1 = 56.
  EXPECT_EQ(Infer("a = f32[8,112,112,64] parameter(0)\n z = f32[] constant(0)\n"
                  " ROOT r = f32[8,56,56,64] reduce-window(a, z), "
                  "window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0}, to_apply=add",
                  kAdd),
            "f32[8,56,56,64]");
  constexpr char kGe[] = R"(
ge {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT c = pred[] compare(x, y), direction=GE
})";
  EXPECT_EQ(Infer("a = f32[4,4] parameter(0)\n s = f32[2,2] parameter(1)\n"
                  " z = f32[] constant(0)\n ROOT r = f32[4,4] select-and-scatter(a, s, z), "
                  "window={size=2x2 stride=2x2}, select=ge, scatter=add",
                  absl::StrCat(kAdd, kGe)),
            "f32[4,4]");
}

TEST(ShapeInference, Dot) {
  std::string bmm =
      "a = bf16[8,16,32] parameter(0)\n b = bf16[8,32,64] parameter(1)\n"
      " ROOT r = f32[8,16,64] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, "
      "rhs_batch_dims={0}, rhs_contracting_dims={1}";
  EXPECT_EQ(Infer(bmm), "f32[8,16,64]");  // preferred_element_type widens
  EXPECT_EQ(Infer("a = f32[2,3] parameter(0)\n b = f32[4,5] parameter(1)\n"
                  " ROOT r = f32[2,5] dot(a, b), lhs_contracting_dims={1}, "
                  "rhs_contracting_dims={0}"),
            "error: 'dot' pairs lhs dimension 1 with rhs dimension 0 but their sizes differ: "
            "f32[2,3] and f32[4,5]");
  EXPECT_EQ(Infer("a = s32[2,3] parameter(0)\n ROOT r = s8[2,2] dot(a, a), "
                  "lhs_contracting_dims={1}, rhs_contracting_dims={1}"),
            "error: the result type of 'dot' must not be narrower than its operands' s32, got s8");
}

TEST(ShapeInference, Convolution) {
  // 3x3 stride 2 padding 1 on 224x224: floor((224 + 2 - 3) / 2) + 1 = 112.
  EXPECT_EQ(Infer("x = f32[8,224,224,3] parameter(0)\n k = f32[3,3,3,32] parameter(1)\n"
                  " ROOT r = f32[8,112,112,32] convolution(x, k), "
                  "window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"),
            "f32[8,112,112,32]");
  // Depthwise: 32 groups of one input feature each.
  EXPECT_EQ(Infer("x = f32[8,10,10,32] parameter(0)\n k = f32[3,3,1,32] parameter(1)\n"
                  " ROOT r = f32[8,8,8,32] convolution(x, k), window={size=3x3}, "
                  "dim_labels=b01f_01io->b01f, feature_group_count=32"),
            "f32[8,8,8,32]");
  EXPECT_EQ(Infer("x = f32[8,10,10,32] parameter(0)\n k = f32[3,3,16,32] parameter(1)\n"
                  " ROOT r = f32[8,8,8,32] convolution(x, k), window={size=3x3}, "
                  "dim_labels=b01f_01io->b01f"),
            "error: 'convolution' of f32[8,10,10,32] by f32[3,3,16,32] does not fit "
            "feature_group_count=1 and batch_group_count=1: input features must be the group "
            "count times the kernel input features, and output features and batch divisible by "
            "the group counts");
  // Window dilation 2 makes the 3-wide window span 5: 10 - 5 + 1 = 6.
  EXPECT_EQ(Infer("x = f32[1,3,10] parameter(0)\n k = f32[4,3,3] parameter(1)\n"
                  " ROOT r = f32[1,4,6] convolution(x, k), window={size=3 rhs_dilate=2}, "
                  "dim_labels=bf0_oi0->bf0"),
            "f32[1,4,6]");
}

TEST(ShapeInference, TuplesCallsAndLoops) {
  EXPECT_EQ(Infer("a = f32[2] parameter(0)\n t = (f32[2], s32[]) parameter(1)\n"
                  " ROOT r = s32[] get-tuple-element(t), index=1"),
            "s32[]");
  EXPECT_EQ(Infer("t = (f32[2], s32[]) parameter(0)\n ROOT r = s32[] get-tuple-element(t), "
                  "index=2"),
            "error: index=2 of 'get-tuple-element' is out of range for (f32[2], s32[])");
  EXPECT_EQ(Infer("a = f32[] parameter(0)\n ROOT r = f32[] call(a, a), to_apply=add", kAdd),
            "f32[]");
  EXPECT_EQ(Infer("a = f32[] parameter(0)\n ROOT r = f32[] call(a), to_apply=add", kAdd),
            "error: to_apply computation 'add' takes 2 parameters, expected 1");
  constexpr char kLoop[] = R"(
cond {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(10)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[4] get-tuple-element(s), index=1
  ROOT t = (s32[], f32[4]) tuple(i, x)
})";
  EXPECT_EQ(Infer("s = (s32[], f32[4]) parameter(0)\n"
                  " ROOT w = (s32[], f32[4]) while(s), condition=cond, body=body",
                  kLoop),
            "(s32[], f32[4])");
  EXPECT_EQ(Infer("s = (s32[], f32[5]) parameter(0)\n"
                  " ROOT w = (s32[], f32[5]) while(s), condition=cond, body=body",
                  kLoop),
            "error: parameter 0 of condition computation 'cond' is (s32[], f32[4]), expected "
            "(s32[], f32[5])");
}

TEST(ShapeInference, Conditional) {
  constexpr char kBranches[] = R"(
neg {
  x = f32[3] parameter(0)
  ROOT n = f32[3] negate(x)
}
id {
  x = f32[3] parameter(0)
  ROOT c = f32[3] copy(x)
})";
  std::string args = "a = f32[3] parameter(0)\n";
  EXPECT_EQ(Infer(args + " p = pred[] parameter(1)\n ROOT r = f32[3] conditional(p, a, a), "
                         "true_computation=neg, false_computation=id",
                  kBranches),
            "f32[3]");
  EXPECT_EQ(Infer(args + " i = s32[] parameter(1)\n ROOT r = f32[3] conditional(i, a, a, a), "
                         "branch_computations={neg, id, neg}",
                  kBranches),
            "f32[3]");
  EXPECT_EQ(Infer(args + " i = f32[] parameter(1)\n ROOT r = f32[3] conditional(i, a, a), "
                         "branch_computations={neg, id}",
                  kBranches),
            "error: the branch index of 'conditional' must be s32[], or pred[] with two "
            "branches, got f32[]");
}

TEST(ShapeInference, MiscellaneousOps) {
  EXPECT_EQ(Infer("ROOT r = u32[] partition-id()"), "u32[]");
  EXPECT_EQ(Infer("t = token[] parameter(0)\n ROOT r = token[] after-all(t, t)"), "token[]");
  EXPECT_EQ(Infer("x = f32[8,4] parameter(0)\n s = f32[4] parameter(1)\n"
                  " ROOT r = (f32[8,4], f32[4], f32[4]) batch-norm-training(x, s, s), "
                  "epsilon=0.001, feature_index=1"),
            "(f32[8,4], f32[4], f32[4])");
  EXPECT_EQ(Infer("a = f32[] parameter(0)\n ROOT r = f32[3,4] rng(a, a), "
                  "distribution=rng_uniform"),
            "f32[3,4]");
  EXPECT_EQ(Infer("s = u64[2] parameter(0)\n ROOT r = (u64[2], u32[8]) rng-bit-generator(s), "
                  "algorithm=rng_default"),
            "(u64[2], u32[8])");
  EXPECT_EQ(Infer("a = f32[2] parameter(0)\n ROOT r = f32[2] custom-call(a), "
                  "custom_call_target=\"foo\""),
            "none");
}

TEST(ShapeInference, OperandCounts) {
  // The parser checks fixed arities itself, so this instruction is built directly.
  Instruction a("a", Opcode::kParameter, Shape::Scalar(DType::kF32));
  Instruction negate("n", Opcode::kNegate, Shape::Scalar(DType::kF32));
  negate.AppendOperand(&a);
  negate.AppendOperand(&a);
  EXPECT_EQ(CheckOperandCount(negate).message(), "'negate' takes 1 operand, got 2");
  EXPECT_EQ(InferShape(negate).status().message(), "'negate' takes 1 operand, got 2");
  EXPECT_EQ(Infer("a = f32[2] parameter(0)\n z = f32[] constant(0)\n"
                  " ROOT r = f32[] reduce(a, z, z), dimensions={0}, to_apply=add",
                  kAdd),
            "error: 'reduce' takes N inputs then N init values (an even count of at least 2), "
            "got 3 operands");
}

TEST(ShapesMatch, IgnoresLayoutsAndDynamism) {
  Shape a = Shape::Array(DType::kF32, {2, 3});
  Shape b = a;
  b.set_layout(Layout{{0, 1}, ""});
  b.SetDynamicDim(0, true);
  EXPECT_TRUE(ShapesMatch(a, b));
  EXPECT_TRUE(ShapesMatch(a, Shape::Array(DType::kF32, {Shape::kUnboundedSize, 3})));
  EXPECT_FALSE(ShapesMatch(a, Shape::Array(DType::kF32, {3, 2})));
  EXPECT_FALSE(ShapesMatch(a, Shape::Array(DType::kS32, {2, 3})));
  EXPECT_FALSE(ShapesMatch(Shape::Tuple({a}), a));
}

}  // namespace
}  // namespace seam
