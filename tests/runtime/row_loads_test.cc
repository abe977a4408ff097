// A loop along a row reads a row's statistics (its mean, its variance,
// kept in the tile by an earlier loop) once, before the loop: in the loop
// GCC 12 reloaded them on every vector step, redid the arithmetic on them
// there, and versioned the loop for their aliasing with its stores. The
// kernels equal the interpreter.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "backends.h"
#include "gtest/gtest.h"

namespace seam::runtime {
namespace {

// Layer norm over f32[64,1024] as JAX writes it: mean, centred squares,
// their mean, the normalized row.
constexpr char kLayerNorm[] = R"(HloModule layer_norm
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[64,1024] parameter(0)
  zero = f32[] constant(0)
  n = f32[] constant(1024)
  eps = f32[] constant(1e-5)
  sum = f32[64] reduce(x, zero), dimensions={1}, to_apply=add
  ns = f32[64] broadcast(n), dimensions={}
  mean = f32[64] divide(sum, ns)
  mb = f32[64,1024] broadcast(mean), dimensions={0}
  d = f32[64,1024] subtract(x, mb)
  d2 = f32[64,1024] multiply(d, d)
  ss = f32[64] reduce(d2, zero), dimensions={1}, to_apply=add
  var = f32[64] divide(ss, ns)
  epss = f32[64] broadcast(eps), dimensions={}
  ve = f32[64] add(var, epss)
  rstd = f32[64] rsqrt(ve)
  rb = f32[64,1024] broadcast(rstd), dimensions={0}
  ROOT y = f32[64,1024] multiply(d, rb)
}
)";

TEST(RowLoads, ALoopAlongARowReadsItsStatisticsBeforeIt) {
  const std::string kernels = testing::CpuKernelsChecked(kLayerNorm, "row_loads_layer_norm");
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
