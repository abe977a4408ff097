// The BLAS convolution against the interpreter's on random convolutions:
// every dim_labels order, 1-3 spatial dimensions, strides, padding, base
// and window dilation, reversal, feature groups (depthwise included) and
// batch groups, f32 / f64 / bf16. Tolerance: RewriteTolerance (the GEMM
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

namespace seam::runtime {
namespace {

struct RandomConv {
  std::string text;  // the module
  std::string description;
};

std::string Dims(const std::vector<int64_t>& dims) { return absl::StrJoin(dims, ","); }

// Lays `named` sizes out in a random dimension order; returns the label.
std::string Place(std::mt19937& rng, const std::vector<std::pair<char, int64_t>>& named,
                  std::vector<int64_t>& dims) {
  std::vector<std::pair<char, int64_t>> order = named;
  std::shuffle(order.begin(), order.end(), rng);
  std::string label;
  dims.clear();
  for (auto& [c, size] : order) {
    label += c;
    dims.push_back(size);
  }
  return label;
}

RandomConv Generate(std::mt19937& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const int rank = pick(1, 3);
  const char* type = std::array{"f32", "f32", "f64", "bf16"}[pick(0, 3)];
  int64_t groups = 1, batch_groups = 1;
  int64_t kernel_in = pick(1, 5), out_per_group = pick(1, 4), batch = pick(1, 3);
  switch (pick(0, 3)) {
    case 1: groups = pick(2, 3); break;                  // grouped
    case 2: groups = pick(2, 6), kernel_in = 1; break;   // depthwise
    case 3: batch_groups = pick(2, 3); break;            // weight-gradient style
    default: break;
  }
  const int64_t in_features = kernel_in * groups;
  const int64_t out_features = out_per_group * groups * batch_groups;
  const int64_t in_batch = batch * batch_groups;
  std::vector<std::pair<char, int64_t>> in{{'b', in_batch}, {'f', in_features}};
  std::vector<std::pair<char, int64_t>> kernel{{'i', kernel_in}, {'o', out_features}};
  std::vector<std::pair<char, int64_t>> out{{'b', batch}, {'f', out_features}};
  std::vector<std::string> size, stride, pad, lhs, rhs, reversal;
  for (int s = 0; s < rank; ++s) {
    int64_t n = pick(1, rank == 3 ? 5 : 9), k = pick(1, 3), st = pick(1, 2);
    int64_t lo = pick(0, 2), hi = pick(0, 2), ld = pick(0, 3) == 0 ? 2 : 1, rd = pick(0, 3) == 0 ? 2 : 1;
    int64_t padded = (n - 1) * ld + 1 + lo + hi, window = (k - 1) * rd + 1;
    if (padded < window) hi += window - padded, padded = window;
    int64_t o = (padded - window) / st + 1;
    char digit = static_cast<char>('0' + s);
    in.push_back({digit, n});
    kernel.push_back({digit, k});
    out.push_back({digit, o});
    size.push_back(absl::StrCat(k));
    stride.push_back(absl::StrCat(st));
    pad.push_back(absl::StrCat(lo, "_", hi));
    lhs.push_back(absl::StrCat(ld));
    rhs.push_back(absl::StrCat(rd));
    reversal.push_back(pick(0, 3) == 0 ? "1" : "0");
  }
  std::vector<int64_t> in_dims, kernel_dims, out_dims;
  std::string labels = absl::StrCat(Place(rng, in, in_dims), "_", Place(rng, kernel, kernel_dims),
                                    "->", Place(rng, out, out_dims));
  std::string window = absl::StrCat(
      "size=", absl::StrJoin(size, "x"), " stride=", absl::StrJoin(stride, "x"), " pad=",
      absl::StrJoin(pad, "x"), " lhs_dilate=", absl::StrJoin(lhs, "x"), " rhs_dilate=",
      absl::StrJoin(rhs, "x"), " rhs_reversal=", absl::StrJoin(reversal, "x"));
  std::string attrs = absl::StrCat("window={", window, "}, dim_labels=", labels);
  if (groups > 1) absl::StrAppend(&attrs, ", feature_group_count=", groups);
  if (batch_groups > 1) absl::StrAppend(&attrs, ", batch_group_count=", batch_groups);
  RandomConv conv;
  conv.text = absl::StrCat("HloModule conv\n\nENTRY e {\n  a = ", type, "[", Dims(in_dims),
                           "] parameter(0)\n  b = ", type, "[", Dims(kernel_dims),
                           "] parameter(1)\n  ROOT c = ", type, "[", Dims(out_dims),
                           "] convolution(a, b), ", attrs, "\n}\n");
  conv.description = attrs;
  return conv;
}

TEST(BlasConvolution, MatchesTheInterpreterOnRandomConvolutions) {
  std::mt19937 rng(7);
  int checked = 0;
  for (int trial = 0; trial < 400; ++trial) {
    RandomConv conv = Generate(rng);
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
