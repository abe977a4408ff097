// Column strips on the CPU: a kernel whose column reductions feed passes
// over the same rows runs as one parallel loop over strips of columns,
// each task folding every row of its columns and then running the passes
// on them, when its input is too large for the last-level cache to hold
// between phases. A read of another stage's value at another column (a
// reverse) keeps the phases; so does an input the cache holds. The
// results equal the interpreter's, with rows that are no multiple of the
// four a fold takes a step and columns that are no multiple of a strip.
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "backends.h"
#include "gtest/gtest.h"

namespace seam::runtime {
namespace {

// Planned for two cores of 1 MB of L2 sharing `cache_bytes` of L3.
compiler::CpuOptions WithCache(int64_t cache_bytes) {
  compiler::CpuOptions options;
  options.plan.device.units = 2;
  options.plan.device.onchip_bytes_per_unit = int64_t{1} << 20;
  options.plan.device.last_level_cache_bytes = cache_bytes;
  return options;
}

// x / (column sums of |x| + eps) and the column means of x, over
// `type`[rows, columns]; `reverse` reads the sums of |x| back to front.
std::string ColumnNormalized(const std::string& type, int64_t rows, int64_t columns,
                             bool reverse = false) {
  const std::string x = absl::StrCat(type, "[", rows, ",", columns, "]"),
                    col = absl::StrCat(type, "[", columns, "]");
  return absl::StrCat(
      "HloModule strips\nadd {\n  a = ", type, "[] parameter(0)\n  b = ", type,
      "[] parameter(1)\n  ROOT s = ", type, "[] add(a, b)\n}\nENTRY e {\n  x = ", x,
      " parameter(0)\n  ax = ", x, " abs(x)\n  zero = ", type, "[] constant(0)\n  sa = ", col,
      " reduce(ax, zero), dimensions={0}, to_apply=add\n  ra = ", col,
      reverse ? " reverse(sa), dimensions={0}\n" : " copy(sa)\n", "  eps = ", type,
      "[] constant(1e-6)\n  ebc = ", col, " broadcast(eps), dimensions={}\n  d = ", col,
      " add(ra, ebc)\n  db = ", x, " broadcast(d), dimensions={1}\n  y = ", x,
      " divide(x, db)\n  s = ", col, " reduce(x, zero), dimensions={0}, to_apply=add\n  n = ",
      type, "[] constant(", rows, ")\n  nb = ", col, " broadcast(n), dimensions={}\n  m = ", col,
      " divide(s, nb)\n  ROOT t = (", x, ", ", col, ") tuple(y, m)\n}\n");
}

// A batch norm's statistics over NHWC f32[4,5,7,96] (mean, then the mean
// of squared deviations from it) and the normalized output.
std::string BatchNormNhwc() {
  return R"(HloModule strips_nhwc
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4,5,7,96] parameter(0)
  zero = f32[] constant(0)
  n = f32[] constant(140)
  nb = f32[96] broadcast(n), dimensions={}
  sum = f32[96] reduce(x, zero), dimensions={0,1,2}, to_apply=add
  mean = f32[96] divide(sum, nb)
  mb = f32[4,5,7,96] broadcast(mean), dimensions={3}
  d = f32[4,5,7,96] subtract(x, mb)
  d2 = f32[4,5,7,96] multiply(d, d)
  ss = f32[96] reduce(d2, zero), dimensions={0,1,2}, to_apply=add
  var = f32[96] divide(ss, nb)
  eps = f32[] constant(1e-5)
  eb = f32[96] broadcast(eps), dimensions={}
  ve = f32[96] add(var, eb)
  rs = f32[96] rsqrt(ve)
  rb = f32[4,5,7,96] broadcast(rs), dimensions={3}
  ROOT y = f32[4,5,7,96] multiply(d, rb)
}
)";
}

int ParallelLoops(const std::string& kernels) {
  int loops = 0;
  for (size_t at = kernels.find("seam_parallel(seam_threads"); at != std::string::npos;
       at = kernels.find("seam_parallel(seam_threads", at + 1)) {
    ++loops;
  }
  return loops;
}

TEST(ColumnStrips, FoldAndPassesRunInOneLoopOverStripsOfColumns) {
  const std::string kernels = testing::CpuKernelsChecked(ColumnNormalized("f32", 130, 3000),
                                                         "column_strips", WithCache(1 << 20));
  // 130 rows of 4 bytes in a quarter of L2: strips of 496 columns, but no
  // more than 3000 / (4 tasks x 2 cores) rounded up to a line: 384.
  EXPECT_TRUE(absl::StrContains(kernels, "const int64_t col0 = task * 384;")) << kernels;
  EXPECT_TRUE(absl::StrContains(kernels, "for (int64_t p = col0; p < col1; ++p)")) << kernels;
  EXPECT_EQ(ParallelLoops(kernels), 1) << kernels;
}

TEST(ColumnStrips, AnyRowCountAndHalfTypesEqualTheInterpreter) {
  for (int64_t rows : {3, 5, 130}) {
    for (const std::string type : {"f32", "bf16"}) {
      SCOPED_TRACE(absl::StrCat(type, "[", rows, ",1000]"));
      const std::string kernels =
          testing::CpuKernelsChecked(ColumnNormalized(type, rows, 1000),
                                     absl::StrCat("column_strips_", type, rows), WithCache(1024));
      EXPECT_TRUE(absl::StrContains(kernels, "col0")) << kernels;
    }
  }
}

TEST(ColumnStrips, StatisticsOverLeadingDimensionsOneAfterTheOther) {
  const std::string kernels =
      testing::CpuKernelsChecked(BatchNormNhwc(), "column_strips_nhwc", WithCache(1 << 10));
  EXPECT_TRUE(absl::StrContains(kernels, "col0")) << kernels;
  EXPECT_EQ(ParallelLoops(kernels), 1) << kernels;
}

TEST(ColumnStrips, AReadAtAnotherColumnKeepsThePhases) {
  const std::string kernels =
      testing::CpuKernelsChecked(ColumnNormalized("f32", 130, 3000, /*reverse=*/true),
                                 "column_strips_reverse", WithCache(1 << 20));
  EXPECT_FALSE(absl::StrContains(kernels, "col0")) << kernels;
}

TEST(ColumnStrips, AnInputTheCacheHoldsKeepsThePhases) {
  const std::string kernels = testing::CpuKernelsChecked(ColumnNormalized("f32", 130, 3000),
                                                         "column_strips_cached", WithCache(4 << 20));
  EXPECT_FALSE(absl::StrContains(kernels, "col0")) << kernels;
}

}  // namespace
}  // namespace seam::runtime
