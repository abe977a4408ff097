// The BLAS convolution against the interpreter's on random convolutions
// (random_convolutions.h). Tolerance: RewriteTolerance (the GEMM
// sums in another order).
#include <algorithm>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "seam/eval/arguments.h"
#include "seam/eval/compare.h"
#include "seam/eval/evaluator.h"
#include "seam/eval/ops.h"
#include "seam/runtime/blas_conv.h"
#include "seam/text/parser.h"
#include "random_convolutions.h"

namespace seam::runtime {
namespace {

TEST(BlasConvolution, MatchesTheInterpreterOnRandomConvolutions) {
  std::mt19937 rng(7);
  int checked = 0;
  for (int trial = 0; trial < 400; ++trial) {
    RandomConv conv = GenerateConvolution(rng);
    absl::StatusOr<std::vector<std::unique_ptr<Module>>> modules = ParseHloText(conv.text, "conv");
    ASSERT_TRUE(modules.ok()) << modules.status() << "\n" << conv.text;
    const Computation& entry = *modules->front()->entry();
    const Instruction& instruction = *entry.root();
    ASSERT_TRUE(BlasConvolutionHandles(instruction)) << conv.text;
    std::vector<Literal> arguments = RandomArguments(entry, /*seed=*/trial);
    Evaluator evaluator;
    BufferPool pool;
    std::vector<const Literal*> operands{&arguments[0], &arguments[1]};
    absl::StatusOr<Literal> want = EvalInstruction(instruction, operands, evaluator);
    ASSERT_TRUE(want.ok()) << want.status() << "\n" << conv.text;
    absl::StatusOr<Literal> got = BlasConvolution(pool, instruction, arguments[0], arguments[1]);
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(DescribeDifferences(*got, *want, &RewriteTolerance, "the convolution"), "")
        << conv.text;
    ++checked;
  }
  EXPECT_EQ(checked, 400);
}

// The shapes the corpus runs: a 7x7 stride-2 stem, a 1x1 projection, a
// depthwise 3x3 in NCHW and its batch-grouped weight gradient.
TEST(BlasConvolution, MatchesTheInterpreterOnCorpusShapes) {
  const char* kText = R"(HloModule shapes

ENTRY e {
  image = f32[2,32,32,3] parameter(0)
  stem_w = f32[7,7,3,16] parameter(1)
  stem = f32[2,16,16,16] convolution(image, stem_w), window={size=7x7 stride=2x2 pad=3_3x3_3}, dim_labels=b01f_01io->b01f
  proj_w = f32[1,1,16,24] parameter(2)
  proj = f32[2,16,16,24] convolution(stem, proj_w), window={size=1x1}, dim_labels=b01f_01io->b01f
  nchw = f32[4,24,8,8] parameter(3)
  dw_w = f32[24,1,3,3] parameter(4)
  dw = f32[4,24,8,8] convolution(nchw, dw_w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01, feature_group_count=24
  grad = f32[3,3,1,24] convolution(nchw, dw), window={size=8x8 pad=1_1x1_1}, dim_labels=fb01_io01->01bf, batch_group_count=24
  ROOT t = (f32[2,16,16,24], f32[4,24,8,8], f32[3,3,1,24]) tuple(proj, dw, grad)
}
)";
  absl::StatusOr<std::vector<std::unique_ptr<Module>>> modules = ParseHloText(kText, "shapes");
  ASSERT_TRUE(modules.ok()) << modules.status();
  const Computation& entry = *modules->front()->entry();
  std::vector<Literal> arguments = RandomArguments(entry, /*seed=*/3);
  Evaluator evaluator;
  BufferPool pool;
  absl::flat_hash_map<const Instruction*, Literal> values;
  for (const Instruction* i : entry.MakePostOrder()) {
    if (i->opcode() == Opcode::kParameter) {
      values.insert_or_assign(i, arguments[i->parameter_number()]);
      continue;
    }
    if (i->opcode() != Opcode::kConvolution) continue;
    const Literal& a = values.at(i->operand(0));
    const Literal& b = values.at(i->operand(1));
    std::vector<const Literal*> operands{&a, &b};
    absl::StatusOr<Literal> want = EvalInstruction(*i, operands, evaluator);
    absl::StatusOr<Literal> got = BlasConvolution(pool, *i, a, b);
    ASSERT_TRUE(want.ok() && got.ok()) << i->name();
    EXPECT_EQ(DescribeDifferences(*got, *want, &RewriteTolerance, i->name()), "");
    values.insert_or_assign(i, std::move(*want));
  }
}

}  // namespace
}  // namespace seam::runtime
