// Float selects on the CPU are bit masks (the prelude's seam_select): GCC
// turned `c ? a : b` with a condition the same for every lane (LAMB's trust
// ratio) into a choice between lane values it could not vectorize, and
// LAMB's bf16 output pass ran scalar (28 ms for 147 MB; 5 with the mask).
// The mask picks its arm's bits: NaN payloads, signed zeros, infinities and
// subnormals come through as they are, in f32 and f64.
#include <cstdint>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "backends.h"
#include "gtest/gtest.h"

namespace seam::runtime {
namespace {

constexpr int64_t kCount = 4096;

std::string SelectText(const std::string& type) {
  const std::string a = absl::StrCat(type, "[", kCount, "]");
  return absl::StrCat("HloModule float_select\nENTRY e {\n  p = pred[", kCount,
                      "] parameter(0)\n  x = ", a, " parameter(1)\n  y = ", a,
                      " parameter(2)\n  ROOT s = ", a, " select(p, x, y)\n}\n");
}

// The special values, then ordinary ones; bit patterns of `bits` width.
uint64_t Special(int64_t i, bool wide) {
  const uint64_t f32[] = {0x7fc00001, 0xffc12345, 0x80000000, 0x00000000,
                          0x7f800000, 0xff800000, 0x00000001, 0x807fffff};
  const uint64_t f64[] = {0x7ff8000000000001, 0xfff8123456789abc, 0x8000000000000000, 0,
                          0x7ff0000000000000, 0xfff0000000000000, 1, 0x800fffffffffffff};
  if (i % 16 < 8) return (wide ? f64 : f32)[i % 8];
  return wide ? 0x3ff0000000000000 + static_cast<uint64_t>(i) : 0x3f800000 + static_cast<uint64_t>(i);
}

void ExpectTheArmsBits(const std::string& type) {
  const bool wide = type == "f64";
  const std::string name = "float_select_" + type;
  std::unique_ptr<Module> module = testing::ParseFirst(SelectText(type), name);
  ASSERT_NE(module, nullptr);
  compiler::CpuOptions options;
  options.dump_to = ::testing::TempDir() + "/seam_" + name;
  absl::StatusOr<compiler::Compiled<Executable>> compiled = compiler::CompileForCpu(*module, options);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  const std::string kernels = testing::ReadFile(options.dump_to + "/kernels.cc");
  EXPECT_TRUE(absl::StrContains(kernels, "seam_select(")) << kernels;
  const auto& parameters = module->entry()->parameters();
  std::vector<Literal> arguments;
  for (const Instruction* p : parameters) arguments.push_back(Literal::Uninitialized(p->shape()));
  for (int64_t i = 0; i < kCount; ++i) {
    arguments[0].SetBits(i, (i / 3) % 2);
    arguments[1].SetBits(i, Special(i, wide));
    arguments[2].SetBits(i, Special(i + 5, wide));
  }
  absl::StatusOr<Literal> got = compiled->executable->Run(arguments);
  ASSERT_TRUE(got.ok()) << got.status();
  for (int64_t i = 0; i < kCount; ++i) {
    const uint64_t want = arguments[0].GetBits(i) ? arguments[1].GetBits(i) : arguments[2].GetBits(i);
    ASSERT_EQ(got->GetBits(i), want) << type << " element " << i;
  }
}

TEST(FloatSelect, PicksTheBitsOfItsArmInF32) { ExpectTheArmsBits("f32"); }

TEST(FloatSelect, PicksTheBitsOfItsArmInF64) { ExpectTheArmsBits("f64"); }

}  // namespace
}  // namespace seam::runtime
