// Column reductions in row tiles on the CPU: a layer norm backward's column
// sums fold into per-tile partials inside the loop over its rows, so one
// parallel loop reads the input, and a second adds the tiles' partials in
// order. A tile's passes run over sub-tiles of its rows, 24 KB of row
// inputs each, that L1 holds between them, the partials still one a tile.
// The results equal the interpreter's, with tiles and sub-tiles that do
// not divide the rows and with leading dimensions folded together.
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

TEST(ColumnTiles, ATilesPassesRunOverSubTilesOfItsRows) {
  // Rows of 3 KB of x and of dy: tiles of 21 rows (64 KB of x), sub-tiles
  // of 4; 1003 rows leave a last tile of 16 rows and a last sub-tile of 1.
  const std::string kernels = testing::CpuKernelsChecked(
      testing::LayerNormBackwardText("1003,768", "1003", "0", 768), "column_sub_tiles");
  EXPECT_TRUE(absl::StrContains(kernels, "const int64_t r1 = std::min<int64_t>(1003, r0 + 21);"))
      << kernels;
  EXPECT_TRUE(absl::StrContains(kernels, "for (int64_t rs = r0; rs < r1; rs += 4) {")) << kernels;
  // Every pass of the phase over the sub-tile's rows, none over the tile's.
  EXPECT_TRUE(absl::StrContains(kernels, "for (int64_t r = rs; r < re; ++r) {")) << kernels;
  EXPECT_FALSE(absl::StrContains(kernels, "for (int64_t r = r0; r < r1; ++r) {")) << kernels;
  // A tile's partial starts at its first row, not at each sub-tile's.
  EXPECT_TRUE(absl::StrContains(kernels, "part0[p] = r == r0 ?")) << kernels;
}

TEST(ColumnTiles, LeadingDimensionsFoldTogether) {
  const std::string kernels = testing::CpuKernelsChecked(
      testing::LayerNormBackwardText("8,125,64", "8,125", "0,1", 64), "column_tiles_3d");
  EXPECT_EQ(LoopsReading(kernels, 1), 1) << kernels;
}

}  // namespace
}  // namespace seam::runtime
