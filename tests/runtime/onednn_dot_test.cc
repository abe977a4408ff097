// bf16 dots (and the f32 ones it takes) through oneDNN against the
// interpreter (accumulating in f32, as the kernels do), on shapes that
// take each of its paths: a product run transposed, columns split
// over threads, weights stored either way round, a transposed left
// operand, whole products per thread, a bf16 or an f32 result, free
// dimensions that become batch dimensions of one operand, several
// contracting dimensions, a batch dimension between the others. Dots whose
// operands would need permuting are not its to take.
#include "seam/runtime/onednn_dot.h"

#include <cstdio>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "seam/eval/arguments.h"
#include "seam/eval/compare.h"
#include "seam/eval/evaluator.h"
#include "seam/eval/ops.h"
#include "seam/runtime/blas_dot.h"
#include "seam/runtime/onednn.h"
#include "seam/text/parser.h"

namespace seam::runtime {
namespace {

struct Case {
  const char* name;
  const char* lhs;
  const char* rhs;
  const char* out;
  const char* dims;
};

void ExpectMatchesTheInterpreter(const Case& c) {
  std::string text = absl::StrCat("HloModule dot\n\nENTRY e {\n  a = ", c.lhs,
                                  " parameter(0)\n  b = ", c.rhs, " parameter(1)\n  ROOT d = ",
                                  c.out, " dot(a, b), ", c.dims, "\n}\n");
  absl::StatusOr<std::vector<std::unique_ptr<Module>>> modules = ParseHloText(text, c.name);
  ASSERT_TRUE(modules.ok()) << modules.status();
  const Computation& entry = *modules->front()->entry();
  const Instruction& dot = *entry.root();
  ASSERT_TRUE(OneDnnDotServes(dot)) << c.name;
  if (!OneDnnHasBf16Matmul() && absl::StrContains(text, "bf16[")) {
    std::printf("%s: skipped, oneDNN has no bf16 matmul on this host\n", c.name);
    return;
  }
  std::vector<Literal> arguments = RandomArguments(entry, /*seed=*/7);
  Evaluator evaluator;
  evaluator.set_wide_accumulation(true);
  absl::StatusOr<Literal> want = EvalInstruction(dot, {&arguments[0], &arguments[1]}, evaluator);
  ASSERT_TRUE(want.ok()) << want.status();
  BufferPool pool;
  absl::StatusOr<Literal> got = OneDnnDot(pool, dot, arguments[0], arguments[1]);
  ASSERT_TRUE(got.ok()) << c.name << ": " << got.status();
  EXPECT_EQ(DescribeDifferences(*got, *want, &RewriteTolerance, c.name), "");
  // BlasDot takes the same path.
  absl::StatusOr<Literal> through_blas = BlasDot(pool, dot, arguments[0], arguments[1]);
  ASSERT_TRUE(through_blas.ok()) << through_blas.status();
  EXPECT_EQ(DescribeDifferences(*through_blas, *got, &RewriteTolerance, c.name), "");
}

TEST(OneDnnDot, MatchesTheInterpreter) {
  const Case cases[] = {
      {"columns split, weights [k, n]", "bf16[11,300]", "bf16[300,700]", "bf16[11,700]",
       "lhs_contracting_dims={1}, rhs_contracting_dims={0}"},
      {"weights stored [n, k], f32 result", "bf16[11,300]", "bf16[700,300]", "f32[11,700]",
       "lhs_contracting_dims={1}, rhs_contracting_dims={1}"},
      {"transposed left operand", "bf16[300,9]", "bf16[300,260]", "bf16[9,260]",
       "lhs_contracting_dims={0}, rhs_contracting_dims={0}"},
      {"batched", "bf16[4,9,64]", "bf16[4,64,33]", "bf16[4,9,33]",
       "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
       "rhs_contracting_dims={1}"},
      {"one row, many columns", "bf16[1,128]", "bf16[4100,128]", "bf16[1,4100]",
       "lhs_contracting_dims={1}, rhs_contracting_dims={1}"},
      // Gemma-3's q/k/v projections: the heads of the weights are a batch
      // dimension of the rhs alone, the result written per head strided.
      {"heads of the weights", "bf16[1,11,1152]", "bf16[4,1152,256]", "bf16[1,11,4,256]",
       "lhs_contracting_dims={2}, rhs_contracting_dims={1}"},
      // Its transposed form: the lhs's leading dimension is its own batch,
      // both operands read transposed.
      {"leading lhs dimension", "bf16[2,1,1152,256]", "bf16[1,11,1152]", "bf16[2,1,256,1,11]",
       "lhs_contracting_dims={2}, rhs_contracting_dims={2}"},
      {"two contracting dimensions", "bf16[1,11,4,256]", "bf16[4,256,1152]", "bf16[1,11,1152]",
       "lhs_contracting_dims={3,2}, rhs_contracting_dims={1,0}"},
      {"batch between the others", "bf16[4,11,64]", "bf16[64,4,256]", "f32[4,11,256]",
       "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={1}, "
       "rhs_contracting_dims={0}"},
      // f32 that OpenBLAS would need copies for: GPT-2's attention scores.
      {"f32, batch dimensions inside", "f32[1,4,12,64]", "f32[128,4,12,64]", "f32[4,12,1,128]",
       "lhs_batch_dims={1,2}, lhs_contracting_dims={3}, rhs_batch_dims={1,2}, "
       "rhs_contracting_dims={3}"},
      // f32, many tiny products: DLRM's feature interactions.
      {"f32, many tiny products", "f32[300,6,8]", "f32[300,6,6]", "f32[300,8,6]",
       "lhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_batch_dims={0}, "
       "rhs_contracting_dims={1}"},
      // f32 with few rows: GPT-2's batch-4 projections and resnet's
      // classifier.
      {"f32, few rows", "f32[4,300]", "f32[300,700]", "f32[4,700]",
       "lhs_contracting_dims={1}, rhs_contracting_dims={0}"},
      // f32, few columns stored transposed (DLRM's [6272,192] x [15,192]').
      {"f32, few columns stored transposed", "f32[600,200]", "f32[15,200]", "f32[600,15]",
       "lhs_contracting_dims={1}, rhs_contracting_dims={1}"},
      // f32, a weight gradient of few columns summed over a long batch
      // (DLRM's [6272,192]' x [6272,15]).
      {"f32, few columns summed over a long batch", "f32[2000,96]", "f32[2000,15]", "f32[96,15]",
       "lhs_contracting_dims={0}, rhs_contracting_dims={0}"},
      // f32, many rows and few columns of a transposed lhs (GPT-2's
      // logits): run as the transposed product, into scratch. Columns are
      // 1 and 16, the bounds of that route.
      {"f32, transposed product", "f32[96,5000]", "f32[96,3]", "f32[5000,3]",
       "lhs_contracting_dims={0}, rhs_contracting_dims={0}"},
      {"f32, transposed product of 16 columns", "f32[70,4200]", "f32[16,70]", "f32[4200,16]",
       "lhs_contracting_dims={0}, rhs_contracting_dims={1}"},
      {"f32, transposed product of one column", "f32[40,300]", "f32[40,1]", "f32[300,1]",
       "lhs_contracting_dims={0}, rhs_contracting_dims={0}"},
      // bf16 likewise (BERT's [128,30522]' x [128,16]), the result bf16.
      {"bf16, transposed product", "bf16[40,3000]", "bf16[40,8]", "bf16[3000,8]",
       "lhs_contracting_dims={0}, rhs_contracting_dims={0}"},
  };
  for (const Case& c : cases) ExpectMatchesTheInterpreter(c);
}

TEST(OneDnnDot, TakesBf16OperandsThatIndexAsMatrixStacks) {
  auto serves = [](const std::string& lhs, const std::string& rhs, const std::string& dims) {
    std::string text = absl::StrCat("HloModule dot\n\nENTRY e {\n  a = ", lhs,
                                    " parameter(0)\n  b = ", rhs,
                                    " parameter(1)\n  ROOT d = bf16[4,11,256] dot(a, b), ", dims,
                                    "\n}\n");
    absl::StatusOr<std::vector<std::unique_ptr<Module>>> modules = ParseHloText(text, "dot");
    EXPECT_TRUE(modules.ok()) << modules.status();
    return modules.ok() && OneDnnDotServes(*modules->front()->entry()->root());
  };
  const std::string batched = "lhs_batch_dims={0}, lhs_contracting_dims={2}, "
                              "rhs_batch_dims={0}, rhs_contracting_dims={1}";
  EXPECT_TRUE(serves("bf16[4,11,64]", "bf16[4,64,256]", batched));
  // f32 matrix stacks stay with OpenBLAS.
  EXPECT_FALSE(serves("f32[4,11,64]", "f32[4,64,256]", batched));
  // Contracting dimensions with a free one between them do not merge into
  // one k: a permuted copy would be needed.
  EXPECT_FALSE(serves("bf16[4,11,2,32]", "bf16[4,2,256,32]",
                      "lhs_batch_dims={0}, lhs_contracting_dims={2,3}, rhs_batch_dims={0}, "
                      "rhs_contracting_dims={1,3}"));
}

TEST(OneDnn, RefusesProblemsOnlyItsReferenceLoopsTake) {
  if (!OneDnnHasBf16Matmul()) GTEST_SKIP() << "no oneDNN, or no bf16 matmul in it on this host";
  // A result written transposed ([256, 11] with strides {1, 256}): oneDNN
  // 2.6 has only its reference loops for it, hundreds of times slower than
  // OpenBLAS, so Seam refuses it (and asks once).
  std::vector<uint16_t> a(256 * 64, 0x3f80), b(64 * 11, 0x3f80), c(256 * 11);
  const DnnlArray sa{dnnl_bf16, {1, 256, 64}, {256 * 64, 64, 1}};
  const DnnlArray sb{dnnl_bf16, {1, 64, 11}, {64 * 11, 1, 64}};
  const DnnlArray sc{dnnl_bf16, {1, 256, 11}, {256 * 11, 1, 256}};
  for (int call = 0; call < 2; ++call) {
    absl::Status s = OneDnnMatmul(sa, a.data(), sb, b.data(), sc, c.data());
    EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  }
  // The same product into a dense result is taken.
  const DnnlArray dense{dnnl_bf16, {1, 256, 11}, {256 * 11, 11, 1}};
  EXPECT_TRUE(OneDnnMatmul(sa, a.data(), sb, b.data(), dense, c.data()).ok());
  EXPECT_EQ(c[0], 0x4280);  // 64 products of ones
}

}  // namespace
}  // namespace seam::runtime
