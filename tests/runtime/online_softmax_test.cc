// Online softmax on the CPU: a softmax (and a log-softmax) over rows of a
// 262144-word vocabulary folds its sum in its max's pass, the exps
// recomputed by the output's pass, so the kernel reads x in two passes and
// keeps no exps in memory; each block prefetches the next, and the exps
// stay vectorized. Rows where the max grows in every block, where
// the first blocks are all -inf, all -inf, +inf, NaN, and large values
// give what the interpreter gives, NaNs where it has them.
#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "../common/hlo_text.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "backends.h"
#include "gtest/gtest.h"

namespace seam::runtime {
namespace {

constexpr int64_t kRows = 8, kLength = 262144;

// Row r of the logits: the adversarial cases above, then random ones.
Literal Logits(const Shape& shape) {
  Literal x = Literal::Uninitialized(shape);
  std::mt19937 random(52);
  std::uniform_real_distribution<float> uniform(-4, 4);
  const float inf = std::numeric_limits<float>::infinity();
  for (int64_t r = 0; r < kRows; ++r) {
    for (int64_t c = 0; c < kLength; ++c) {
      float v = uniform(random);
      if (r == 0) v = 1e-4f * static_cast<float>(c);  // the max grows in every block
      if (r == 1 && c < 3 * 2048 + 5) v = -inf;       // the first blocks all -inf
      if (r == 2) v = -inf;                           // all -inf: NaN
      if (r == 3 && c == 70000) v = inf;              // +inf: NaN
      if (r == 4 && c == 100000) v = std::nanf("");   // NaN
      if (r == 5) v += 80;                            // exp(x) overflows unshifted
      x.SetDouble(r * kLength + c, v);
    }
  }
  return x;
}

void ExpectOnlineAndExact(bool log) {
  const std::string text = testing::SoftmaxText("f32", kRows, kLength, log),
                    name = log ? "online_log_softmax" : "online_softmax";
  std::unique_ptr<Module> module = testing::ParseFirst(text, name);
  ASSERT_NE(module, nullptr);
  compiler::CpuOptions options;
  options.dump_to = ::testing::TempDir() + "/seam_" + name;
  absl::StatusOr<compiler::Compiled<Executable>> compiled =
      compiler::CompileForCpu(*module, options);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  std::vector<Literal> arguments;
  arguments.push_back(Logits(module->entry()->parameters()[0]->shape()));
  testing::ExpectSameAsInterpreter(*compiled->executable, *module, arguments);
  const std::string kernels = testing::ReadFile(options.dump_to + "/kernels.cc");
  EXPECT_TRUE(absl::StrContains(kernels, "seam_sum *= double(std::exp(seam_max - acc0))"))
      << kernels;
  // x and y only: no exps in memory.
  EXPECT_FALSE(absl::StrContains(kernels, "seam_buffers[2]")) << kernels;
  // The next block of the row asked for, the last one clamped.
  EXPECT_TRUE(absl::StrContains(
      kernels, "seam_prefetch(b0 + r * 262144 + std::min<int64_t>(ce, 260096), 2048 * sizeof"))
      << kernels;
  // The blocks' exps vectorized.
  EXPECT_EQ(testing::ScalarExpCalls(kernels, name), std::vector<std::string>{});
}

TEST(OnlineSoftmax, ASoftmaxOverAVocabularyEqualsTheInterpreter) { ExpectOnlineAndExact(false); }

TEST(OnlineSoftmax, ALogSoftmaxOverAVocabularyEqualsTheInterpreter) { ExpectOnlineAndExact(true); }

}  // namespace
}  // namespace seam::runtime
