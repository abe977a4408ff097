// A column reduction's folding on the CPU takes four rows a step, each
// kept element's partial in a register across them (a load and a store of
// the partial per row held it to 20 GB/s), then the chunk's last rows one
// at a time; the partial folds the rows in their order, so a reducer that
// is not associative folds as the interpreter does (ordered_reduction_test).
// The chunks' partials then meet a block of kept elements at a time, each
// chunk's across vector lanes into accumulator arrays, chunk after chunk
// (so in the same order as one kept element at a time). Chunks whose rows
// are not a multiple of four, sums, maxes and bf16 equal the interpreter.
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "backends.h"
#include "gtest/gtest.h"

namespace seam::runtime {
namespace {

// Column sums and maxes of `type`[rows, 3000].
std::string ColumnSumAndMax(const std::string& type, int64_t rows) {
  const std::string x = absl::StrCat(type, "[", rows, ",3000]"), col = type + "[3000]";
  return absl::StrCat("HloModule columns\nadd {\n  a = ", type, "[] parameter(0)\n  b = ", type,
                      "[] parameter(1)\n  ROOT s = ", type, "[] add(a, b)\n}\nmax {\n  a = ", type,
                      "[] parameter(0)\n  b = ", type, "[] parameter(1)\n  ROOT m = ", type,
                      "[] maximum(a, b)\n}\nENTRY e {\n  x = ", x, " parameter(0)\n  zero = ", type,
                      "[] constant(0)\n  ninf = ", type, "[] constant(-inf)\n  s = ", col,
                      " reduce(x, zero), dimensions={0}, to_apply=add\n  m = ", col,
                      " reduce(x, ninf), dimensions={0}, to_apply=max\n  ROOT t = (", col, ", ",
                      col, ") tuple(s, m)\n}\n");
}

TEST(ColumnFolding, FourRowsAStepThroughARegisterThenTheRest) {
  const std::string kernels =
      testing::CpuKernelsChecked(ColumnSumAndMax("f32", 128), "column_folding");
  EXPECT_TRUE(absl::StrContains(kernels, "q < q0 + (q1 - q0) / 4 * 4; q += 4) {")) << kernels;
  EXPECT_TRUE(absl::StrContains(kernels, "for (int64_t q = q0 + (q1 - q0) / 4 * 4; q < q1; ++q)"))
      << kernels;
  EXPECT_TRUE(absl::StrContains(kernels, "float fold0 = part0[p];")) << kernels;
  EXPECT_TRUE(absl::StrContains(kernels, "part0[p] = fold0;")) << kernels;
  // The fourth row's index, once per step of four (before the vector loop).
  EXPECT_TRUE(absl::StrContains(kernels, "const int64_t inv2 = (q + 3);")) << kernels;
}

TEST(ColumnFolding, PartialsMeetABlockOfKeptElementsAcrossLanes) {
  compiler::CpuOptions two_cores;
  two_cores.plan.device.units = 2;
  const std::string kernels =
      testing::CpuKernelsChecked(ColumnSumAndMax("f32", 128), "column_combining", two_cores);
  EXPECT_TRUE(absl::StrContains(kernels, "float combined0[256];")) << kernels;
  EXPECT_TRUE(absl::StrContains(kernels, "for (int64_t chunk = 0; chunk < 2; ++chunk) {"))
      << kernels;
  EXPECT_TRUE(absl::StrContains(kernels, "combined1[p - p0] = reducer1(combined1[p - p0], b"))
      << kernels;
  // 3000 kept elements, at least 4 blocks a core: blocks of 256, the last
  // holding 184.
  EXPECT_TRUE(absl::StrContains(kernels, "const int64_t p1 = std::min<int64_t>(3000, p0 + 256);"))
      << kernels;
  // 768 kept elements: blocks of 96.
  const std::string narrow = testing::CpuKernelsChecked(
      absl::StrReplaceAll(ColumnSumAndMax("f32", 128), {{"3000", "768"}}), "column_combining_768",
      two_cores);
  EXPECT_TRUE(absl::StrContains(narrow, "const int64_t p1 = std::min<int64_t>(768, p0 + 96);"))
      << narrow;
}

TEST(ColumnFolding, ChunksOfAnyRowCountEqualTheInterpreter) {
  for (int64_t rows : {1, 3, 5, 127, 130}) {
    for (const std::string type : {"f32", "bf16"}) {
      SCOPED_TRACE(absl::StrCat(type, "[", rows, ",3000]"));
      EXPECT_FALSE(testing::CpuKernelsChecked(ColumnSumAndMax(type, rows),
                                              absl::StrCat("column_folding_", type, "_", rows))
                       .empty());
    }
  }
}

}  // namespace
}  // namespace seam::runtime
