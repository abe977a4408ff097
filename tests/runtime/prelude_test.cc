// The generated-code prelude compiled by the JIT: its exp (the inline one
// and its vector-ABI twin), log, expm1, log1p and erf stay within 2 ulp of
// libm over the whole float range, its rational tanh (both) within 5, and
// all keep inf, 0 and NaN;
// its bf16 conversions are the interpreter's, and its order keys sort
// floats as the interpreter's max and min do.
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

// `function` (seam_exp or seam_exp_simd) called in a vectorized loop whose
// length leaves a scalar remainder.
void ExpectExpWithinTwoUlpOfStdExp(const std::string& function) {
  std::shared_ptr<SharedObject> keep;
  Unary exp = Compile("test_" + function, function + "(in[i])", keep);
  ASSERT_NE(exp, nullptr);
  std::vector<float> in;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> wide(-110.0f, 90.0f), narrow(-2.0f, 2.0f);
  for (int i = 0; i < 500000; ++i) in.push_back(wide(rng));
  for (int i = 0; i < 500000; ++i) in.push_back(narrow(rng));
  for (float x : {0.0f, -0.0f, 1.0f, -1.0f, 88.7f, 88.73f, 89.0f, -87.3f, -103.0f, -104.0f,
                  88.72283935546875f, -103.972084045410f, 1e30f, -1e30f,
                  std::numeric_limits<float>::max(), std::numeric_limits<float>::lowest(),
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
  for (float nan : {std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN()}) {
    exp(&nan, out.data(), 1);
    EXPECT_TRUE(std::isnan(out[0]));
  }
  std::printf("worst %s error: %lld ulp\n", function.c_str(), static_cast<long long>(worst));
}

// Streamed stores copy every byte of a piece whatever its start's
// alignment and its length (a head byte by byte up to a vector boundary,
// whole vectors, then the tail), and nothing past it.
TEST(Prelude, StreamStoresCopyExactlyThePieceAtEveryAlignment) {
  const std::string source = absl::StrCat(codegen::CpuPrelude(), R"(
extern "C" __attribute__((visibility("default"))) void test_stream(void* to, const void* from,
                                                                   long bytes) {
  seam_stream_store(to, from, bytes);
  seam_stream_fence();
}
)");
  absl::StatusOr<CompileResult> compiled = CompileAndLoad(source);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  auto stream = reinterpret_cast<void (*)(void*, const void*, long)>(
      *compiled->object->Symbol("test_stream"));
  std::vector<unsigned char> from(1024), to(1024 + 256);
  for (size_t i = 0; i < from.size(); ++i) from[i] = static_cast<unsigned char>(i * 7 + 1);
  for (int offset = 0; offset < 64; ++offset) {
    for (long bytes : {0L, 1L, 31L, 32L, 33L, 63L, 64L, 65L, 127L, 128L, 200L, 1000L}) {
      std::fill(to.begin(), to.end(), 0);
      stream(to.data() + offset, from.data(), bytes);
      for (size_t i = 0; i < to.size(); ++i) {
        const bool inside = i >= static_cast<size_t>(offset) && i < offset + static_cast<size_t>(bytes);
        ASSERT_EQ(to[i], inside ? from[i - offset] : 0)
            << "byte " << i << " of a " << bytes << "-byte piece at offset " << offset;
      }
    }
  }
}

TEST(Prelude, ExpIsWithinTwoUlpOfStdExp) { ExpectExpWithinTwoUlpOfStdExp("seam_exp"); }

// The vector-ABI exp (hand-written AVX-512 lanes where the host has them).
TEST(Prelude, SimdExpIsWithinTwoUlpOfStdExp) { ExpectExpWithinTwoUlpOfStdExp("seam_exp_simd"); }

// Every 97th float bit pattern (44 million values, all signs, subnormals,
// infinities and NaNs) and the special values.
std::vector<float> EveryClassOfFloat() {
  std::vector<float> in;
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 97) {
    in.push_back(std::bit_cast<float>(static_cast<uint32_t>(bits)));
  }
  const float inf = std::numeric_limits<float>::infinity();
  for (float x : {0.0f, -0.0f, inf, -inf, std::numeric_limits<float>::denorm_min()}) {
    in.push_back(x);
  }
  return in;
}

bool SameFloat(float a, float b) {
  return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b) || (a != a && b != b);
}

