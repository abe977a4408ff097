// A loop along a row reads a row's statistics (its mean, its variance,
// kept in the tile by an earlier loop) once, before the loop: in the loop
// GCC 12 reloaded them on every vector step, redid the arithmetic on them
// there, and versioned the loop for their aliasing with its stores. The
// kernels equal the interpreter.
#include <string>
#include <vector>

#include "../common/hlo_text.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "backends.h"
#include "gtest/gtest.h"

namespace seam::runtime {
namespace {

TEST(RowLoads, ALoopAlongARowReadsItsStatisticsBeforeIt) {
  const std::string kernels =
      testing::CpuKernelsChecked(testing::LayerNormText(64, 1024), "row_loads_layer_norm");
  ASSERT_TRUE(absl::StrContains(kernels, "const float row")) << kernels;
  // Inside a vector loop no value is read from a tile at the row's index.
  bool in_vector_loop = false;
  int depth = 0, loop_depth = 0;
  for (absl::string_view line : absl::StrSplit(kernels, '\n')) {
    if (absl::StrContains(line, "#pragma omp simd")) {
      in_vector_loop = true;
      loop_depth = depth;
    }
    for (char ch : line) depth += ch == '{' ? 1 : ch == '}' ? -1 : 0;
    if (in_vector_loop && depth <= loop_depth && !absl::StrContains(line, "#pragma")) {
      in_vector_loop = false;
    }
    if (in_vector_loop) {
      EXPECT_FALSE(absl::StrContains(line, "= tile_") && absl::StrContains(line, "[r - r0"))
          << line << "\n" << kernels;
    }
  }
}

}  // namespace
}  // namespace seam::runtime
