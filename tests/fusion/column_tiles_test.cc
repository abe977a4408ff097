// Column reductions in row tiles (ThreadMapping::row_tiled): on a CPU, a
// column reduction folding the leading dimensions of what a row group of
// its kernel reads (a layer norm backward's dgamma and dbeta beside its
// row statistics) folds each of that group's row tiles into partials of
// its own, and what it reads of the row groups is regional; not on a GPU,
// not for tiles of fewer than 16 rows, not when it shares nothing with the
// row groups.
#include <algorithm>
#include <string>

#include "../common/hlo_text.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "seam/fusion/planner.h"

namespace seam::fusion {
namespace {

using testing::ParseModule;

// A layer norm backward's shape of work over f32[rows, columns].
std::string LayerNormBackward(int64_t rows, int64_t columns) {
  return testing::LayerNormBackwardText(absl::StrCat(rows, ",", columns), absl::StrCat(rows), "0",
                                        columns);
}

FusionPlan Plan(const Module& m, const target::DeviceSpec& device) {
  PlanOptions options;
  options.device = device;
  absl::StatusOr<FusionPlan> plan = PlanModule(m, options);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return *std::move(plan);
}

// The group of the plan's first kernel whose dominant is `name`.
const Group* GroupOf(const FusionPlan& plan, const std::string& name) {
  for (const Group& g : plan.computations[0].kernels[0].groups) {
    if (g.dominant->name() == name) return &g;
  }
  return nullptr;
}

TEST(ColumnTiles, ALayerNormBackwardsColumnSumsFoldInItsRowTiles) {
  std::unique_ptr<Module> m = ParseModule(LayerNormBackward(1000, 64));
  ASSERT_NE(m, nullptr);
  const FusionPlan plan = Plan(*m, target::HostCpuSpec());
  ASSERT_EQ(plan.computations[0].kernels.size(), 1u);
  const Group* columns = GroupOf(plan, "dgamma");
  const Group* rows = GroupOf(plan, "sum");
  ASSERT_NE(columns, nullptr);
  ASSERT_NE(rows, nullptr);
  EXPECT_TRUE(columns->mapping.row_tiled) << columns->mapping.ToString();
  EXPECT_EQ(columns->mapping.rows_per_block, rows->mapping.rows_per_block);
  EXPECT_EQ(columns->mapping.blocks_per_row,
            (1000 + rows->mapping.rows_per_block - 1) / rows->mapping.rows_per_block);
  // The row means reach the column sums regionally.
  bool regional = false;
  for (const Edge& e : plan.computations[0].kernels[0].edges) {
    regional |= e.producer->name() == "mean" && e.scheme == Scheme::kRegional &&
                std::find(columns->members.begin(), columns->members.end(), e.consumer) !=
                    columns->members.end();
  }
  EXPECT_TRUE(regional);
}

TEST(ColumnTiles, NotOnAGpu) {
  std::unique_ptr<Module> m = ParseModule(LayerNormBackward(1000, 64));
  ASSERT_NE(m, nullptr);
  const FusionPlan plan = Plan(*m, target::H100Spec());
  for (const Kernel& k : plan.computations[0].kernels) {
    for (const Group& g : k.groups) EXPECT_FALSE(g.mapping.row_tiled) << g.dominant->name();
  }
}

TEST(ColumnTiles, NotInTilesOfFewerThanSixteenRows) {
  // Rows of 120 KB: one a tile.
  std::unique_ptr<Module> m = ParseModule(LayerNormBackward(128, 30000));
  ASSERT_NE(m, nullptr);
  const FusionPlan plan = Plan(*m, target::HostCpuSpec());
  for (const Kernel& k : plan.computations[0].kernels) {
    for (const Group& g : k.groups) EXPECT_FALSE(g.mapping.row_tiled) << g.dominant->name();
  }
}

TEST(ColumnTiles, NotWhenTheColumnsShareNothingWithTheRows) {
  std::unique_ptr<Module> m = ParseModule(R"(HloModule apart
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[1000,64] parameter(0)
  z = f32[1000,64] parameter(1)
  zero = f32[] constant(0)
  rows = f32[1000] reduce(x, zero), dimensions={1}, to_apply=add
  columns = f32[64] reduce(z, zero), dimensions={0}, to_apply=add
  ROOT out = (f32[1000], f32[64]) tuple(rows, columns)
}
)");
  ASSERT_NE(m, nullptr);
  const FusionPlan plan = Plan(*m, target::HostCpuSpec());
  for (const Kernel& k : plan.computations[0].kernels) {
    for (const Group& g : k.groups) EXPECT_FALSE(g.mapping.row_tiled) << g.dominant->name();
  }
}

}  // namespace
}  // namespace seam::fusion
