// The BLAS dot against the interpreter's on random dots: batch and
// contracting dimensions anywhere (operands read in place either way round,
// or packed), f32 / f64 / bf16. Tolerance: RewriteTolerance.
#include <algorithm>
#include <array>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "seam/eval/arguments.h"
#include "seam/eval/compare.h"
#include "seam/eval/evaluator.h"
#include "seam/eval/ops.h"
#include "seam/runtime/blas_dot.h"
#include "seam/text/parser.h"

namespace seam::runtime {
namespace {

// An operand with `roles` ('b'atch, 'c'ontracting, 'f'ree) laid out in a
// random order; returns its dims and the positions of each role.
struct Operand {
  std::vector<int64_t> dims;
  std::vector<int64_t> batch, contracting;
  std::vector<int64_t> free;  // sizes of the free dimensions, in operand order
};

Operand Layout(std::mt19937& rng, const std::vector<int64_t>& batch,
               const std::vector<int64_t>& contracting, const std::vector<int64_t>& free) {
  std::vector<std::pair<char, int>> roles;
  for (size_t i = 0; i < batch.size(); ++i) roles.push_back({'b', static_cast<int>(i)});
  for (size_t i = 0; i < contracting.size(); ++i) roles.push_back({'c', static_cast<int>(i)});
  for (size_t i = 0; i < free.size(); ++i) roles.push_back({'f', static_cast<int>(i)});
  std::shuffle(roles.begin(), roles.end(), rng);
  Operand o;
  o.batch.resize(batch.size());
  o.contracting.resize(contracting.size());
  for (size_t d = 0; d < roles.size(); ++d) {
    auto [role, i] = roles[d];
    if (role == 'b') o.batch[i] = d, o.dims.push_back(batch[i]);
    if (role == 'c') o.contracting[i] = d, o.dims.push_back(contracting[i]);
    if (role == 'f') o.dims.push_back(free[i]), o.free.push_back(free[i]);
  }
  return o;
}

// The BLAS dot of `text`'s root equals the interpreter's on random
// arguments of `seed`, within RewriteTolerance.
void ExpectMatchesTheInterpreter(const std::string& text, uint64_t seed) {
  absl::StatusOr<std::vector<std::unique_ptr<Module>>> modules = ParseHloText(text, "dot");
  ASSERT_TRUE(modules.ok()) << modules.status() << "\n" << text;
  const Computation& entry = *modules->front()->entry();
  const Instruction& dot = *entry.root();
  ASSERT_TRUE(BlasHandles(dot)) << text;
  std::vector<Literal> arguments = RandomArguments(entry, seed);
  Evaluator evaluator;
  BufferPool pool;
  absl::StatusOr<Literal> want = EvalInstruction(dot, {&arguments[0], &arguments[1]}, evaluator);
  ASSERT_TRUE(want.ok()) << want.status() << "\n" << text;
  absl::StatusOr<Literal> got = BlasDot(pool, dot, arguments[0], arguments[1]);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(DescribeDifferences(*got, *want, &RewriteTolerance, "the dot"), "") << text;
}

TEST(BlasDot, MatchesTheInterpreterOnRandomDots) {
  std::mt19937 rng(11);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto sizes = [&](int count) {
    std::vector<int64_t> s;
    for (int i = 0; i < count; ++i) s.push_back(pick(1, 6));
    return s;
  };
  for (int trial = 0; trial < 300; ++trial) {
    const char* type = std::array{"f32", "f32", "f64", "bf16"}[pick(0, 3)];
    std::vector<int64_t> batch = sizes(pick(0, 2)), contracting = sizes(pick(0, 2));
    std::vector<int64_t> lhs_free = sizes(pick(0, 2)), rhs_free = sizes(pick(0, 2));
    Operand lhs = Layout(rng, batch, contracting, lhs_free);
    Operand rhs = Layout(rng, batch, contracting, rhs_free);
    std::vector<int64_t> out = batch;
    out.insert(out.end(), lhs.free.begin(), lhs.free.end());
    out.insert(out.end(), rhs.free.begin(), rhs.free.end());
    std::string text = absl::StrCat(
        "HloModule dot\n\nENTRY e {\n  a = ", type, "[", absl::StrJoin(lhs.dims, ","),
        "] parameter(0)\n  b = ", type, "[", absl::StrJoin(rhs.dims, ","),
        "] parameter(1)\n  ROOT d = ", type, "[", absl::StrJoin(out, ","), "] dot(a, b), lhs_batch_dims={",
        absl::StrJoin(lhs.batch, ","), "}, lhs_contracting_dims={", absl::StrJoin(lhs.contracting, ","),
        "}, rhs_batch_dims={", absl::StrJoin(rhs.batch, ","), "}, rhs_contracting_dims={",
        absl::StrJoin(rhs.contracting, ","), "}\n}\n");
    ExpectMatchesTheInterpreter(text, trial);
    if (::testing::Test::HasFailure()) return;
  }
}

// Products large enough to be shared out among threads: by rows, by
// columns, and along k (a long sum into a small result, each operand
// stored either way round), against the interpreter.
TEST(BlasDot, SharesLargeProductsAmongThreads) {
  const std::vector<std::array<const char*, 4>> cases = {
      {"f32[600,100]", "f32[100,40]", "f32[600,40]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}"},
      {"f32[40,100]", "f32[100,600]", "f32[40,600]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}"},
      {"f32[8192,40]", "f32[8192,30]", "f32[40,30]", "lhs_contracting_dims={0}, rhs_contracting_dims={0}"},
      {"f32[40,8192]", "f32[30,8192]", "f32[40,30]", "lhs_contracting_dims={1}, rhs_contracting_dims={1}"},
      {"f64[5000,24]", "f64[24,5000]", "f64[24,24]", "lhs_contracting_dims={0}, rhs_contracting_dims={1}"},
  };
  for (const auto& [lhs, rhs, out, dims] : cases) {
    ExpectMatchesTheInterpreter(
        absl::StrCat("HloModule dot\n\nENTRY e {\n  a = ", lhs, " parameter(0)\n  b = ", rhs,
                     " parameter(1)\n  ROOT d = ", out, " dot(a, b), ", dims, "\n}\n"),
        /*seed=*/3);
  }
}

}  // namespace
}  // namespace seam::runtime
