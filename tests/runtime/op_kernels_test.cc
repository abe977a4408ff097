// Instructions outside the stitched kernels (gather, scatter, dynamic-
// update-slice, reduce-window, sort, rng-bit-generator) run as generated code of
// their own, never in the interpreter, and equal the interpreter: indices
// clamped or skipped at the edges, duplicate scatter targets combined in
// order, windows through padding and dilation, equal sort keys kept in
// order, rng's documented stream bit for bit.
#include <string>

#include "backends.h"
#include "gtest/gtest.h"
#include "seam/compiler/cpu_compiler.h"
#include "seam/eval/arguments.h"
#include "seam/runtime/executable.h"

namespace seam::runtime {
namespace {

struct OpCase {
  const char* name;
  const char* text;
};

const OpCase kCases[] = {
    {"gather_embedding", R"(HloModule m
ENTRY e {
  table = f32[50,16] parameter(0)
  ids = s32[10,1] parameter(1)
  ROOT rows = f32[10,16] gather(table, ids), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,16}
})"},
    {"gather_clamped", R"(HloModule m
ENTRY e {
  table = f32[50,16] parameter(0)
  ids = s32[4] constant({-3, 49, 100, 7})
  ROOT rows = f32[4,3] gather(table, ids), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}
})"},
    {"gather_two_dims", R"(HloModule m
ENTRY e {
  x = f32[4,5,6] parameter(0)
  ids = s32[3,2] parameter(1)
  ROOT g = f32[3,5,2] gather(x, ids), offset_dims={1,2}, collapsed_slice_dims={0}, start_index_map={0,2}, index_vector_dim=1, slice_sizes={1,5,2}
})"},
    {"gather_batching", R"(HloModule m
ENTRY e {
  x = f32[3,7,4] parameter(0)
  ids = s32[3,2,1] parameter(1)
  ROOT g = f32[3,2,4] gather(x, ids), offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1,4}
})"},
    {"scatter_add_duplicates", R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[8,16] parameter(0)
  ids = s32[20,1] parameter(1)
  u = f32[20,16] parameter(2)
  ROOT r = f32[8,16] scatter(x, ids, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
})"},
    {"scatter_assign_out_of_bounds", R"(HloModule m
second {
  a = f32[] parameter(0)
  ROOT b = f32[] parameter(1)
}
ENTRY e {
  x = f32[8,16] parameter(0)
  ids = s32[4,1] constant({ {-1}, {7}, {8}, {2} })
  u = f32[4,16] parameter(1)
  ROOT r = f32[8,16] scatter(x, ids, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=second
})"},
    {"scatter_wide_windows_parallel", R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4,40000] parameter(0)
  ids = s32[6,1] parameter(1)
  u = f32[6,40000] parameter(2)
  ROOT r = f32[4,40000] scatter(x, ids, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
})"},
    {"scatter_overlapping_windows", R"(HloModule m
mul {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] multiply(a, b)
}
ENTRY e {
  x = f32[10] parameter(0)
  ids = s32[5,1] parameter(1)
  u = f32[5,3] parameter(2)
  ROOT r = f32[10] scatter(x, ids, u), update_window_dims={1}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=mul
})"},
    {"scatter_bf16_max", R"(HloModule m
max {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT m = bf16[] maximum(a, b)
}
ENTRY e {
  x = bf16[6,5] parameter(0)
  ids = s64[7] parameter(1)
  u = bf16[7,5] parameter(2)
  ROOT r = bf16[6,5] scatter(x, ids, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=max
})"},
    {"update_slice_clamped", R"(HloModule m
ENTRY e {
  x = f32[9,33] parameter(0)
  u = f32[4,8] parameter(1)
  i = s32[] constant(7)
  j = s32[] constant(-2)
  ROOT r = f32[9,33] dynamic-update-slice(x, u, i, j)
})"},
    {"update_slice_inside", R"(HloModule m
ENTRY e {
  x = f32[3,9,33] parameter(0)
  u = f32[2,4,8] parameter(1)
  i = s32[] constant(1)
  j = s32[] constant(3)
  k = s32[] constant(5)
  ROOT r = f32[3,9,33] dynamic-update-slice(x, u, i, j, k)
})"},
    {"max_pool_padded", R"(HloModule m
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[2,9,9,3] parameter(0)
  lowest = f32[] constant(-inf)
  ROOT p = f32[2,5,5,3] reduce-window(x, lowest), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0}, to_apply=max
})"},
    {"max_pool_rows_bf16", R"(HloModule m
max {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT m = bf16[] maximum(a, b)
}
ENTRY e {
  x = bf16[1,7,7,300] parameter(0)
  lowest = bf16[] constant(-inf)
  ROOT p = bf16[1,4,4,300] reduce-window(x, lowest), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0}, to_apply=max
})"},
    {"sum_pool_rows_padded_batch", R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[2,5,5,20] parameter(0)
  zero = f32[] constant(0.5)
  ROOT p = f32[3,5,5,20] reduce-window(x, zero), window={size=1x2x2x1 pad=1_0x0_1x0_1x0_0}, to_apply=add
})"},
    {"sum_pool_nchw_padded", R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[2,3,6,6] parameter(0)
  zero = f32[] constant(0)
  ROOT p = f32[2,3,6,6] reduce-window(x, zero), window={size=1x1x3x3 pad=0_0x0_0x1_1x1_1}, to_apply=add
})"},
    {"sum_window_dilated", R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[7,6] parameter(0)
  zero = f32[] constant(0)
  ROOT p = f32[14,2] reduce-window(x, zero), window={size=2x3 stride=1x2 pad=1_1x0_2 lhs_dilate=2x1 rhs_dilate=1x2}, to_apply=add
})"},
    {"sort_rows", R"(HloModule m
less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}
ENTRY e {
  x = f32[6,37] parameter(0)
  ROOT s = f32[6,37] sort(x), dimensions={1}, to_apply=less
})"},
    {"sort_keys_and_values_stable", R"(HloModule m
greater {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = f32[] parameter(3)
  ROOT gt = pred[] compare(a, b), direction=GT
}
ENTRY e {
  keys = s32[5,64,3] parameter(0)
  values = f32[5,64,3] parameter(1)
  ROOT s = (s32[5,64,3], f32[5,64,3]) sort(keys, values), dimensions={1}, is_stable=true, to_apply=greater
})"},
    {"rng_bits", R"(HloModule m
ENTRY e {
  state = u64[2] parameter(0)
  ROOT r = (u64[2], u32[40,7]) rng-bit-generator(state), algorithm=rng_default
})"},
};

class OpKernels : public ::testing::TestWithParam<OpCase> {};

TEST_P(OpKernels, GeneratedCodeEqualsTheInterpreter) {
  std::unique_ptr<Module> module = testing::ParseFirst(GetParam().text, GetParam().name);
  ASSERT_NE(module, nullptr);
  absl::StatusOr<compiler::Compiled<runtime::Executable>> executable =
      compiler::CompileForCpu(*module, compiler::CpuOptions{});
  ASSERT_TRUE(executable.ok()) << executable.status();
  const ExecutableStats& stats = (*executable)->stats();
  EXPECT_GE(stats.op_kernels, 1);
  for (const std::string& f : stats.fallbacks) ADD_FAILURE() << "interpreted: " << f;
  for (uint64_t seed : {0, 1, 2}) {
    std::vector<Literal> arguments = RandomArguments(*module->entry(), seed);
    testing::ExpectSameAsInterpreter(**executable, *module, arguments);
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, OpKernels, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace seam::runtime
