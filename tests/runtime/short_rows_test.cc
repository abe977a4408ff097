// Short rows on the CPU: a row's sum of f32 or f64 up to 128 elements
// (kLaneSumRow) adds into 16 lanes combined as a tree (seam_lane_sum)
// instead of OpenMP's simd reduction, which combines its lanes one at a
// time; a row shorter than the lanes, or a remainder past the last block
// of 16, goes into the first lanes. Longer rows and half-precision sums
// keep the simd reduction. Both equal the interpreter.
#include <string>
#include <tuple>
#include <vector>

#include "../common/hlo_text.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "backends.h"
#include "gtest/gtest.h"

namespace seam::runtime {
namespace {

TEST(ShortRows, FloatSumsAddLanesAsATree) {
  // 40 = two blocks and a remainder of 8; 16 = one block; 7 = a remainder
  // alone.
  for (const auto& [type, rows, length] : std::vector<std::tuple<std::string, int64_t, int64_t>>{
           {"f32", 300, 40}, {"f64", 100, 16}, {"f32", 50, 7}}) {
    const std::string name = absl::StrCat(type, "_", length);
    const std::string kernels =
        testing::CpuKernelsChecked(testing::SoftmaxText(type, rows, length), name);
    EXPECT_TRUE(absl::StrContains(kernels, "seam_lane_sum(lanes0)")) << name << "\n" << kernels;
    EXPECT_FALSE(absl::StrContains(kernels, "reduction(+:")) << name << "\n" << kernels;
  }
}

TEST(ShortRows, LongRowsAndHalfPrecisionSumsKeepTheSimdReduction) {
  for (const auto& [type, rows, length] :
       std::vector<std::tuple<std::string, int64_t, int64_t>>{{"f32", 64, 256}, {"bf16", 64, 32}}) {
    const std::string name = absl::StrCat(type, "_", length);
    const std::string kernels =
        testing::CpuKernelsChecked(testing::SoftmaxText(type, rows, length), name);
    EXPECT_FALSE(absl::StrContains(kernels, "seam_lane_sum(lanes")) << name << "\n" << kernels;
    EXPECT_TRUE(absl::StrContains(kernels, "reduction(+:acc0)")) << name << "\n" << kernels;
  }
}

}  // namespace
}  // namespace seam::runtime
