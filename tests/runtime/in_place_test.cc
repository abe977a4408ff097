// The CPU executable updates a dynamic-update-slice's operand in place when
// nothing else needs it (a loop's cache written row by row), and copies it
// when something does (a caller's argument, a value read again later).
// Outputs that share a value, or are an argument, are copies of their own
// (in the executable's pooled memory), also after a run's results are
// recycled. Values passed on unchanged (placement custom-calls, barriers)
// are shared, never copied or interpreted, and updated in place only once
// nothing else holds them. Every case equals the interpreter.
#include <algorithm>

#include "absl/strings/str_replace.h"
#include "backends.h"
#include "gtest/gtest.h"
#include "seam/compiler/cpu_compiler.h"
#include "seam/eval/arguments.h"
#include "seam/eval/compare.h"
#include "seam/runtime/executable.h"
#include "seam/text/parser.h"

namespace seam::runtime {
namespace {

struct Outcome {
  int64_t in_place_updates = 0;
  double peak_bytes = 0;
  size_t fallbacks = 0;  // instructions the interpreter ran
};

// Runs `text` compiled (stitch) and in the interpreter on the same random
// arguments; expects equal results and returns the executable's counters.
Outcome RunBoth(const std::string& text, std::vector<Literal>* arguments_out = nullptr) {
  std::unique_ptr<Module> module = testing::ParseFirst(text, "in_place");
  if (module == nullptr) return {};
  absl::StatusOr<compiler::Compiled<runtime::Executable>> executable =
      compiler::CompileForCpu(*module, compiler::CpuOptions{});
  EXPECT_TRUE(executable.ok()) << executable.status();
  if (!executable.ok()) return {};
  std::vector<Literal> arguments = RandomArguments(*module->entry(), 0);
  std::vector<Literal> originals = arguments;
  testing::ExpectSameAsInterpreter(**executable, *module, arguments);
  for (size_t k = 0; k < arguments.size(); ++k) {
    EXPECT_EQ(DescribeDifferences(arguments[k], originals[k], &RewriteTolerance, "an argument"),
              "")
        << "argument " << k << " was written";
  }
  if (arguments_out != nullptr) *arguments_out = std::move(arguments);
  const auto& stats = (*executable)->stats();
  return {stats.in_place_updates, stats.peak_bytes, stats.fallbacks.size()};
}

// A decode loop: 16 steps each write one row of a [64,4096] cache.
constexpr char kCacheLoop[] = R"(HloModule cache_loop
cond {
  s = (s32[], f32[64,4096], f32[1,4096]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(16)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[64,4096], f32[1,4096]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  cache = f32[64,4096] get-tuple-element(s), index=1
  row = f32[1,4096] get-tuple-element(s), index=2
  z = s32[] constant(0)
  c = f32[] constant(0.5)
  cb = f32[1,4096] broadcast(c), dimensions={}
  next = f32[1,4096] add(row, cb)
  written = f32[64,4096] dynamic-update-slice(cache, next, i, z)
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[64,4096], f32[1,4096]) tuple(i1, written, next)
}
ENTRY e {
  cache0 = f32[64,4096] parameter(0)
  row0 = f32[1,4096] parameter(1)
  zero = s32[] constant(0)
  s0 = (s32[], f32[64,4096], f32[1,4096]) tuple(zero, cache0, row0)
  w = (s32[], f32[64,4096], f32[1,4096]) while(s0), condition=cond, body=body
  ROOT out = f32[64,4096] get-tuple-element(w), index=1
}
)";

TEST(InPlaceUpdates, ALoopWritesItsCacheInPlace) {
  Outcome outcome = RunBoth(kCacheLoop);
  EXPECT_EQ(outcome.in_place_updates, 16);
}

TEST(InPlaceUpdates, AnArgumentIsCopiedNotWritten) {
  Outcome outcome = RunBoth(R"(HloModule argument
ENTRY e {
  a = f32[8,16] parameter(0)
  u = f32[2,16] parameter(1)
  i = s32[] constant(3)
  z = s32[] constant(0)
  ROOT d = f32[8,16] dynamic-update-slice(a, u, i, z)
}
)");
  EXPECT_EQ(outcome.in_place_updates, 0);
}

TEST(InPlaceUpdates, AValueReadLaterIsCopied) {
  // `x` is read again after the update: the update must not touch it.
  Outcome outcome = RunBoth(R"(HloModule read_later
ENTRY e {
  a = f32[8,16] parameter(0)
  u = f32[2,16] parameter(1)
  x = f32[8,16] exponential(a)
  i = s32[] constant(5)
  z = s32[] constant(0)
  d = f32[8,16] dynamic-update-slice(x, u, i, z)
  s = f32[8,16] subtract(d, x)
  ROOT t = (f32[8,16], f32[8,16]) tuple(d, s)
}
)");
  EXPECT_EQ(outcome.in_place_updates, 0);
}

TEST(InPlaceUpdates, ADeadValueIsUpdatedInPlace) {
  // Clamped start (7 + 2 > 8) and a dead operand: written in place.
  Outcome outcome = RunBoth(R"(HloModule dead
ENTRY e {
  a = f32[8,16] parameter(0)
  u = f32[2,16] parameter(1)
  x = f32[8,16] exponential(a)
  i = s32[] constant(7)
  z = s32[] constant(0)
  ROOT d = f32[8,16] dynamic-update-slice(x, u, i, z)
}
)");
  EXPECT_EQ(outcome.in_place_updates, 1);
}

// A loop that scatter-adds into a f32[100000] state TRIPS times: the
// scatter is compiled, each iteration updates the state in place, and
// memory does not grow with the trip count.
constexpr char kScatterLoop[] = R"(HloModule scatter_loop
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
cond {
  s = (s32[], f32[100000]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(TRIPS)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[100000]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  state = f32[100000] get-tuple-element(s), index=1
  ids = s32[1,1] reshape(i)
  one = f32[] constant(1)
  u = f32[1] broadcast(one), dimensions={}
  next = f32[100000] scatter(state, ids, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  k = s32[] constant(1)
  i1 = s32[] add(i, k)
  ROOT t = (s32[], f32[100000]) tuple(i1, next)
}
ENTRY e {
  state0 = f32[100000] parameter(0)
  zero = s32[] constant(0)
  s0 = (s32[], f32[100000]) tuple(zero, state0)
  w = (s32[], f32[100000]) while(s0), condition=cond, body=body
  ROOT out = f32[100000] get-tuple-element(w), index=1
}
)";

TEST(InPlaceUpdates, ALoopsMemoryDoesNotGrowWithItsTripCount) {
  Outcome few = RunBoth(absl::StrReplaceAll(kScatterLoop, {{"TRIPS", "10"}}));
  Outcome many = RunBoth(absl::StrReplaceAll(kScatterLoop, {{"TRIPS", "400"}}));
  EXPECT_EQ(few.in_place_updates, 10);
  EXPECT_EQ(many.in_place_updates, 400);
  EXPECT_EQ(many.fallbacks, 0u);
  EXPECT_GT(few.peak_bytes, 0);
  EXPECT_EQ(many.peak_bytes, few.peak_bytes);
}

// GPT-2's outputs: an argument returned as it is, a computed value twice
// and a tuple of them. Each output has memory of its own, the argument is
// left alone, a second run, on the memory of the first's recycled results,
// gives the same, and the memory estimate counts the copies.
TEST(InPlaceUpdates, SharedOutputsAreCopiesOfTheirOwn) {
  std::unique_ptr<Module> module = testing::ParseFirst(R"(HloModule shared_outputs
ENTRY e {
  cache = f32[128,4,12,64] parameter(0)
  x = f32[4,768] parameter(1)
  y = f32[4,768] exponential(x)
  inner = (f32[4,768], f32[128,4,12,64]) tuple(y, cache)
  ROOT t = (f32[128,4,12,64], f32[4,768], f32[4,768], (f32[4,768], f32[128,4,12,64])) tuple(cache, y, y, inner)
}
)",
                                                       "shared_outputs");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<compiler::Compiled<runtime::Executable>> executable =
      compiler::CompileForCpu(*module, compiler::CpuOptions{});
  ASSERT_TRUE(executable.ok()) << executable.status();
  std::vector<Literal> arguments = RandomArguments(*module->entry(), 0);
  const std::vector<Literal> originals = arguments;
  for (int run = 0; run < 2; ++run) {
    SCOPED_TRACE(::testing::Message() << "run " << run);
    testing::ExpectSameAsInterpreter(**executable, *module, arguments);
    absl::StatusOr<Literal> result = (*executable)->Run(arguments);
    ASSERT_TRUE(result.ok()) << result.status();
    const std::vector<Literal>& outputs = result->tuple_elements();
    const Literal& nested_cache = outputs[3].tuple_elements()[1];
    EXPECT_EQ(DescribeDifferences(outputs[0], originals[0], &RewriteTolerance, "the cache"), "");
    EXPECT_EQ(DescribeDifferences(nested_cache, originals[0], &RewriteTolerance, "the cache"), "");
    std::vector<const void*> memory = {arguments[0].bytes().data(),
                                       outputs[0].bytes().data(),
                                       outputs[1].bytes().data(),
                                       outputs[2].bytes().data(),
                                       outputs[3].tuple_elements()[0].bytes().data(),
                                       nested_cache.bytes().data()};
    std::sort(memory.begin(), memory.end());
    EXPECT_EQ(std::adjacent_find(memory.begin(), memory.end()), memory.end())
        << "two outputs (or an output and the argument) share memory";
    for (size_t k = 0; k < arguments.size(); ++k) {
      EXPECT_EQ(DescribeDifferences(arguments[k], originals[k], &RewriteTolerance, "an argument"),
                "");
    }
    (*executable)->Recycle(*std::move(result));
  }
  // The estimate made before the first run counts the copies (within 5%:
  // it leaves out a kernel's small buffers; without the copies it is a
  // third of the peak).
  const ExecutableStats& stats = (*executable)->stats();
  EXPECT_GE(stats.estimated_peak_bytes, 0.95 * stats.peak_bytes);
}

TEST(ForwardedValues, PlacementCallsAndBarriersShareTheirOperand) {
  Outcome outcome = RunBoth(R"(HloModule forwarded
ENTRY e {
  a = f32[8,16] parameter(0)
  t = token[] after-all()
  s = f32[8,16] custom-call(a), custom_call_target="Sharding"
  m = f32[8,16] custom-call(s), custom_call_target="AwsNeuronTransferWithStaticRing"
  d = f32[8,16] add-dependency(m, t)
  p = (f32[8,16], f32[8,16]) tuple(d, a)
  b = (f32[8,16], f32[8,16]) opt-barrier(p)
  x = f32[8,16] get-tuple-element(b), index=0
  ROOT y = f32[8,16] exponential(x)
}
)");
  EXPECT_EQ(outcome.fallbacks, 0u);
}

TEST(ForwardedValues, AShareHeldElsewhereIsNotUpdatedInPlace) {
  // `x` is updated while its forwarded `f` is still to be read.
  Outcome outcome = RunBoth(R"(HloModule shared_then_updated
ENTRY e {
  a = f32[8,16] parameter(0)
  u = f32[2,16] parameter(1)
  x = f32[8,16] exponential(a)
  f = f32[8,16] custom-call(x), custom_call_target="Sharding"
  i = s32[] constant(5)
  z = s32[] constant(0)
  d = f32[8,16] dynamic-update-slice(x, u, i, z)
  ROOT s = f32[8,16] subtract(d, f)
}
)");
  EXPECT_EQ(outcome.in_place_updates, 0);
  EXPECT_EQ(outcome.fallbacks, 0u);
}

TEST(ForwardedValues, ALastShareIsUpdatedInPlace) {
  // Nothing reads `x` after `f` forwards it: the update takes `f` over.
  Outcome outcome = RunBoth(R"(HloModule last_share
ENTRY e {
  a = f32[8,16] parameter(0)
  u = f32[2,16] parameter(1)
  x = f32[8,16] exponential(a)
  f = f32[8,16] custom-call(x), custom_call_target="MoveToDevice"
  i = s32[] constant(7)
  z = s32[] constant(0)
  ROOT d = f32[8,16] dynamic-update-slice(f, u, i, z)
}
)");
  EXPECT_EQ(outcome.in_place_updates, 1);
}

}  // namespace
}  // namespace seam::runtime
