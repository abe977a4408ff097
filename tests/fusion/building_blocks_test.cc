// The pieces the planners reason with: op classes (every opcode has one;
// reductions classed by which dimensions they fold), rows of values under
// data movement, and thread mappings (packing, splitting, vertical packing).
#include "../common/hlo_text.h"
#include "gtest/gtest.h"
#include "seam/fusion/op_class.h"
#include "seam/fusion/row_space.h"
#include "seam/fusion/thread_mapping.h"
#include "seam/text/parser.h"

namespace seam::fusion {
namespace {

using testing::FindInstruction;
using testing::ParseModule;

// Every opcode of the table gets a class, and only elementwise, data
// movement and reduce ops are ever fusible.
TEST(OpClass, EveryOpcodeIsClassified) {
  for (int k = 0; k < kOpcodeCount; ++k) {
    Opcode op = static_cast<Opcode>(k);
    Instruction i("i", op, Shape::Array(DType::kF32, {4}));
    OpClass c = ClassifyOp(i);
    EXPECT_NE(OpClassName(c), "?") << OpcodeName(op);
    if (IsFusible(c)) {
      OpCategory category = OpcodeCategory(op);
      EXPECT_TRUE(category == OpCategory::kElementwise || category == OpCategory::kDataMovement ||
                  category == OpCategory::kReduction)
          << OpcodeName(op);
    }
  }
}

constexpr char kReductions[] = R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[8,1,16,32] parameter(0)
  z = f32[] constant(0)
  row = f32[8,1,16] reduce(x, z), dimensions={3}, to_apply=add
  row2 = f32[8] reduce(x, z), dimensions={1,2,3}, to_apply=add
  col = f32[16,32] reduce(x, z), dimensions={0,1}, to_apply=add
  mixed = f32[8,32] reduce(x, z), dimensions={1,2}, to_apply=add
  full = f32[] reduce(x, z), dimensions={0,1,2,3}, to_apply=add
  ex = f32[8,1,16,32] exponential(x)
  ad = f32[8,1,16,32] add(x, x)
  b = f32[8,1,16,32,4] broadcast(x), dimensions={0,1,2,3}
  d = f32[32,32] dot(mixed, mixed), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  ROOT t = (f32[8,1,16], f32[8], f32[16,32], f32[8,32], f32[]) tuple(row, row2, col, mixed, full)
}
)";

TEST(OpClass, ReductionsByTheDimensionsTheyFold) {
  std::unique_ptr<Module> m = ParseModule(kReductions);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(ClassifyOp(*FindInstruction(*m, "row")), OpClass::kRowReduction);
  EXPECT_EQ(ClassifyOp(*FindInstruction(*m, "row2")), OpClass::kRowReduction);
  EXPECT_EQ(ClassifyOp(*FindInstruction(*m, "col")), OpClass::kColumnReduction);
  EXPECT_EQ(ClassifyOp(*FindInstruction(*m, "mixed")), OpClass::kColumnReduction);
  EXPECT_EQ(ClassifyOp(*FindInstruction(*m, "full")), OpClass::kFullReduction);
  EXPECT_EQ(ClassifyOp(*FindInstruction(*m, "ex")), OpClass::kExpensiveElementwise);
  EXPECT_EQ(ClassifyOp(*FindInstruction(*m, "ad")), OpClass::kLightElementwise);
  EXPECT_EQ(ClassifyOp(*FindInstruction(*m, "b")), OpClass::kBroadcast);
  EXPECT_EQ(ClassifyOp(*FindInstruction(*m, "d")), OpClass::kLibrary);
  EXPECT_EQ(ClassifyOp(*FindInstruction(*m, "x")), OpClass::kFree);

  ReductionShape row = GetReductionShape(*FindInstruction(*m, "row"));
  EXPECT_EQ(row.rows, 128);
  EXPECT_EQ(row.row_length, 32);
  ReductionShape mixed = GetReductionShape(*FindInstruction(*m, "mixed"));
  EXPECT_EQ(mixed.rows, 256);
  EXPECT_EQ(mixed.row_length, 16);
  EXPECT_EQ(mixed.outer, 8);
}

