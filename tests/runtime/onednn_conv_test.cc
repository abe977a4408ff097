// oneDNN's convolutions against the interpreter on random convolutions
// (random_convolutions.h): every form (forward, data gradient, weight
// gradient) over every dim_labels order, 1-3 spatial dimensions, strides,
// padding, dilations, reversal and groups. Convolutions it has no form of,
// or only reference loops for, are refused (and then run im2col); the
// test also holds it to taking most of them.
#include "seam/runtime/onednn_conv.h"

#include <map>
#include <random>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "random_convolutions.h"
#include "seam/eval/arguments.h"
#include "seam/eval/compare.h"
#include "seam/eval/evaluator.h"
#include "seam/eval/ops.h"
#include "seam/passes/pipeline.h"
#include "seam/runtime/onednn.h"
#include "seam/runtime/thread_pool.h"
#include "seam/text/parser.h"
#include "seam/text/printer.h"

namespace seam::runtime {
namespace {

// Whether oneDNN ran `text`'s root convolution, checked against the
// interpreter; refusals are not failures.
bool RanAndMatched(const std::string& text, uint64_t seed) {
  absl::StatusOr<std::vector<std::unique_ptr<Module>>> modules = ParseHloText(text, "conv");
  EXPECT_TRUE(modules.ok()) << modules.status() << "\n" << text;
  if (!modules.ok()) return false;
  const Computation& entry = *modules->front()->entry();
  const Instruction& conv = *entry.root();
  if (!OneDnnConvolutionServes(conv)) return false;
  std::vector<Literal> arguments = RandomArguments(entry, seed);
  BufferPool pool;
  absl::StatusOr<Literal> got = OneDnnConvolution(pool, conv, arguments[0], arguments[1]);
  if (!got.ok()) {
    EXPECT_EQ(got.status().code(), absl::StatusCode::kUnimplemented) << got.status() << "\n" << text;
    return false;
  }
  Evaluator evaluator;
  evaluator.set_wide_accumulation(true);
  absl::StatusOr<Literal> want = EvalInstruction(conv, {&arguments[0], &arguments[1]}, evaluator);
  EXPECT_TRUE(want.ok()) << want.status();
  if (!want.ok()) return false;
  EXPECT_EQ(DescribeDifferences(*got, *want, &RewriteTolerance, "the convolution"), "") << text;
  return true;
}

TEST(OneDnnConvolution, MatchesTheInterpreterOnRandomConvolutions) {
  if (!LoadOneDnn().ok()) GTEST_SKIP() << "no oneDNN";
  std::mt19937 rng(11);
  int generated = 0, served = 0, ran = 0;
  for (int trial = 0; trial < 300; ++trial) {
    RandomConv conv = GenerateConvolution(rng);
    if (conv.text.find("f64[") != std::string::npos) continue;  // not oneDNN's
    // oneDNN 2.6 convolves bf16 only with AVX-512.
    if (!OneDnnHasBf16Matmul() && conv.text.find("bf16[") != std::string::npos) continue;
    ++generated;
    absl::StatusOr<std::vector<std::unique_ptr<Module>>> modules = ParseHloText(conv.text, "conv");
    ASSERT_TRUE(modules.ok());
    served += OneDnnConvolutionServes(*modules->front()->entry()->root());
    ran += RanAndMatched(conv.text, trial);
  }
  std::printf("oneDNN: %d random f32/bf16 convolutions, %d with a oneDNN form, %d ran\n", generated,
              served, ran);
  // The generator combines what real models never do (strides with input
  // dilation, reversed or grouped weight gradients); about half has a form.
  EXPECT_GT(served, generated / 3);
  EXPECT_GT(ran, served * 9 / 10);
}

// A batch-1 forward convolution whose input outweighs its weights runs as
// bands of output rows, one per thread, each with the padding of the edges
// it meets: windows strided, dilated and padded, input rows no window
// reads, both layouts, groups.
TEST(OneDnnConvolution, BandsOfOutputRowsMatchTheInterpreter) {
  if (!LoadOneDnn().ok()) GTEST_SKIP() << "no oneDNN";
  if (ThreadPool::Global().size() < 2) GTEST_SKIP() << "one thread: nothing is shared out";
  const char* kConvolutions[] = {
      "f32[1,12,12,8] convolution(f32[1,23,23,3] %a, f32[7,7,3,8] %b), window={size=7x7 stride=2x2 "
      "pad=3_3x3_3}, dim_labels=b01f_01io->b01f",
      "f32[1,9,9,4] convolution(f32[1,9,9,4] %a, f32[3,3,4,4] %b), window={size=3x3 pad=1_1x1_1}, "
      "dim_labels=b01f_01io->b01f",
      "f32[1,10,10,3] convolution(f32[1,10,10,2] %a, f32[3,3,2,3] %b), window={size=3x3 "
      "pad=2_2x2_2 rhs_dilate=2x2}, dim_labels=b01f_01io->b01f",
      "f32[1,4,4,4] convolution(f32[1,14,14,3] %a, f32[3,3,3,4] %b), window={size=3x3 stride=3x3}, "
      "dim_labels=b01f_01io->b01f",
      "f32[1,4,16,16] convolution(f32[1,3,16,16] %a, f32[4,3,3,3] %b), window={size=3x3 "
      "pad=1_1x1_1}, dim_labels=bf01_oi01->bf01",
      "f32[1,8,8,6] convolution(f32[1,8,8,6] %a, f32[3,3,1,6] %b), window={size=3x3 pad=1_1x1_1}, "
      "dim_labels=b01f_01io->b01f, feature_group_count=6",
      "f32[1,7,5] convolution(f32[1,9,5] %a, f32[3,5,5] %b), window={size=3 pad=0_0}, "
      "dim_labels=b0f_0io->b0f",
  };
  int seed = 0;
  for (const char* conv : kConvolutions) {
    std::string text = conv;
    const std::string a = text.substr(text.find('(') + 1, text.find(" %a") - text.find('(') - 1);
    const size_t b_at = text.find(", ") + 2;
    const std::string b = text.substr(b_at, text.find(" %b") - b_at);
    text = absl::StrCat("HloModule bands\n\nENTRY e {\n  %a = ", a, " parameter(0)\n  %b = ", b,
                        " parameter(1)\n  ROOT %c = ", text, "\n}\n");
    EXPECT_TRUE(RanAndMatched(text, ++seed)) << text;
  }
}

// Every convolution of the corpus's convolutional models (ResNet-50 in
// NHWC, MobileNetV2 training in NCHW with depthwise and gradient
// convolutions, EfficientNet), as Seam runs them (after the default
// passes, which keep activations channels-last), has a oneDNN form with
// an optimized direct kernel: none is im2col-based, and depthwise ones get
// oneDNN's depthwise kernels, not per-channel GEMMs.
TEST(OneDnnConvolution, TakesEveryConvolutionOfTheCorpus) {
  if (!LoadOneDnn().ok()) GTEST_SKIP() << "no oneDNN";
  const char* kModels[] = {"xla_resnet50_keras_jax_f32.hlo", "xla_mobilenet_v2_ptxla_train.hlo",
                           "hloenv_efficientnet_jax_module_0698.jit__lambda_.256.before_optimizations.txt"};
  for (const char* model : kModels) {
    const std::string path = absl::StrCat(SEAM_SOURCE_ROOT, "/tests/corpus/hlo/", model);
    absl::StatusOr<std::vector<std::unique_ptr<Module>>> modules = ParseHloFile(path);
    ASSERT_TRUE(modules.ok()) << modules.status();
    absl::StatusOr<Pipeline> pipeline = Pipeline::Parse("default");
    ASSERT_TRUE(pipeline.ok()) << pipeline.status();
    for (const auto& module : *modules) ASSERT_TRUE(pipeline->Run(*module).ok()) << model;
    int convolutions = 0;
    std::map<std::string, int> implementations;
    for (const auto& module : *modules) {
      for (const auto& computation : module->computations()) {
        for (const auto& i : computation->instructions()) {
          if (i->opcode() != Opcode::kConvolution) continue;
          ++convolutions;
          absl::StatusOr<std::string> implementation = OneDnnConvolutionImplementation(*i);
          const bool depthwise = i->operand(1)->shape().dim(static_cast<int>(
                                     i->attrs().dim_labels->kernel_input_feature)) == 1;
          if (implementation.ok()) {
            EXPECT_FALSE(absl::StrContains(*implementation, "gemm:")) << model << " " << PrintInstruction(*i);
            EXPECT_FALSE(depthwise && absl::StrContains(*implementation, "gemm")) << PrintInstruction(*i);
          }
          EXPECT_TRUE(implementation.ok()) << model << " " << PrintInstruction(*i) << ": " << implementation.status();
          if (implementation.ok()) ++implementations[*implementation];
        }
      }
    }
    EXPECT_GT(convolutions, 0) << model;
    std::printf("%s: %d convolutions\n", model, convolutions);
    for (const auto& [name, count] : implementations) std::printf("  %4d  %s\n", count, name.c_str());
  }
}
}  // namespace
}  // namespace seam::runtime
