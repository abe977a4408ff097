// Attention at decode, one query against a cache of keys and values per
// head (GPT-2's shapes, f32 and bf16): after the default passes its small
// dots are reductions (dot-strength-reduction) run by stitched kernels, not
// library calls, and every strategy agrees with the interpreter on the
// module as written. The weights times the values sum across the cache's
// rows with the weights broadcast along them: the kernel's loop over the
// kept elements nests the innermost dimension inside the others.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "backends.h"
#include "gtest/gtest.h"
#include "seam/compiler/cpu_compiler.h"
#include "seam/eval/arguments.h"
#include "seam/fusion/strategies.h"
#include "seam/passes/pipeline.h"
#include "seam/runtime/executable.h"

namespace seam::runtime {
namespace {

constexpr char kDecodeAttention[] = R"(HloModule decode_attention

ENTRY e {
  q = T[1,4,12,64] parameter(0)
  k = T[128,4,12,64] parameter(1)
  v = T[128,4,12,64] parameter(2)
  s = T[4,12,1,128] dot(q, k), lhs_batch_dims={1,2}, lhs_contracting_dims={3}, rhs_batch_dims={1,2}, rhs_contracting_dims={3}
  ROOT o = T[4,12,1,64] dot(s, v), lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={1,2}, rhs_contracting_dims={0}
}
)";

TEST(StrengthReducedDots, DecodeAttentionRunsInKernelsAndMatchesTheInterpreter) {
  for (const char* type : {"f32", "bf16"}) {
    SCOPED_TRACE(type);
    const std::string text =
        absl::StrReplaceAll(kDecodeAttention, {{"T[", absl::StrCat(type, "[")}});
    std::unique_ptr<Module> written = testing::ParseFirst(text, "decode_attention");
    std::unique_ptr<Module> optimized = testing::ParseFirst(text, "decode_attention");
    ASSERT_NE(written, nullptr);
    absl::StatusOr<Pipeline> pipeline = Pipeline::Parse("default");
    ASSERT_TRUE(pipeline.ok()) << pipeline.status();
    ASSERT_TRUE(pipeline->Run(*optimized).ok());
    for (fusion::Strategy strategy : {fusion::Strategy::kStitch, fusion::Strategy::kXla}) {
      SCOPED_TRACE(fusion::StrategyName(strategy));
      compiler::CpuOptions options;
      options.plan.strategy = strategy;
      absl::StatusOr<compiler::Compiled<runtime::Executable>> exe =
          compiler::CompileForCpu(*optimized, options);
      ASSERT_TRUE(exe.ok()) << exe.status();
      EXPECT_EQ((*exe)->stats().blas_calls, 0);
      EXPECT_TRUE((*exe)->stats().fallbacks.empty()) << (*exe)->stats().fallbacks.front();
      std::vector<Literal> arguments = RandomArguments(*written->entry(), /*seed=*/3);
      testing::ExpectSameAsInterpreter(**exe, *written, arguments);
    }
  }
}

}  // namespace
}  // namespace seam::runtime
