// What the planner attaches to a library call as its epilogue, and what it
// refuses: a chain stops at a value with several readers, at an op reading
// a large value nothing else would write, and at the root; two chains
// meeting at a residual add give it to the later call; a kernel holding a
// bias and a reader of the call is split rather than left in a cycle.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "seam/fusion/plan_printer.h"
#include "seam/fusion/planner.h"
#include "seam/text/parser.h"

namespace seam::fusion {
namespace {

// The epilogue of each library call of `text`'s entry, as "call: ops -> result".
std::vector<std::string> Epilogues(const std::string& text) {
  absl::StatusOr<std::vector<std::unique_ptr<Module>>> modules = ParseHloText(text, "t");
  EXPECT_TRUE(modules.ok()) << modules.status();
  if (!modules.ok()) return {};
  PlanOptions options;
  options.epilogue_min_result_bytes = 1024;  // the 16 KB results count as large, a bias not
  absl::StatusOr<FusionPlan> plan = PlanModule(*modules->front(), options);
  EXPECT_TRUE(plan.ok()) << plan.status();
  std::vector<std::string> out;
  for (const StandaloneOp& call : plan->computations.front().library_calls) {
    std::string line = call.op->name() + ":";
    for (const Instruction* op : call.epilogue.ops) line += " " + op->name();
    if (!call.epilogue.empty()) line += " -> " + call.epilogue.result->name();
    out.push_back(line);
  }
  return out;
}

constexpr char kHeader[] = R"(HloModule t
ENTRY e {
  a = f32[64,64] parameter(0)
  b = f32[64,64] parameter(1)
  bias = f32[64] parameter(2)
  big = f32[64,64] parameter(3)
  d = f32[64,64] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[64,64] broadcast(bias), dimensions={1}
)";

TEST(Epilogue, TakesTheChainUpToAValueWithTwoReaders) {
  EXPECT_EQ(Epilogues(absl::StrCat(kHeader, R"(
  x = f32[64,64] add(d, bb)
  y = f32[64,64] tanh(x)
  z = f32[64,64] multiply(y, y)
  r = f32[64] reduce(y, zero), dimensions={1}, to_apply=sum
  zero = f32[] constant(0)
  ROOT t = (f32[64,64], f32[64]) tuple(z, r)
}
sum {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT s = f32[] add(p, q)
})")),
            std::vector<std::string>{"d: bb x y -> y"});
}

// A broadcast the chain reads stays in its kernel when it is also the
// root: the epilogue recomputes it, the kernel still writes it.
TEST(Epilogue, LeavesARootBroadcastToItsKernel) {
  const std::string text = absl::StrCat(kHeader, R"(
  x = f32[64,64] add(d, bb)
  y = f32[64,64] tanh(x)
  ROOT keep = f32[64,64] add(y, bb)
})");
  EXPECT_EQ(Epilogues(text), std::vector<std::string>{"d: bb x y keep -> keep"});
  absl::StatusOr<std::vector<std::unique_ptr<Module>>> modules =
      ParseHloText(absl::StrReplaceAll(text, {{"ROOT keep", "keep"}, {"  bb = ", "  ROOT bb = "}}), "t");
  ASSERT_TRUE(modules.ok()) << modules.status();
  PlanOptions options;
  options.epilogue_min_result_bytes = 1024;
  absl::StatusOr<FusionPlan> plan = PlanModule(*modules->front(), options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  bool kept = false;
  for (const Kernel& k : plan->computations.front().kernels) {
    for (const Instruction* o : k.outputs) kept |= o->name() == "bb";
  }
  EXPECT_TRUE(kept) << PlanToText(*plan);
}

TEST(Epilogue, StopsAtTheRoot) {
  EXPECT_EQ(Epilogues(absl::StrCat(kHeader, R"(
  ROOT x = f32[64,64] add(d, bb)
})")),
            std::vector<std::string>{"d: bb x -> x"});
  EXPECT_EQ(Epilogues(absl::StrCat(kHeader, R"(
  ROOT x = f32[64,64] negate(d)
  y = f32[64,64] add(bb, big)
})")),
            std::vector<std::string>{"d: x -> x"});
}

// `g` is computed from a parameter by a kernel that would otherwise keep it
// in registers: reading it from memory would cost what the chain saves.
TEST(Epilogue, RefusesAnOpReadingALargeComputedValue) {
  EXPECT_EQ(Epilogues(absl::StrCat(kHeader, R"(
  g = f32[64,64] exponential(big)
  x = f32[64,64] add(d, bb)
  y = f32[64,64] multiply(x, g)
  ROOT t = (f32[64,64]) tuple(y)
})")),
            std::vector<std::string>{"d: bb x -> x"});
}

TEST(Epilogue, GivesAResidualAddOfTwoCallsToTheLaterOne) {
  EXPECT_EQ(Epilogues(absl::StrCat(kHeader, R"(
  e2 = f32[64,64] dot(b, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  x = f32[64,64] add(d, bb)
  y = f32[64,64] negate(e2)
  s = f32[64,64] add(x, y)
  ROOT t = (f32[64,64]) tuple(s)
})")),
            (std::vector<std::string>{"d: bb x -> x", "e2: y s -> s"}));
}

// The kernel after the call holds both the bias (computed from a
// parameter) and the reader of the call's result: it is split, the bias
// first, and the chain attached.
TEST(Epilogue, SplitsAKernelHoldingAnInputAndAReaderOfTheCall) {
  EXPECT_EQ(Epilogues(absl::StrCat(kHeader, R"(
  scaled = f32[64] multiply(bias, bias)
  sb = f32[64,64] broadcast(scaled), dimensions={0}
  x = f32[64,64] add(d, sb)
  p = f32[65,65] pad(x, zero), padding=0_1x0_1
  zero = f32[] constant(0)
  ROOT t = (f32[65,65]) tuple(p)
})")),
            std::vector<std::string>{"d: sb x -> x"});
}

}  // namespace
}  // namespace seam::fusion
