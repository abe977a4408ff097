// The copy by whole blocks against oneDNN's own reorder, byte for byte
// (padding included), on the weights layouts its convolutions pick:
// blocks of 16, 32 and 64 output features, 48 (the last block padded),
// f32 and bf16, 1x1 and 3x3 windows; and the layouts it leaves to the
// reorder (two inner blocks, a source whose blocked dimension is not
// contiguous).
#include "seam/runtime/onednn_block_copy.h"

#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "seam/runtime/onednn.h"

namespace seam::runtime {
namespace {

// OIHW weights stored HWIO (the HLO convolutions' `01io`).
dnnl_memory_desc_t StoredHwio(const OneDnn& d, dnnl_data_type_t type, const dnnl_dims_t dims) {
  const int64_t o = dims[0], i = dims[1], w = dims[3];
  const dnnl_dims_t strides = {1, o, w * i * o, i * o};
  dnnl_memory_desc_t md;
  EXPECT_EQ(d.memory_desc_init_by_strides(&md, 4, dims, type, strides), dnnl_success);
  return md;
}

dnnl_memory_desc_t Tagged(const OneDnn& d, dnnl_data_type_t type, const dnnl_dims_t dims,
                          dnnl_format_tag_t tag) {
  dnnl_memory_desc_t md;
  EXPECT_EQ(d.memory_desc_init_by_tag(&md, 4, dims, type, tag), dnnl_success);
  return md;
}

std::vector<uint8_t> RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> bytes(n);
  // Small integers as f32 or bf16: no NaN patterns to compare.
  for (size_t k = 0; k + 1 < n; k += 2) bytes[k + 1] = static_cast<uint8_t>(0x3f + rng() % 2);
  return bytes;
}

// Copies a random array of `plain` into `blocked` both ways and compares.
void ExpectSameAsReorder(const OneDnn& d, const dnnl_memory_desc_t& plain,
                         const dnnl_memory_desc_t& blocked) {
  ASSERT_TRUE(CopiesIntoBlocks(plain, blocked));
  const std::vector<uint8_t> from = RandomBytes(d.memory_desc_get_size(&plain), 5);
  std::vector<uint8_t> want(d.memory_desc_get_size(&blocked), 0xab);
  std::vector<uint8_t> got(want.size(), 0xcd);
  absl::StatusOr<Primitive> reorder = CreateReorder(d, plain, blocked);
  ASSERT_TRUE(reorder.ok()) << reorder.status();
  ASSERT_TRUE(Execute(d, *reorder,
                      {{DNNL_ARG_FROM, &plain, from.data()}, {DNNL_ARG_TO, &blocked, want.data()}})
                  .ok());
  DestroyPrimitive(d, *reorder);
  CopyIntoBlocks(plain, from.data(), blocked, got.data());
  EXPECT_EQ(got, want);
}

TEST(CopyIntoBlocks, MatchesOneDnnsReorderOnWeightsLayouts) {
  absl::StatusOr<const OneDnn*> library = LoadOneDnn();
  if (!library.ok()) GTEST_SKIP() << "no oneDNN";
  const OneDnn& d = **library;
  struct Case {
    dnnl_dims_t dims;
    dnnl_format_tag_t tag;
    dnnl_data_type_t type;
  };
  const Case cases[] = {
      {{512, 256, 3, 3}, dnnl_Acdb32a, dnnl_f32},   // resnet50's late 3x3, half the features
      {{1024, 512, 1, 1}, dnnl_Acdb48a, dnnl_f32},  // 1024 = 21 blocks of 48 and 16 over
      {{64, 3, 7, 7}, dnnl_Acdb64a, dnnl_f32},
      {{40, 24, 3, 3}, dnnl_Acdb16a, dnnl_f32},  // 40 = 2 blocks of 16 and 8 over
      {{96, 64, 3, 3}, dnnl_Acdb32a, dnnl_bf16},
      {{20, 8, 1, 1}, dnnl_Acdb48a, dnnl_bf16},  // less than one block
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message() << c.dims[0] << "x" << c.dims[1] << "x" << c.dims[2] << "x"
                                    << c.dims[3] << " tag " << c.tag);
    ExpectSameAsReorder(d, StoredHwio(d, c.type, c.dims), Tagged(d, c.type, c.dims, c.tag));
  }
}

TEST(CopyIntoBlocks, LeavesOtherLayoutsToTheReorder) {
  absl::StatusOr<const OneDnn*> library = LoadOneDnn();
  if (!library.ok()) GTEST_SKIP() << "no oneDNN";
  const OneDnn& d = **library;
  const dnnl_dims_t dims = {64, 32, 3, 3};
  const dnnl_memory_desc_t hwio = StoredHwio(d, dnnl_f32, dims);
  // Two inner blocks (output and input features).
  EXPECT_FALSE(CopiesIntoBlocks(hwio, Tagged(d, dnnl_f32, dims, dnnl_ABcd16b16a)));
  // OIHW: the output features are not the contiguous dimension.
  EXPECT_FALSE(CopiesIntoBlocks(Tagged(d, dnnl_f32, dims, dnnl_abcd),
                                Tagged(d, dnnl_f32, dims, dnnl_Acdb32a)));
  // Another type.
  EXPECT_FALSE(CopiesIntoBlocks(hwio, Tagged(d, dnnl_bf16, dims, dnnl_Acdb32a)));
  // Plain to plain: a reorder's job (no block to copy by).
  EXPECT_FALSE(CopiesIntoBlocks(hwio, Tagged(d, dnnl_f32, dims, dnnl_abcd)));
}

}  // namespace
}  // namespace seam::runtime
