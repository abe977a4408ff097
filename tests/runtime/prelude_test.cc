// The generated-code prelude compiled by the JIT: its exp stays within 2
// ulp of std::exp over the whole float range (and keeps inf, 0 and NaN),
// and its bf16 conversions are the interpreter's.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "seam/codegen/prelude.h"
#include "seam/ir/float16.h"
#include "seam/runtime/jit.h"

namespace seam::runtime {
namespace {

using Unary = void (*)(const float*, float*, long);

Unary Compile(const std::string& body_name, const std::string& expr,
              std::shared_ptr<SharedObject>& keep) {
  std::string source = absl::StrCat(codegen::CpuPrelude(), R"(
extern "C" __attribute__((visibility("default"))) void )",
                                    body_name, R"((const float* in, float* out, long n) {
  #pragma omp simd
  for (long i = 0; i < n; ++i) out[i] = )",
                                    expr, R"(;
}
)");
  absl::StatusOr<CompileResult> compiled = CompileAndLoad(source);
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  if (!compiled.ok()) return nullptr;
  keep = compiled->object;
  return reinterpret_cast<Unary>(*keep->Symbol(body_name));
}

int64_t UlpDistance(float a, float b) {
  int32_t ia = std::bit_cast<int32_t>(a), ib = std::bit_cast<int32_t>(b);
  if (ia < 0) ia = std::numeric_limits<int32_t>::min() - ia;
  if (ib < 0) ib = std::numeric_limits<int32_t>::min() - ib;
  return std::abs(static_cast<int64_t>(ia) - ib);
}

TEST(Prelude, ExpIsWithinTwoUlpOfStdExp) {
  std::shared_ptr<SharedObject> keep;
  Unary exp = Compile("test_exp", "seam_exp(in[i])", keep);
  ASSERT_NE(exp, nullptr);
  std::vector<float> in;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> wide(-110.0f, 90.0f), narrow(-2.0f, 2.0f);
  for (int i = 0; i < 500000; ++i) in.push_back(wide(rng));
  for (int i = 0; i < 500000; ++i) in.push_back(narrow(rng));
  for (float x : {0.0f, -0.0f, 1.0f, -1.0f, 88.7f, 88.73f, 89.0f, -87.3f, -103.0f, -104.0f,
                  std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()}) {
    in.push_back(x);
  }
  std::vector<float> out(in.size());
  exp(in.data(), out.data(), static_cast<long>(in.size()));
  int64_t worst = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    float want = std::exp(in[i]);
    int64_t ulp = UlpDistance(out[i], want);
    // Subnormal results carry fewer bits: compare them absolutely.
    if (std::fabs(want) < std::numeric_limits<float>::min()) {
      EXPECT_NEAR(out[i], want, 2 * std::numeric_limits<float>::denorm_min() * 4) << in[i];
      continue;
    }
    worst = std::max(worst, ulp);
    ASSERT_LE(ulp, 2) << "exp(" << in[i] << "): got " << out[i] << ", want " << want;
  }
  float nan = std::numeric_limits<float>::quiet_NaN();
  exp(&nan, out.data(), 1);
  EXPECT_TRUE(std::isnan(out[0]));
  std::printf("worst exp error: %lld ulp\n", static_cast<long long>(worst));
}

TEST(Prelude, Bf16RoundingIsTheInterpreters) {
  std::shared_ptr<SharedObject> keep;
  Unary round = Compile("test_round_bf16", "seam_round_bf16(in[i])", keep);
  ASSERT_NE(round, nullptr);
  std::vector<float> in, out;
  std::mt19937 rng(3);
  for (int i = 0; i < 100000; ++i) in.push_back(std::bit_cast<float>(static_cast<uint32_t>(rng())));
  out.resize(in.size());
  round(in.data(), out.data(), static_cast<long>(in.size()));
  for (size_t i = 0; i < in.size(); ++i) {
    float want = BF16ToFloat(FloatToBF16(in[i]));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(out[i]));
    } else {
      EXPECT_EQ(std::bit_cast<uint32_t>(out[i]), std::bit_cast<uint32_t>(want)) << in[i];
    }
  }
}

}  // namespace
}  // namespace seam::runtime
