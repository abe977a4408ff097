// The CPU emitter calls the prelude's vector-ABI twins (seam_exp_simd,
// seam_tanh_simd) only in vectorized loops without branches or selects
// (GCC 12 would otherwise leave them scalar, a call per element), and the
// inline functions elsewhere; both kinds of loop equal the interpreter, and
// every loop that calls a twin is vectorized. So are the loops of JAX's ELU
// and softplus, around the inline expm1 and log1p. All of it holds on the
// host's instruction set and on AVX2 (where the twins are the inline
// functions: hand-written AVX2 twins measured no faster).
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <set>
#include <tuple>

#include "../common/hlo_text.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "backends.h"
#include "gtest/gtest.h"
#include "instruction_sets.h"
#include "seam/compiler/cpu_compiler.h"
#include "seam/eval/arguments.h"
#include "seam/runtime/executable.h"
#include "seam/runtime/jit.h"
#include "seam/text/parser.h"
#include "seam/text/source_file.h"

namespace seam::runtime {
namespace {

std::filesystem::path ScratchPath(const std::string& name) {
  return std::filesystem::temp_directory_path() /
         ("seam_simd_twins_" + name + "_" + std::to_string(::getpid()));
}

struct Generated {
  std::unique_ptr<Executable> executable;  // null when compiling failed
  std::string source;                      // the C++ file compiled for it
};

// `module` compiled for the CPU (stitched), with its generated source.
Generated CompileKeepingSource(const Module& module, const std::string& name,
                               const CompilerOptions& compiler = {}) {
  compiler::CpuOptions options;
  options.compiler = compiler;
  options.dump_to = ScratchPath(name).string();
  absl::StatusOr<compiler::Compiled<runtime::Executable>> executable =
      compiler::CompileForCpu(module, options);
  EXPECT_TRUE(executable.ok()) << executable.status();
  Generated generated;
  if (executable.ok()) generated.executable = std::move(executable->executable);
  generated.source = testing::ReadFile(options.dump_to + "/kernels.cc");
  std::filesystem::remove_all(options.dump_to);
  return generated;
}

// The generated kernels of `text` (the prelude left out), after checking
// the compiled module against the interpreter.
std::string KernelsOf(const std::string& text, const std::string& name) {
  std::unique_ptr<Module> module = testing::ParseFirst(text, name);
  if (module == nullptr) return "";
  Generated generated = CompileKeepingSource(*module, name);
  if (generated.executable == nullptr) return "";
  std::vector<Literal> arguments = RandomArguments(*module->entry(), 0);
  testing::ExpectSameAsInterpreter(*generated.executable, *module, arguments);
  size_t kernels = generated.source.find("extern \"C\" __attribute__((visibility(\"default\")))");
  EXPECT_NE(kernels, std::string::npos) << "no kernel in the dump";
  return kernels == std::string::npos ? "" : generated.source.substr(kernels);
}

// The lines (1-based, first and last, pragma included) of each `omp simd`
// loop in `source` whose body holds `call`.
std::vector<std::pair<int, int>> LoopsCalling(const std::string& source, const std::string& call) {
  std::vector<std::string> lines = absl::StrSplit(source, '\n');
  std::vector<std::pair<int, int>> loops;
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    if (!absl::StartsWith(absl::StripLeadingAsciiWhitespace(lines[i]), "#pragma omp simd")) {
      continue;
    }
    int depth = 0;
    bool calls = false;
    size_t j = i + 1;
    for (; j < lines.size(); ++j) {
      for (char c : lines[j]) depth += c == '{' ? 1 : c == '}' ? -1 : 0;
      calls |= absl::StrContains(lines[j], call);
      if (depth == 0) break;
    }
    if (calls) loops.push_back({static_cast<int>(i) + 1, static_cast<int>(j) + 1});
  }
  return loops;
}

// The lines at which GCC reports a vectorized loop when it compiles
// `source` with `jit`'s flags (an `omp simd` loop's pragma, or a line of
// its body).
std::set<int> VectorizedLoopLines(const std::string& source, const std::string& name,
                                  const CompilerOptions& jit) {
  std::filesystem::path path = ScratchPath(name).string() + ".cc";
  std::ofstream(path) << source;
  std::string command =
      absl::StrCat(jit.compiler, " ", absl::StrJoin(jit.flags, " "),
                   " -c -o /dev/null -fopt-info-vec-optimized ", path.string(), " 2>&1");
  std::set<int> lines;
  FILE* pipe = ::popen(command.c_str(), "r");
  EXPECT_NE(pipe, nullptr) << command;
  if (pipe == nullptr) return lines;
  const std::regex vectorized(":([0-9]+):[0-9]+: optimized: loop vectorized");
  char buffer[4096];
  while (std::fgets(buffer, sizeof(buffer), pipe) != nullptr) {
    std::cmatch match;
    if (std::regex_search(buffer, match, vectorized)) lines.insert(std::stoi(match[1].str()));
  }
  EXPECT_EQ(::pclose(pipe), 0) << command;
  std::filesystem::remove(path);
  return lines;
}

// Expects every loop of `source` calling `call` to be vectorized when
// compiled for each tested instruction set; how many there are.
int ExpectLoopsCallingVectorized(const std::string& source, const std::string& name,
                                 const std::string& call) {
  std::vector<std::pair<int, int>> loops = LoopsCalling(source, call);
  if (loops.empty()) return 0;
  for (const testing::InstructionSet& set : testing::TestedInstructionSets()) {
    std::set<int> vectorized = VectorizedLoopLines(source, name, set.compiler);
    for (auto [first, last] : loops) {
      auto report = vectorized.lower_bound(first);
      EXPECT_TRUE(report != vectorized.end() && *report <= last)
          << name << " on " << set.name << ": the loop at lines " << first << "-" << last
          << " calls " << call << " but is not vectorized";
    }
  }
  return static_cast<int>(loops.size());
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

// ELU as jax.nn.elu writes it: expm1 of the negative part, selected.
constexpr char kEluExpm1[] = R"(HloModule elu_expm1
ENTRY e {
  x = f32[64,1000] parameter(0)
  z = f32[] constant(0)
  zb = f32[64,1000] broadcast(z), dimensions={}
  positive = pred[64,1000] compare(x, zb), direction=GT
  safe = f32[64,1000] select(positive, zb, x)
  em = f32[64,1000] exponential-minus-one(safe)
  ROOT y = f32[64,1000] select(positive, x, em)
}
)";

// Softplus as jax.nn.softplus writes it: log1p(exp(-|x|)) + max(x, 0).
constexpr char kSoftplus[] = R"(HloModule softplus
ENTRY e {
  x = f32[64,1000] parameter(0)
  z = f32[] constant(0)
  zb = f32[64,1000] broadcast(z), dimensions={}
  a = f32[64,1000] abs(x)
  n = f32[64,1000] negate(a)
  e = f32[64,1000] exponential(n)
  l = f32[64,1000] log-plus-one(e)
  m = f32[64,1000] maximum(x, zb)
  ROOT y = f32[64,1000] add(l, m)
}
)";

