// Short rows on the CPU: a row's sum of f32 or f64 up to 128 elements
// (kLaneSumRow) adds into 16 lanes combined as a tree (seam_lane_sum)
// instead of OpenMP's simd reduction, which combines its lanes one at a
// time; a row shorter than the lanes, or a remainder past the last block
// of 16, goes into the first lanes. Longer rows and half-precision sums
// keep the simd reduction. Both equal the interpreter.
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "backends.h"
#include "gtest/gtest.h"
#include "seam/compiler/cpu_compiler.h"
#include "seam/eval/arguments.h"
#include "seam/runtime/executable.h"

namespace seam::runtime {
namespace {

// A softmax over rows of `rows` x `length` elements of `type`.
std::string Softmax(const std::string& type, int64_t rows, int64_t length) {
  const std::string x = absl::StrCat(type, "[", rows, ",", length, "]"),
                    row = absl::StrCat(type, "[", rows, "]");
  return absl::StrCat("HloModule softmax\nadd {\n  a = ", type, "[] parameter(0)\n  b = ", type,
                      "[] parameter(1)\n  ROOT s = ", type, "[] add(a, b)\n}\nmax {\n  a = ", type,
                      "[] parameter(0)\n  b = ", type, "[] parameter(1)\n  ROOT m = ", type,
                      "[] maximum(a, b)\n}\nENTRY e {\n  x = ", x, " parameter(0)\n  ninf = ", type,
                      "[] constant(-inf)\n  zero = ", type, "[] constant(0)\n  m = ", row,
                      " reduce(x, ninf), dimensions={1}, to_apply=max\n  mb = ", x,
                      " broadcast(m), dimensions={0}\n  d = ", x, " subtract(x, mb)\n  e = ", x,
                      " exponential(d)\n  s = ", row,
                      " reduce(e, zero), dimensions={1}, to_apply=add\n  sb = ", x,
                      " broadcast(s), dimensions={0}\n  ROOT y = ", x, " divide(e, sb)\n}\n");
}

// The kernels' C++ of `text` compiled for the CPU, after checking the
// result against the interpreter.
std::string KernelsChecked(const std::string& text, const std::string& name) {
  std::unique_ptr<Module> module = testing::ParseFirst(text, name);
  if (module == nullptr) return "";
  compiler::CpuOptions options;
  options.dump_to = ::testing::TempDir() + "/seam_short_rows_" + name;
  absl::StatusOr<compiler::Compiled<Executable>> compiled =
      compiler::CompileForCpu(*module, options);
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  if (!compiled.ok()) return "";
  std::vector<Literal> arguments = RandomArguments(*module->entry(), /*seed=*/5);
  testing::ExpectSameAsInterpreter(*compiled->executable, *module, arguments);
  return testing::ReadFile(options.dump_to + "/kernels.cc");
}

TEST(ShortRows, FloatSumsAddLanesAsATree) {
  // 40 = two blocks and a remainder of 8; 16 = one block; 7 = a remainder
  // alone.
  for (const auto& [type, rows, length] : std::vector<std::tuple<std::string, int64_t, int64_t>>{
           {"f32", 300, 40}, {"f64", 100, 16}, {"f32", 50, 7}}) {
    const std::string name = absl::StrCat(type, "_", length);
    const std::string kernels = KernelsChecked(Softmax(type, rows, length), name);
    EXPECT_TRUE(absl::StrContains(kernels, "seam_lane_sum(lanes0)")) << name << "\n" << kernels;
    EXPECT_FALSE(absl::StrContains(kernels, "reduction(+:")) << name << "\n" << kernels;
  }
}

TEST(ShortRows, LongRowsAndHalfPrecisionSumsKeepTheSimdReduction) {
  for (const auto& [type, rows, length] :
       std::vector<std::tuple<std::string, int64_t, int64_t>>{{"f32", 64, 256}, {"bf16", 64, 32}}) {
    const std::string name = absl::StrCat(type, "_", length);
    const std::string kernels = KernelsChecked(Softmax(type, rows, length), name);
    EXPECT_FALSE(absl::StrContains(kernels, "seam_lane_sum(lanes")) << name << "\n" << kernels;
    EXPECT_TRUE(absl::StrContains(kernels, "reduction(+:acc0)")) << name << "\n" << kernels;
  }
}

}  // namespace
}  // namespace seam::runtime
