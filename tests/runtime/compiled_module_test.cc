// A module compiled from text and run on arrays in the caller's memory (the
// Python API's path): the arrays are read where they lie, never written,
// never handed back as results; the results equal the interpreter's; a
// wrong argument is refused naming its parameter. And the lent buffers
// underneath: a copy or a grown buffer is Seam's own memory.
#include "seam/compiler/compiled_module.h"

#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "seam/eval/arguments.h"
#include "seam/eval/evaluator.h"
#include "seam/text/parser.h"

namespace seam::compiler {
namespace {

TEST(LentBytes, ReadTheMemoryInPlaceAndCopiesOwnTheirs) {
  std::vector<uint8_t> memory = {1, 2, 3, 4};
  {
    ByteBuffer lent = LentBytes(memory.data(), memory.size());
    EXPECT_EQ(lent.data(), memory.data());
    ByteBuffer copy = lent;
    EXPECT_NE(copy.data(), memory.data());
    EXPECT_EQ(copy, lent);
    ByteBuffer moved = std::move(lent);
    EXPECT_EQ(moved.data(), memory.data());
    moved.push_back(5);  // grows into memory of its own
    EXPECT_NE(moved.data(), memory.data());
    EXPECT_EQ(moved.size(), 5u);
  }
  EXPECT_EQ(memory, (std::vector<uint8_t>{1, 2, 3, 4}));  // never freed, never written
}

// The parameter is updated (a copy), passed through, and read.
constexpr char kModule[] = R"(HloModule lent
ENTRY e {
  a = f32[8,16] parameter(0)
  u = f32[2,16] parameter(1)
  i = s32[] constant(3)
  z = s32[] constant(0)
  d = f32[8,16] dynamic-update-slice(a, u, i, z)
  n = f32[8,16] negate(a)
  ROOT t = (f32[8,16], f32[8,16], f32[8,16]) tuple(d, a, n)
}
)";

TEST(CompiledModule, RunsOnArraysWhereTheyLieWithoutWritingThem) {
  CompileOptions options;
  absl::StatusOr<std::unique_ptr<CompiledModule>> compiled =
      CompiledModule::FromText(kModule, "lent", options);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(kModule, "lent");
  ASSERT_TRUE(module.ok());
  std::vector<Literal> arguments = RandomArguments(*(*module)->entry(), 7);
  std::vector<Literal> originals = arguments;
  std::vector<ArgumentView> views;
  for (const Literal& a : arguments) {
    views.push_back({a.shape(), a.bytes().data(), a.bytes().size()});
  }
  absl::StatusOr<Literal> got = (*compiled)->Run(views);
  ASSERT_TRUE(got.ok()) << got.status();
  Evaluator interpreter;
  absl::StatusOr<Literal> want = interpreter.Run(**module, originals);
  ASSERT_TRUE(want.ok());
  EXPECT_EQ(*got, *want);
  EXPECT_EQ(arguments, originals);
  // The passed-through argument is a result of its own, not the caller's memory.
  EXPECT_NE(got->tuple_elements()[1].bytes().data(), arguments[0].bytes().data());
}

TEST(CompiledModule, RefusesAWrongArgumentNamingItsParameter) {
  absl::StatusOr<std::unique_ptr<CompiledModule>> compiled =
      CompiledModule::FromText(kModule, "lent", CompileOptions{});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  std::vector<float> small(16), rows(32);
  const Shape wrong = Shape::Array(DType::kF32, {4, 4});
  const Shape right = Shape::Array(DType::kF32, {2, 16});
  std::vector<ArgumentView> views = {{wrong, small.data(), 64}, {right, rows.data(), 128}};
  absl::StatusOr<Literal> ran = (*compiled)->Run(views);
  EXPECT_EQ(ran.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(ran.status().message().find("parameter 'a'"), std::string::npos) << ran.status();
  views = {{right, rows.data(), 100}, {right, rows.data(), 128}};  // bytes short of the shape
  EXPECT_EQ((*compiled)->Run(views).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*compiled)->Run(std::vector<ArgumentView>{}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(CompiledModule, AModuleNoBackendRunsFailsAtCompileTime) {
  absl::StatusOr<std::unique_ptr<CompiledModule>> compiled = CompiledModule::FromText(
      "HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n"
      "  ROOT y = f32[4] custom-call(x), custom_call_target=\"NoSuchOp\"\n}\n",
      "custom", CompileOptions{});
  ASSERT_FALSE(compiled.ok());
  EXPECT_NE(compiled.status().message().find("NoSuchOp"), std::string::npos);
}

}  // namespace
}  // namespace seam::compiler