constexpr char kRows[] = R"(
HloModule m
ENTRY e {
  v = f32[64] parameter(0)
  g = f32[32] parameter(1)
  x = f32[64,32] parameter(2)
  along_rows = f32[64,32] broadcast(v), dimensions={0}
  along_columns = f32[64,32] broadcast(g), dimensions={1}
  r = f32[8,8,32] reshape(x)
  t = f32[32,64] transpose(x), dimensions={1,0}
  s = f32[64,16] slice(x), slice={[0:64], [0:16]}
  ROOT out = (f32[64,32], f32[64,32], f32[8,8,32], f32[32,64], f32[64,16]) tuple(along_rows, along_columns, r, t, s)
}
)";

TEST(RowSpace, DataMovementKeepsOrMixesRows) {
  std::unique_ptr<Module> m = ParseModule(kRows);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(SplitFor(FindInstruction(*m, "x")->shape(), 64), 1);
  EXPECT_EQ(SplitFor(FindInstruction(*m, "r")->shape(), 64), 2);
  EXPECT_FALSE(SplitFor(FindInstruction(*m, "x")->shape(), 10).has_value());

  OperandRows broadcast_rows = OperandRowsOf(*FindInstruction(*m, "along_rows"), 1, 0);
  EXPECT_EQ(broadcast_rows.kind, OperandRows::kSameRows);
  EXPECT_EQ(broadcast_rows.split, 1);
  EXPECT_EQ(OperandRowsOf(*FindInstruction(*m, "along_columns"), 1, 0).kind,
            OperandRows::kInvariant);
  OperandRows reshape_rows = OperandRowsOf(*FindInstruction(*m, "r"), 2, 0);
  EXPECT_EQ(reshape_rows.kind, OperandRows::kSameRows);
  EXPECT_EQ(reshape_rows.split, 1);
  EXPECT_EQ(OperandRowsOf(*FindInstruction(*m, "t"), 1, 0).kind, OperandRows::kMixed);
  EXPECT_EQ(OperandRowsOf(*FindInstruction(*m, "s"), 1, 0).kind, OperandRows::kSameRows);
}

TEST(ThreadMapping, ShortRowsArePackedLongFewRowsAreSplit) {
  target::DeviceSpec h100 = target::H100Spec();
  ThreadMapping short_rows = ChooseMapping({MappingKind::kRow, 750000, 32, 4, true}, h100);
  EXPECT_GT(short_rows.rows_per_block, 1);
  EXPECT_EQ(short_rows.blocks_per_row, 1);
  EXPECT_LE(short_rows.threads_per_block, h100.max_threads_per_block);

  ThreadMapping long_rows = ChooseMapping({MappingKind::kRow, 64, 30000, 4, true}, h100);
  EXPECT_GT(long_rows.blocks_per_row, 1);
  EXPECT_EQ(long_rows.rows_per_block, 1);
  EXPECT_EQ(long_rows.blocks, 64 * long_rows.blocks_per_row);

  ThreadMapping many = ChooseMapping({MappingKind::kRow, 1 << 20, 1024, 4, true}, h100);
  EXPECT_GT(many.blocks, h100.BlocksPerWave());
  PackVertically(many, h100);
  EXPECT_LE(many.blocks, h100.BlocksPerWave());
  EXPECT_GE(many.blocks * many.tasks_per_block, (1 << 20));
}

TEST(ThreadMapping, ConsumersAlignOnTheirProducersBlocks) {
  target::DeviceSpec h100 = target::H100Spec();
  ThreadMapping producer = ChooseMapping({MappingKind::kRow, 4096, 32, 4, true}, h100);
  ThreadMapping consumer = ChooseMapping({MappingKind::kRow, 4096, 32 * 8, 4, false}, h100);
  ASSERT_TRUE(AlignRows(consumer, producer, h100));
  EXPECT_EQ(consumer.rows_per_block, producer.rows_per_block);
  EXPECT_EQ(consumer.blocks, producer.blocks);

  ThreadMapping split = ChooseMapping({MappingKind::kRow, 64, 30000, 4, true}, h100);
  ThreadMapping reader = ChooseMapping({MappingKind::kRow, 64, 30000, 4, false}, h100);
  EXPECT_FALSE(AlignRows(reader, split, h100));  // split partials need a global stage
}

}  // namespace
}  // namespace seam::fusion