// A product of exps along rows: a general reducer, so a scalar loop.
constexpr char kProductOfExps[] = R"(HloModule product_of_exps
mul {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] multiply(a, b)
}
ENTRY e {
  x = f32[64,100] parameter(0)
  one = f32[] constant(1)
  tenth = f32[] constant(0.01)
  tb = f32[64,100] broadcast(tenth), dimensions={}
  small = f32[64,100] multiply(x, tb)
  e = f32[64,100] exponential(small)
  ROOT p = f32[64] reduce(e, one), dimensions={1}, to_apply=mul
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

TEST(SimdTwins, ScalarLoopsCallTheInlineExp) {
  std::string kernels = KernelsOf(kProductOfExps, "product_of_exps");
  EXPECT_NE(kernels.find("seam_exp("), std::string::npos) << kernels;
  EXPECT_EQ(kernels.find("seam_exp_simd("), std::string::npos) << kernels;
}

TEST(SimdTwins, LoopsWithASelectCallTheInlineExp) {
  std::string kernels = KernelsOf(kElu, "elu");
  EXPECT_NE(kernels.find("seam_exp("), std::string::npos) << kernels;
  EXPECT_EQ(kernels.find("seam_exp_simd("), std::string::npos) << kernels;
}

// A loop summing a row of two vectors or fewer computes the inline exp (a
// twin's call would save and restore the loop's registers around each
// vector), vectorized all the same; rows of four vectors call the twin,
// and so do bf16 rows (GCC vectorizes their inline exp at half width).
TEST(SimdTwins, ShortRowsCallTheInlineExpInVectorizedLoops) {
  const std::string short_rows = testing::SoftmaxText("f32", 2000, 32);
  std::string kernels = KernelsOf(short_rows, "softmax_32");
  EXPECT_NE(kernels.find("seam_exp("), std::string::npos) << kernels;
  EXPECT_EQ(kernels.find("seam_exp_simd("), std::string::npos) << kernels;
  std::unique_ptr<Module> parsed = testing::ParseFirst(short_rows, "softmax_32");
  ASSERT_NE(parsed, nullptr);
  absl::StatusOr<std::string> source = compiler::RenderForCpu(*parsed, {});
  ASSERT_TRUE(source.ok()) << source.status();
  EXPECT_GE(ExpectLoopsCallingVectorized(*source, "softmax_32", "seam_exp("), 1);

  // Rows of 32 read from bf16 and summed in f32 (DIEN's at bf16).
  const std::string bf16_rows = absl::StrReplaceAll(
      short_rows, {{"x = f32[2000,32] parameter(0)",
                    "x16 = bf16[2000,32] parameter(0)\n  x = f32[2000,32] convert(x16)"}});
  for (const auto& [name, text] :
       {std::pair<std::string, std::string>{"softmax_64", testing::SoftmaxText("f32", 1000, 64)},
        {"softmax_bf16_in", bf16_rows}}) {
    kernels = KernelsOf(text, name);
    EXPECT_NE(kernels.find("seam_exp_simd("), std::string::npos) << name << kernels;
    EXPECT_EQ(kernels.find("seam_exp("), std::string::npos) << name << kernels;
  }
}

// A twin beside a select, or in a loop GCC leaves scalar for another
// reason, would cost a call per element: every loop calling one, over the
// bench workloads and the modules above, is vectorized.
TEST(SimdTwins, EveryLoopCallingATwinIsVectorized) {
  std::vector<std::pair<std::string, std::string>> modules = {
      {"softmax", kSoftmax}, {"gelu", kGelu}, {"gelu_bf16", kGeluBf16}, {"elu", kElu}};
  const std::filesystem::path workloads = SEAM_SOURCE_ROOT "/bench/workloads";
  for (const auto& entry : std::filesystem::directory_iterator(workloads)) {
    if (entry.path().extension() != ".hlo") continue;
    modules.push_back({entry.path().stem().string(), testing::ReadFile(entry.path())});
  }
  int checked = 0;
  for (const auto& [name, text] : modules) {
    std::unique_ptr<Module> parsed = testing::ParseFirst(text, name);
    ASSERT_NE(parsed, nullptr);
    // The source alone: it is compiled below, once for each instruction set.
    absl::StatusOr<std::string> source = compiler::RenderForCpu(*parsed, {});
    ASSERT_TRUE(source.ok()) << source.status();
    checked += ExpectLoopsCallingVectorized(*source, name, "_simd(");
  }
  // softmax's exp pass, GELU's loops and more among the workloads.
  EXPECT_GE(checked, 5);
}

// An AVX-512 host's tests compile kernels for AVX2 as well, and they equal
// the interpreter there too (their loops' vectorization is checked above
// and below).
TEST(SimdTwins, Avx2KernelsEqualTheInterpreter) {
  std::optional<testing::InstructionSet> avx2 = testing::Avx2BesideTheHost();
  if (!avx2) GTEST_SKIP() << "no AVX-512 host: AVX2, if present, is the host's own, tested above";
  for (const auto& [name, text] :
       std::vector<std::pair<std::string, std::string>>{{"softmax", kSoftmax},
                                                        {"gelu", kGelu},
                                                        {"gelu_bf16", kGeluBf16},
                                                        {"elu", kElu},
                                                        {"elu_expm1", kEluExpm1},
                                                        {"softplus", kSoftplus}}) {
    std::unique_ptr<Module> parsed = testing::ParseFirst(text, name);
    ASSERT_NE(parsed, nullptr);
    Generated generated = CompileKeepingSource(*parsed, name, avx2->compiler);
    ASSERT_NE(generated.executable, nullptr) << name;
    std::vector<Literal> arguments = RandomArguments(*parsed->entry(), 0);
    testing::ExpectSameAsInterpreter(*generated.executable, *parsed, arguments);
  }
}

// libm's expm1 and log1p are calls per element: the prelude's inline ones
// leave these loops vectorized (and equal to the interpreter), as the
// inline exp leaves ELU's, beside its select.
TEST(SimdTwins, EluAndSoftplusLoopsAreVectorized) {
  for (const auto& [name, text, call] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"elu", kElu, "seam_exp("},
           {"elu_expm1", kEluExpm1, "seam_expm1("},
           {"softplus", kSoftplus, "seam_log1p("}}) {
    std::unique_ptr<Module> parsed = testing::ParseFirst(text, name);
    ASSERT_NE(parsed, nullptr);
    Generated generated = CompileKeepingSource(*parsed, name);
    ASSERT_NE(generated.executable, nullptr);
    std::vector<Literal> arguments = RandomArguments(*parsed->entry(), 0);
    testing::ExpectSameAsInterpreter(*generated.executable, *parsed, arguments);
    EXPECT_GT(ExpectLoopsCallingVectorized(generated.source, name, call), 0)
        << name << ": no loop calls " << call;
  }
}

}  // namespace
}  // namespace seam::runtime
