// Sibling groups of the same space merge related pairs first: a group
// joins the one reading its values (or sharing an input) before any other
// group of as many elements, with which it would share a loop and no data.
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

}  // namespace
}  // namespace seam::fusion
