// Column reductions in row tiles on the CPU: a layer norm backward's column
// sums fold into per-tile partials inside the loop over its rows, so one
// parallel loop reads the input, and a second adds the tiles' partials in
// order. The results equal the interpreter's, with tiles that do not
// divide the rows and with leading dimensions folded together.
#include <algorithm>
#include <string>

#include "../common/hlo_text.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "backends.h"
#include "gtest/gtest.h"

namespace seam::runtime {
namespace {

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
  const std::string kernels = testing::CpuKernelsChecked(
      testing::LayerNormBackwardText("1000,64", "1000", "0", 64), "column_tiles_2d");
  EXPECT_EQ(LoopsReading(kernels, 0), 1) << kernels;  // x
  EXPECT_EQ(LoopsReading(kernels, 1), 1) << kernels;  // dy
  EXPECT_TRUE(absl::StrContains(kernels, "part0[p] = r == r0 ?")) << kernels;
}

TEST(ColumnTiles, LeadingDimensionsFoldTogether) {
  const std::string kernels = testing::CpuKernelsChecked(
      testing::LayerNormBackwardText("8,125,64", "8,125", "0,1", 64), "column_tiles_3d");
  EXPECT_EQ(LoopsReading(kernels, 1), 1) << kernels;
}

}  // namespace
}  // namespace seam::runtime
