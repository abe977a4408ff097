// A column normalization's column sums rounded to bf16 once per column (a
// group of their own, see tests/fusion/half_rounding_test.cc) and read by
// the pass over the rows: the rows no longer round them again, and the
// result equals the interpreter's.
#include <string>

#include "../common/hlo_text.h"
#include "absl/strings/match.h"
#include "backends.h"
#include "gtest/gtest.h"

namespace seam::runtime {
namespace {

TEST(HalfRounding, RoundedOncePerColumnEqualsTheInterpreter) {
  const std::string kernels =
      testing::CpuKernelsChecked(testing::kRoundedColumnSums, "half_rounding");
  // The pass over the rows reads the rounded sums back as bf16 and rounds
  // only its result.
  const size_t store = kernels.find("b1[(r) * 3000 + c] = seam_float_to_bf16(v0);");
  ASSERT_NE(store, std::string::npos) << kernels;
  const size_t loop = kernels.rfind("#pragma omp simd", store);
  ASSERT_NE(loop, std::string::npos) << kernels;
  const std::string pass = kernels.substr(loop, store - loop);
  EXPECT_TRUE(absl::StrContains(pass, "seam_bf16_to_float(b3[c])")) << pass;
  EXPECT_FALSE(absl::StrContains(pass, "seam_round_bf16")) << pass;
}

}  // namespace
}  // namespace seam::runtime
