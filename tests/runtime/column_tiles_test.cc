// Column reductions in row tiles on the CPU: a layer norm backward's column
// sums fold into per-tile partials inside the loop over its rows, so one
// parallel loop reads the input, and a second adds the tiles' partials in
// order. The results equal the interpreter's, with tiles that do not
// divide the rows and with leading dimensions folded together.
#include <algorithm>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "backends.h"
#include "gtest/gtest.h"

namespace seam::runtime {
namespace {

// Row means of x and row sums of dy over the last dimension of `shape`
// (its rows: every leading dimension), column sums of dy * (x - mean) and
// of dy over the leading ones.
std::string LayerNormBackward(const std::string& shape, const std::string& rows,
                              const std::string& leading, int64_t columns) {
  const std::string m = absl::StrCat("f32[", shape, "]"), row = absl::StrCat("f32[", rows, "]"),
                    col = absl::StrCat("f32[", columns, "]");
  const std::string last = std::to_string(std::count(shape.begin(), shape.end(), ','));
  return absl::StrCat(R"(HloModule column_tiles
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = )",
                      m, R"( parameter(0)
  dy = )",
                      m, R"( parameter(1)
  zero = f32[] constant(0)
  n = f32[] constant()",
                      columns, R"()
  sum = )",
                      row, " reduce(x, zero), dimensions={", last, R"(}, to_apply=add
  nb = )",
                      row, R"( broadcast(n), dimensions={}
  mean = )",
                      row, R"( divide(sum, nb)
  mb = )",
                      m, " broadcast(mean), dimensions={", leading, R"(}
  xc = )",
                      m, R"( subtract(x, mb)
  prod = )",
                      m, R"( multiply(dy, xc)
  dgamma = )",
                      col, " reduce(prod, zero), dimensions={", leading, R"(}, to_apply=add
  dbeta = )",
                      col, " reduce(dy, zero), dimensions={", leading, R"(}, to_apply=add
  dsum = )",
                      row, " reduce(dy, zero), dimensions={", last, R"(}, to_apply=add
  dsb = )",
                      m, " broadcast(dsum), dimensions={", leading, R"(}
  dx = )",
                      m, R"( subtract(prod, dsb)
  ROOT out = ()",
                      m, ", ", col, ", ", col, R"() tuple(dx, dgamma, dbeta)
}
)");
}

// How many parallel loops of the kernels read buffer `k`.
int LoopsReading(const std::string& source, int k) {
  int loops = 0;
  const std::string read = absl::StrCat("b", k, "[");
  for (absl::string_view loop : absl::StrSplit(source, "seam_parallel(")) {
    loops += loop.find(read) != absl::string_view::npos &&
             loop.find("seam_pool") == absl::string_view::npos;
  }
  return loops;
}

TEST(ColumnTiles, TheColumnSumsFoldInTheLoopOverTheRows) {
  // 1000 rows in tiles of 256: the last tile holds 232.
  const std::string kernels =
      testing::CpuKernelsChecked(LayerNormBackward("1000,64", "1000", "0", 64), "column_tiles_2d");
  EXPECT_EQ(LoopsReading(kernels, 0), 1) << kernels;  // x
  EXPECT_EQ(LoopsReading(kernels, 1), 1) << kernels;  // dy
  EXPECT_TRUE(absl::StrContains(kernels, "part0[p] = r == r0 ?")) << kernels;
}

TEST(ColumnTiles, LeadingDimensionsFoldTogether) {
  const std::string kernels = testing::CpuKernelsChecked(
      LayerNormBackward("8,125,64", "8,125", "0,1", 64), "column_tiles_3d");
  EXPECT_EQ(LoopsReading(kernels, 1), 1) << kernels;
}

}  // namespace
}  // namespace seam::runtime
