// CloneModule copies exactly: every corpus module prints the same as its
// copy, and the copy owns its instructions (changing it leaves the original).
#include "seam/ir/module_clone.h"

#include <filesystem>

#include "gtest/gtest.h"
#include "seam/ir/verifier.h"
#include "seam/text/parser.h"
#include "seam/text/printer.h"

namespace seam {
namespace {

TEST(ModuleClone, PrintsLikeTheOriginalOnTheCorpus) {
  int modules = 0;
  for (const auto& entry : std::filesystem::directory_iterator(SEAM_SOURCE_ROOT "/tests/corpus/hlo")) {
    if (entry.path().extension() == ".md") continue;
    absl::StatusOr<std::vector<std::unique_ptr<Module>>> parsed = ParseHloFile(entry.path().string());
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    for (const auto& module : *parsed) {
      std::unique_ptr<Module> copy = CloneModule(*module);
      EXPECT_EQ(PrintModule(*copy), PrintModule(*module)) << entry.path();
      EXPECT_TRUE(VerifyModule(*copy).ok()) << entry.path();
      ++modules;
    }
  }
  EXPECT_GE(modules, 22);
}

TEST(ModuleClone, TheCopyIsIndependent) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=add
})");
  ASSERT_TRUE(module.ok()) << module.status();
  std::unique_ptr<Module> copy = CloneModule(**module);
  std::string before = PrintModule(**module);
  // The copy's reduce calls the copy's reducer.
  Instruction* reduce = copy->entry()->root();
  ASSERT_EQ(reduce->CalledComputations().size(), 1u);
  EXPECT_EQ(reduce->CalledComputations()[0]->parent(), copy.get());
  copy->entry()->root()->set_name("renamed");
  EXPECT_EQ(PrintModule(**module), before);
}

}  // namespace
}  // namespace seam
