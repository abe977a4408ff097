// The CPU emitter calls the prelude's vector-ABI twins (seam_exp_simd,
// seam_tanh_simd) only in loops without branches or selects, which GCC 12
// would otherwise leave scalar, and the inline functions elsewhere; both
// kinds of loop equal the interpreter.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"
#include "seam/eval/arguments.h"
#include "seam/eval/compare.h"
#include "seam/eval/evaluator.h"
#include "seam/runtime/executable.h"
#include "seam/text/parser.h"

namespace seam::runtime {
namespace {

// The generated kernels of `text` (stitched; the prelude left out), after
// checking the compiled module against the interpreter.
std::string KernelsOf(const std::string& text, const std::string& name) {
  absl::StatusOr<std::vector<std::unique_ptr<Module>>> modules = ParseHloText(text, name);
  EXPECT_TRUE(modules.ok()) << modules.status();
  if (!modules.ok()) return "";
  Module& module = *modules->front();
  std::vector<Literal> arguments = RandomArguments(*module.entry(), 0);
  Evaluator oracle;
  oracle.set_wide_accumulation(true);
  absl::StatusOr<Literal> expected = oracle.Run(module, arguments);
  EXPECT_TRUE(expected.ok()) << expected.status();
  ExecutableOptions options;
  options.dump_to = (std::filesystem::temp_directory_path() /
                     ("seam_simd_twins_" + name + "_" + std::to_string(::getpid())))
                        .string();
  absl::StatusOr<std::unique_ptr<Executable>> executable = Executable::Compile(module, options);
  EXPECT_TRUE(executable.ok()) << executable.status();
  if (!expected.ok() || !executable.ok()) return "";
  absl::StatusOr<Literal> got = (*executable)->Run(arguments);
  EXPECT_TRUE(got.ok()) << got.status();
  if (got.ok()) {
    EXPECT_EQ(DescribeDifferences(*got, *expected, &RewriteTolerance, "the result"), "");
  }
  std::ifstream file(options.dump_to + "/kernels.cc");
  std::stringstream source;
  source << file.rdbuf();
  std::filesystem::remove_all(options.dump_to);
  std::string all = source.str();
  size_t kernels = all.find("extern \"C\" __attribute__((visibility(\"default\")))");
  EXPECT_NE(kernels, std::string::npos) << "no kernel in the dump";
  return kernels == std::string::npos ? "" : all.substr(kernels);
}

constexpr char kSoftmax[] = R"(HloModule softmax
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[64,1000] parameter(0)
  ninf = f32[] constant(-inf)
  z = f32[] constant(0)
  m = f32[64] reduce(x, ninf), dimensions={1}, to_apply=max
  mb = f32[64,1000] broadcast(m), dimensions={0}
  d = f32[64,1000] subtract(x, mb)
  e = f32[64,1000] exponential(d)
  s = f32[64] reduce(e, z), dimensions={1}, to_apply=add
  sb = f32[64,1000] broadcast(s), dimensions={0}
  ROOT y = f32[64,1000] divide(e, sb)
}
)";

// ELU: exp beside a select in one loop.
constexpr char kElu[] = R"(HloModule elu
ENTRY e {
  x = f32[64,1000] parameter(0)
  z = f32[] constant(0)
  zb = f32[64,1000] broadcast(z), dimensions={}
  one = f32[] constant(1)
  ob = f32[64,1000] broadcast(one), dimensions={}
  positive = pred[64,1000] compare(x, zb), direction=GT
  e = f32[64,1000] exponential(x)
  em = f32[64,1000] subtract(e, ob)
  ROOT y = f32[64,1000] select(positive, x, em)
}
)";

// GELU's tanh form: tanh in a loop of arithmetic.
constexpr char kGelu[] = R"(HloModule gelu
ENTRY e {
  x = f32[64,1000] parameter(0)
  half = f32[] constant(0.5)
  hb = f32[64,1000] broadcast(half), dimensions={}
  one = f32[] constant(1)
  ob = f32[64,1000] broadcast(one), dimensions={}
  c = f32[] constant(0.7978845608)
  cb = f32[64,1000] broadcast(c), dimensions={}
  k = f32[] constant(0.044715)
  kb = f32[64,1000] broadcast(k), dimensions={}
  x2 = f32[64,1000] multiply(x, x)
  x3 = f32[64,1000] multiply(x2, x)
  kx3 = f32[64,1000] multiply(kb, x3)
  inner = f32[64,1000] add(x, kx3)
  scaled = f32[64,1000] multiply(cb, inner)
  t = f32[64,1000] tanh(scaled)
  t1 = f32[64,1000] add(t, ob)
  hx = f32[64,1000] multiply(hb, x)
  ROOT y = f32[64,1000] multiply(hx, t1)
}
)";

// The same in bf16: the store's rounding is branch-free too.
constexpr char kGeluBf16[] = R"(HloModule gelu_bf16
ENTRY e {
  xh = bf16[64,1000] parameter(0)
  x = f32[64,1000] convert(xh)
  c = f32[] constant(0.7978845608)
  cb = f32[64,1000] broadcast(c), dimensions={}
  one = f32[] constant(1)
  ob = f32[64,1000] broadcast(one), dimensions={}
  scaled = f32[64,1000] multiply(cb, x)
  t = f32[64,1000] tanh(scaled)
  t1 = f32[64,1000] add(t, ob)
  y = f32[64,1000] multiply(x, t1)
  ROOT yh = bf16[64,1000] convert(y)
}
)";

TEST(SimdTwins, BranchFreeLoopsCallTheVectorExp) {
  std::string kernels = KernelsOf(kSoftmax, "softmax");
  EXPECT_NE(kernels.find("seam_exp_simd("), std::string::npos) << kernels;
  EXPECT_EQ(kernels.find("seam_exp("), std::string::npos) << kernels;
}

TEST(SimdTwins, BranchFreeLoopsCallTheVectorTanh) {
  std::string kernels = KernelsOf(kGelu, "gelu");
  EXPECT_NE(kernels.find("seam_tanh_simd("), std::string::npos) << kernels;
  EXPECT_EQ(kernels.find("seam_tanh("), std::string::npos) << kernels;
}

TEST(SimdTwins, Bf16StoresKeepLoopsBranchFree) {
  std::string kernels = KernelsOf(kGeluBf16, "gelu_bf16");
  EXPECT_NE(kernels.find("seam_tanh_simd("), std::string::npos) << kernels;
  EXPECT_NE(kernels.find("seam_float_to_bf16("), std::string::npos) << kernels;
}

TEST(SimdTwins, LoopsWithASelectCallTheInlineExp) {
  std::string kernels = KernelsOf(kElu, "elu");
  EXPECT_NE(kernels.find("seam_exp("), std::string::npos) << kernels;
  EXPECT_EQ(kernels.find("seam_exp_simd("), std::string::npos) << kernels;
}

}  // namespace
}  // namespace seam::runtime