// The twins give what the inline functions give, bit for bit, over every
// class of float, both in long loops (their 16-lane variant) and in loops of
// every length up to 40 (8- and 4-lane variants, scalar remainders).
TEST(Prelude, SimdTwinsMatchTheInlineFunctionsBitForBit) {
  const std::vector<float> in = EveryClassOfFloat();
  for (const std::string name : {"exp", "tanh"}) {
    std::shared_ptr<SharedObject> keep_inline, keep_simd;
    Unary inline_f = Compile("test_inline_" + name, "seam_" + name + "(in[i])", keep_inline);
    Unary simd_f = Compile("test_simd_" + name, "seam_" + name + "_simd(in[i])", keep_simd);
    ASSERT_NE(inline_f, nullptr);
    ASSERT_NE(simd_f, nullptr);
    std::vector<float> want(in.size()), got(in.size());
    inline_f(in.data(), want.data(), static_cast<long>(in.size()));
    simd_f(in.data(), got.data(), static_cast<long>(in.size()));
    for (size_t i = 0; i < in.size(); ++i) {
      ASSERT_TRUE(SameFloat(got[i], want[i]))
          << name << "(" << in[i] << "): twin " << got[i] << ", inline " << want[i];
    }
    for (long n = 1; n <= 40; ++n) {
      std::vector<float> short_in(n), short_want(n), short_got(n);
      for (long i = 0; i < n; ++i) short_in[i] = -20.0f + 0.7f * static_cast<float>(i + n);
      inline_f(short_in.data(), short_want.data(), n);
      simd_f(short_in.data(), short_got.data(), n);
      for (long i = 0; i < n; ++i) {
        ASSERT_TRUE(SameFloat(short_got[i], short_want[i]))
            << name << "(" << short_in[i] << ") at " << i << " of " << n;
      }
    }
  }
}

// The ulp checks below take -0 for +0; tanh, expm1, log1p and erf keep the
// sign of zero, as libm's do.
TEST(Prelude, TanhExpm1Log1pAndErfKeepTheSignOfZero) {
  for (const std::string function :
       {"seam_tanh", "seam_tanh_simd", "seam_expm1", "seam_log1p", "seam_erf"}) {
    std::shared_ptr<SharedObject> keep;
    Unary f = Compile("test_zero_" + function, function + "(in[i])", keep);
    ASSERT_NE(f, nullptr);
    std::vector<float> in(33, -0.0f), out(in.size());
    in[0] = 0.0f;
    f(in.data(), out.data(), static_cast<long>(in.size()));
    EXPECT_FALSE(std::signbit(out[0])) << function;
    for (size_t i = 1; i < in.size(); ++i) {
      EXPECT_TRUE(std::signbit(out[i])) << function << " at " << i;
    }
  }
}

// Every class of float against the double-precision function rounded.
void ExpectWithinUlp(const std::string& name, double (*reference)(double), int64_t max_ulp) {
  std::shared_ptr<SharedObject> keep;
  Unary f = Compile("test_" + name, absl::StrCat("seam_", name, "(in[i])"), keep);
  ASSERT_NE(f, nullptr);
  std::vector<float> in = EveryClassOfFloat();
  std::vector<float> out(in.size());
  f(in.data(), out.data(), static_cast<long>(in.size()));
  int64_t worst = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    float want = static_cast<float>(reference(in[i]));
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(out[i])) << name << "(" << in[i] << "): got " << out[i];
      continue;
    }
    int64_t ulp = UlpDistance(out[i], want);
    worst = std::max(worst, ulp);
    ASSERT_LE(ulp, max_ulp) << name << "(" << in[i] << "): got " << out[i] << ", want " << want;
  }
  std::printf("worst %s error: %lld ulp\n", name.c_str(), static_cast<long long>(worst));
}

TEST(Prelude, TanhIsWithinFiveUlpOfLibm) {
  ExpectWithinUlp("tanh", [](double x) { return std::tanh(x); }, 5);
}

TEST(Prelude, SimdExpIsWithinTwoUlpOfLibmOnEveryFloatClass) {
  ExpectWithinUlp("exp_simd", [](double x) { return std::exp(x); }, 2);
}

TEST(Prelude, SimdTanhIsWithinFiveUlpOfLibm) {
  ExpectWithinUlp("tanh_simd", [](double x) { return std::tanh(x); }, 5);
}

TEST(Prelude, LogIsWithinTwoUlpOfLibm) {
  ExpectWithinUlp("log", [](double x) { return std::log(x); }, 2);
}

TEST(Prelude, Expm1IsWithinTwoUlpOfLibm) {
  ExpectWithinUlp("expm1", [](double x) { return std::expm1(x); }, 2);
}

TEST(Prelude, Log1pIsWithinTwoUlpOfLibm) {
  ExpectWithinUlp("log1p", [](double x) { return std::log1p(x); }, 2);
}

TEST(Prelude, ErfIsWithinTwoUlpOfLibm) {
  ExpectWithinUlp(
      "erf", [](double x) { return std::erf(x); }, 2);
}

