// algsimp's rule table and its golden inputs: the table is well formed, every
// rule fires on some golden case, a second run changes nothing, and each
// case computes bit for bit the same values before and after (NaN matching
// NaN) on arguments full of IEEE special values and integer extremes.
#include <cmath>
#include <limits>
#include <map>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "pass_test_util.h"
#include "seam/passes/algsimp_rules.h"

namespace seam::testing {
namespace {

const char* const kGoldenFiles[] = {"algsimp_arithmetic.hlo", "algsimp_shapes.hlo",
                                    "algsimp_reductions.hlo"};

std::vector<std::unique_ptr<Module>> GoldenModules() {
  std::vector<std::unique_ptr<Module>> all;
  for (const char* file : kGoldenFiles) {
    std::string path = absl::StrCat(SEAM_SOURCE_ROOT, "/tests/golden/passes/", file);
    absl::StatusOr<std::vector<std::unique_ptr<Module>>> modules = ParseHloFile(path);
    EXPECT_TRUE(modules.ok()) << path << ": " << modules.status();
    if (!modules.ok()) continue;
    for (auto& m : *modules) all.push_back(std::move(m));
  }
  return all;
}

// Fills every element from a cycle of edge values, shifted by `seed`.
void FillSpecial(Literal& literal, uint64_t seed) {
  if (literal.shape().IsTuple()) {
    for (Literal& element : literal.mutable_tuple_elements()) FillSpecial(element, seed++);
    return;
  }
  DType t = literal.shape().dtype();
  const double inf = std::numeric_limits<double>::infinity();
  static const double kFloats[] = {std::nan(""), -inf, inf,  -0.0, 0.0,  1.0,    -1.0,
                                   0.5,          2.0,  -3.25, 1e30, 1e-40, 65504.0, -7.0};
  int bits = DTypeBits(t);
  uint64_t sign = bits >= 64 ? uint64_t{1} << 63 : uint64_t{1} << (bits - 1);
  const uint64_t kInts[] = {0, 1, ~uint64_t{0}, 2, sign, sign - 1, 7, ~uint64_t{2}, 3};
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    uint64_t k = i * 5 + seed;
    if (IsFloat(t)) {
      literal.SetDouble(i, kFloats[k % std::size(kFloats)]);
    } else if (IsPred(t)) {
      literal.SetBits(i, (k / 2) % 2);
    } else if (IsInteger(t)) {
      uint64_t v = kInts[k % std::size(kInts)];
      if (IsSigned(t) && bits < 64 && (v & sign)) v |= ~(sign * 2 - 1);  // sign-extend
      literal.SetBits(i, v);
    }
  }
}

// "" when the values are equal bit for bit, NaNs of any payload aside.
std::string ExactDifference(const Literal& got, const Literal& want, const std::string& where) {
  if (got.shape().IsTuple()) {
    std::string out;
    for (size_t k = 0; k < got.tuple_elements().size(); ++k) {
      out += ExactDifference(got.tuple_elements()[k], want.tuple_elements()[k],
                             absl::StrCat(where, "{", k, "}"));
    }
    return out;
  }
  if (!got.shape().Compatible(want.shape())) return where + ": shapes differ\n";
  DType t = got.shape().dtype();
  for (int64_t i = 0; i < got.element_count(); ++i) {
    if (IsFloat(t)) {
      double a = got.GetDouble(i), b = want.GetDouble(i);
      if (std::isnan(a) && std::isnan(b)) continue;
      if (got.GetBits(i) != want.GetBits(i)) {
        return absl::StrCat(where, "[", i, "]: got ", a, " want ", b, "\n");
      }
    } else if (!IsComplex(t) && got.GetBits(i) != want.GetBits(i)) {
      return absl::StrCat(where, "[", i, "]: got ", got.GetInt(i), " want ", want.GetInt(i), "\n");
    }
  }
  return "";
}

TEST(AlgsimpRules, TableIsWellFormed) {
  const std::vector<algsimp::RewriteRule>& rules = algsimp::AlgsimpRules();
  EXPECT_GE(rules.size(), 60u);
  absl::flat_hash_set<absl::string_view> names;
  for (const algsimp::RewriteRule& rule : rules) {
    EXPECT_TRUE(names.insert(rule.name).second) << "duplicate rule " << rule.name;
    EXPECT_FALSE(rule.opcodes.empty()) << rule.name;
    EXPECT_FALSE(rule.description.empty()) << rule.name;
    EXPECT_NE(rule.apply, nullptr) << rule.name;
    for (char c : rule.name) EXPECT_TRUE(std::islower(c) || std::isdigit(c) || c == '-') << rule.name;
  }
}

TEST(AlgsimpRules, EveryRuleFiresOnAGoldenCaseAndASecondRunChangesNothing) {
  std::map<std::string, int64_t> fired;
  for (const std::unique_ptr<Module>& module : GoldenModules()) {
    absl::StatusOr<bool> first = algsimp::RunAlgsimp(*module, &fired);
    ASSERT_TRUE(first.ok()) << first.status();
    EXPECT_TRUE(VerifyModule(*module).ok()) << module->name();
    std::map<std::string, int64_t> again;
    absl::StatusOr<bool> second = algsimp::RunAlgsimp(*module, &again);
    ASSERT_TRUE(second.ok());
    EXPECT_FALSE(*second) << module->name() << " changed again, first rule: "
                          << (again.empty() ? "" : again.begin()->first);
  }
  for (const algsimp::RewriteRule& rule : algsimp::AlgsimpRules()) {
    EXPECT_GT(fired[std::string(rule.name)], 0) << rule.name << " fires on no golden case";
  }
}

TEST(AlgsimpRules, GoldenCasesKeepTheirValuesExactly) {
  for (const std::unique_ptr<Module>& module : GoldenModules()) {
    std::vector<std::vector<Literal>> argument_sets;
    for (uint64_t seed = 0; seed < 4; ++seed) {
      std::vector<Literal> arguments;
      for (const Instruction* p : module->entry()->parameters()) {
        arguments.emplace_back(p->shape());
        FillSpecial(arguments.back(), seed * 3 + p->parameter_number());
      }
      argument_sets.push_back(std::move(arguments));
    }
    argument_sets.push_back(RandomArguments(*module->entry(), /*seed=*/0));
    std::vector<Literal> before;
    for (const auto& arguments : argument_sets) {
      absl::StatusOr<Literal> value = Interpret(*module, arguments);
      ASSERT_TRUE(value.ok()) << module->name() << ": " << value.status();
      before.push_back(std::move(*value));
    }
    ASSERT_TRUE(algsimp::RunAlgsimp(*module, nullptr).ok());
    for (size_t k = 0; k < argument_sets.size(); ++k) {
      absl::StatusOr<Literal> after = Interpret(*module, argument_sets[k]);
      ASSERT_TRUE(after.ok()) << module->name() << ": " << after.status();
      EXPECT_EQ(ExactDifference(*after, before[k], module->name()), "")
          << "argument set " << k;
    }
  }
}

}  // namespace
}  // namespace seam::testing
