#include "hlo_mutator.h"

#include <random>
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "seam/text/parser.h"

namespace seam::fuzz {
namespace {

constexpr char kModule[] = R"(HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  p = f32[4,8]{1,0} parameter(0)
  z = f32[] constant(0)
  r = f32[4]{0} reduce(p, z), dimensions={1}, to_apply=add
  b = f32[4,8]{1,0} broadcast(r), dimensions={0}
  ROOT d = f32[4,8]{1,0} subtract(p, b)
}
)";

TEST(HloMutator, EveryKindChangesTheTextAndIsReproducible) {
  for (int k = 0; k < kMutationCount; ++k) {
    const auto kind = static_cast<Mutation>(k);
    SCOPED_TRACE(std::string(MutationName(kind)));
    std::set<std::string> mutants;
    for (uint64_t seed = 0; seed < 50; ++seed) {
      std::mt19937_64 rng(seed), again(seed);
      const std::string mutant = Mutate(kModule, kind, rng);
      EXPECT_EQ(mutant, Mutate(kModule, kind, again));
      mutants.insert(mutant);
    }
    mutants.erase(kModule);
    // Fifty seeds give many different mutants, not one edit repeated.
    EXPECT_GE(mutants.size(), 10u);
  }
}

// The point of structure: such mutants still parse far more often than
// byte mutants (about 10% here), so they reach the verifier and beyond.
int ParsingMutants(Mutation kind) {
  int parsed = 0;
  for (uint64_t seed = 0; seed < 100; ++seed) {
    std::mt19937_64 rng(seed);
    parsed += ParseHloText(Mutate(kModule, kind, rng), "<mutant>", {.verify = false}).ok();
  }
  return parsed;
}

TEST(HloMutator, StructuredMutantsParseMoreOftenThanByteMutants) {
  const int bytes = ParsingMutants(Mutation::kBytes);
  for (int k = 0; k < kMutationCount; ++k) {
    const auto kind = static_cast<Mutation>(k);
    if (kind == Mutation::kBytes) continue;
    SCOPED_TRACE(std::string(MutationName(kind)));
    EXPECT_GE(ParsingMutants(kind), 2 * bytes);
  }
  // Those that keep the instruction's form: most parse.
  for (Mutation kind : {Mutation::kDimension, Mutation::kElementType, Mutation::kAttribute}) {
    EXPECT_GE(ParsingMutants(kind), 50) << MutationName(kind);
  }
}

TEST(HloMutator, OpcodeMutationsReplaceOnlyTheOpcode) {
  std::mt19937_64 rng(7);
  const std::string mutant = Mutate(kModule, Mutation::kOpcode, rng);
  const auto mismatch = std::mismatch(mutant.begin(), mutant.end(), std::begin(kModule));
  const std::string rest(mismatch.first, mutant.end());
  // Everything after the new opcode is as before: its operands follow.
  EXPECT_NE(rest.find('('), std::string::npos);
  EXPECT_TRUE(std::string(kModule).ends_with(rest.substr(rest.find('('))));
}

TEST(HloMutator, TextsWithoutStructureGetByteMutations) {
  std::mt19937_64 rng(1);
  EXPECT_NE(Mutate("no module here", Mutation::kOpcode, rng), "no module here");
  EXPECT_FALSE(Mutate("", Mutation::kDimension, rng).empty());
}

}  // namespace
}  // namespace seam::fuzz