// bf16 rounding written plainly, with a branch for NaN.
uint16_t PlainFloatToBF16(float value) {
  uint32_t bits = std::bit_cast<uint32_t>(value);
  if (std::isnan(value)) return static_cast<uint16_t>((bits >> 16) | 0x0040);
  return static_cast<uint16_t>((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
}

TEST(Prelude, Bf16RoundingIsTheInterpreters) {
  std::shared_ptr<SharedObject> keep;
  Unary round = Compile("test_round_bf16", "seam_round_bf16(in[i])", keep);
  ASSERT_NE(round, nullptr);
  std::vector<float> in = EveryClassOfFloat(), out;
  std::mt19937 rng(3);
  for (int i = 0; i < 100000; ++i) in.push_back(std::bit_cast<float>(static_cast<uint32_t>(rng())));
  out.resize(in.size());
  round(in.data(), out.data(), static_cast<long>(in.size()));
  // Bit for bit, NaN payloads included: rounding in 32-bit lanes is the
  // narrowing conversion and back.
  for (size_t i = 0; i < in.size(); ++i) {
    const uint32_t want = std::bit_cast<uint32_t>(BF16ToFloat(PlainFloatToBF16(in[i])));
    ASSERT_EQ(std::bit_cast<uint32_t>(out[i]), want) << std::hex << std::bit_cast<uint32_t>(in[i]);
    ASSERT_EQ(std::bit_cast<uint32_t>(RoundToBF16(in[i])), want)
        << std::hex << std::bit_cast<uint32_t>(in[i]);
  }
}

// The bf16 conversion (NaN by a mask, not a branch), in the generated code
// and in the interpreter, is the plain one, bit for bit, NaNs included.
TEST(Prelude, Bf16ConversionIsTheInterpretersBitForBit) {
  std::shared_ptr<SharedObject> keep;
  Unary convert =
      Compile("test_float_to_bf16", "static_cast<float>(seam_float_to_bf16(in[i]))", keep);
  ASSERT_NE(convert, nullptr);
  const std::vector<float> in = EveryClassOfFloat();
  std::vector<float> out(in.size());
  convert(in.data(), out.data(), static_cast<long>(in.size()));
  for (size_t i = 0; i < in.size(); ++i) {
    ASSERT_EQ(static_cast<uint16_t>(out[i]), PlainFloatToBF16(in[i]))
        << std::hex << std::bit_cast<uint32_t>(in[i]);
    ASSERT_EQ(FloatToBF16(in[i]), PlainFloatToBF16(in[i]))
        << std::hex << std::bit_cast<uint32_t>(in[i]);
  }
}

// Keys order every non-NaN float as the interpreter's max does (-0 below
// +0) and map back to the same bits.
TEST(Prelude, OrderKeysSortFloatsAsMaxAndMinDo) {
  std::shared_ptr<SharedObject> keep;
  Unary key = Compile("test_key", "std::bit_cast<float>(seam_order_key(in[i]))", keep);
  Unary back = Compile("test_back", "seam_from_order_key(std::bit_cast<int32_t>(in[i]))", keep);
  ASSERT_NE(key, nullptr);
  ASSERT_NE(back, nullptr);
  std::vector<float> in = {0.0f, -0.0f, std::numeric_limits<float>::denorm_min(),
                           -std::numeric_limits<float>::denorm_min(),
                           std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity(), 1.0f, -1.0f};
  std::mt19937 rng(11);
  while (in.size() < 20000) {
    float f = std::bit_cast<float>(static_cast<uint32_t>(rng()));
    if (!std::isnan(f)) in.push_back(f);
  }
  std::vector<float> keys(in.size()), round_trip(in.size());
  key(in.data(), keys.data(), static_cast<long>(in.size()));
  back(keys.data(), round_trip.data(), static_cast<long>(in.size()));
  auto key_of = [&](size_t i) { return std::bit_cast<int32_t>(keys[i]); };
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(std::bit_cast<uint32_t>(round_trip[i]), std::bit_cast<uint32_t>(in[i])) << in[i];
    size_t j = (i * 7919 + 1) % in.size();
    float a = in[i], b = in[j];
    bool a_below = a < b || (a == b && std::signbit(a) && !std::signbit(b));
    bool b_below = b < a || (a == b && std::signbit(b) && !std::signbit(a));
    EXPECT_EQ(key_of(i) < key_of(j), a_below) << a << " vs " << b;
    EXPECT_EQ(key_of(j) < key_of(i), b_below) << a << " vs " << b;
  }
}

}  // namespace
}  // namespace seam::runtime
