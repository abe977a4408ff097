// Sibling groups of the same space merge related pairs first: a group
// joins the one reading its values (or sharing an input) before any other
// group of as many elements, with which it would share a loop and no data.
// On a CPU such unrelated groups merge only while together they move no
// more than the last-level cache.
#include <string>

#include "../common/hlo_text.h"
#include "gtest/gtest.h"
#include "seam/fusion/planner.h"

namespace seam::fusion {
namespace {

using testing::ParseModule;

// a * 2 over f32[16,64] comes first; b + 1 over f32[64,16] (as many
// elements) is an output its row sums of squares read. Merged in index
// order, b + 1 joined a * 2 and its sums read it across a grid barrier.
constexpr char kTwoTensors[] = R"(HloModule two_tensors
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  a = f32[16,64] parameter(0)
  b = f32[64,16] parameter(1)
  two = f32[] constant(2)
  twos = f32[16,64] broadcast(two), dimensions={}
  scaled = f32[16,64] multiply(a, twos)
  one = f32[] constant(1)
  ones = f32[64,16] broadcast(one), dimensions={}
  moved = f32[64,16] add(b, ones)
  squares = f32[64,16] multiply(moved, moved)
  zero = f32[] constant(0)
  sums = f32[64] reduce(squares, zero), dimensions={1}, to_apply=add
  ROOT t = (f32[16,64], f32[64,16], f32[64]) tuple(scaled, moved, sums)
}
)";

TEST(RelatedSiblings, AnOutputJoinsTheReductionReadingItNotAnUnrelatedGroup) {
  std::unique_ptr<Module> m = ParseModule(kTwoTensors);
  ASSERT_NE(m, nullptr);
  PlanOptions options;
  options.device = target::HostCpuSpec();
  options.strategy = Strategy::kStitch;
  absl::StatusOr<FusionPlan> plan = PlanModule(*m, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->computations[0].kernels.size(), 1u);
  const Kernel& k = plan->computations[0].kernels[0];
  const Group* sums = nullptr;
  for (const Group& g : k.groups) {
    if (g.dominant->name() == "sums") sums = &g;
  }
  ASSERT_NE(sums, nullptr);
  bool moved_inside = false;
  for (const Instruction* d : sums->sub_dominants) moved_inside |= d->name() == "moved";
  EXPECT_TRUE(moved_inside) << "moved is not computed in the loop of the sums reading it";
  for (const Edge& e : k.edges) {
    if (e.producer->name() == "moved") {
      EXPECT_EQ(e.scheme, Scheme::kLocal) << "moved -> " << e.consumer->name();
    }
  }
  EXPECT_EQ(k.grid_barriers, 0);
}

// Two unrelated updates (x * 2 + y over f32[16,64], its twin over
// f32[64,16]): 20 KB moved in all.
constexpr char kUnrelatedUpdates[] = R"(HloModule unrelated
ENTRY e {
  x = f32[16,64] parameter(0)
  y = f32[16,64] parameter(1)
  a = f32[64,16] parameter(2)
  b = f32[64,16] parameter(3)
  two = f32[] constant(2)
  twos = f32[16,64] broadcast(two), dimensions={}
  x2 = f32[16,64] multiply(x, twos)
  u = f32[16,64] add(x2, y)
  twos2 = f32[64,16] broadcast(two), dimensions={}
  a2 = f32[64,16] multiply(a, twos2)
  v = f32[64,16] add(a2, b)
  ROOT t = (f32[16,64], f32[64,16]) tuple(u, v)
}
)";

// The groups of the one kernel planning kUnrelatedUpdates with a last-level
// cache of `cache` bytes.
size_t UnrelatedUpdateGroups(int64_t cache) {
  std::unique_ptr<Module> m = ParseModule(kUnrelatedUpdates);
  if (m == nullptr) return 0;
  PlanOptions options;
  options.device = target::HostCpuSpec();
  options.device.last_level_cache_bytes = cache;
  options.strategy = Strategy::kStitch;
  absl::StatusOr<FusionPlan> plan = PlanModule(*m, options);
  EXPECT_TRUE(plan.ok()) << plan.status();
  if (!plan.ok() || plan->computations[0].kernels.size() != 1) return 0;
  return plan->computations[0].kernels[0].groups.size();
}

TEST(RelatedSiblings, UnrelatedGroupsMergeOnlyWhileTheCacheHoldsWhatTheyMove) {
  EXPECT_EQ(UnrelatedUpdateGroups(1 << 20), 1u);   // 20 KB: one loop
  EXPECT_EQ(UnrelatedUpdateGroups(16 << 10), 2u);  // past 16 KB: a loop each
}

}  // namespace
}  // namespace seam::fusion
