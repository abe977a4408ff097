// The parser's view of dialect quirks and the graph it builds.
#include "gtest/gtest.h"
#include "seam/text/parser.h"
#include "seam/text/printer.h"

namespace seam {
namespace {

std::unique_ptr<Module> Parse(const std::string& text) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text, "t.hlo");
  EXPECT_TRUE(module.ok()) << module.status().message();
  return module.ok() ? std::move(*module) : nullptr;
}

TEST(Parser, BuildsOperandsAndUsers) {
  auto module = Parse(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  a = f32[4] add(p, p)
  ROOT m = f32[4] multiply(a, p)
})");
  ASSERT_NE(module, nullptr);
  const Computation& entry = *module->entry();
  const Instruction* p = entry.parameter(0);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->users().size(), 2u);  // `add` counts once although it uses p twice
  EXPECT_EQ(entry.root()->name(), "m");
  EXPECT_EQ(entry.root()->operand(0)->name(), "a");
  EXPECT_EQ(entry.root()->location().line, 6);
  EXPECT_EQ(entry.root()->location().column, 8);
}

TEST(Parser, AcceptsOldDialect) {
  auto module = Parse(R"(HloModule SyncTensorsGraph.7

%AddComputation.1 (x.2: f32[], y.3: f32[]) -> f32[] {
  %x.2 = f32[] parameter(0)
  %y.3 = f32[] parameter(1)
  ROOT %add.4 = f32[] add(f32[] %x.2, f32[] %y.3)
}

ENTRY %main.9 (p0.5: f32[8,4]) -> (f32[8]) {
  %p0.5 = f32[8,4]{1,0} parameter(0)
  %constant.6 = f32[] constant(0)
  %reduce.7 = f32[8]{0} reduce(f32[8,4]{1,0} %p0.5, f32[] %constant.6), dimensions={1}, to_apply=%AddComputation.1
  ROOT %tuple.8 = (f32[8]{0}) tuple(f32[8]{0} %reduce.7)
}
)");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->name(), "SyncTensorsGraph.7");
  EXPECT_EQ(module->entry()->name(), "main.9");
  const Instruction* reduce = module->entry()->root()->operand(0);
  EXPECT_EQ(reduce->opcode(), Opcode::kReduce);
  ASSERT_TRUE(reduce->attrs().to_apply.has_value());
  EXPECT_EQ((*reduce->attrs().to_apply)->name(), "AddComputation.1");
  EXPECT_EQ(*reduce->attrs().dimensions, IntList{1});
  EXPECT_TRUE(module->computations()[0]->has_signature());
}

TEST(Parser, MissingRootEntryAndHeaderHaveDefaults) {
  auto module = Parse(R"(
c {
  a = f32[] parameter(0)
  b = f32[] negate(a)
}
main {
  x = f32[] parameter(0)
  y = f32[] call(x), to_apply=c
})");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->name(), "t");  // from the file name
  EXPECT_EQ(module->entry()->name(), "main");
  EXPECT_EQ(module->computations()[0]->root()->name(), "b");
}

// A name taken from a file name must print as `HloModule <name>` and parse
// back: characters a name cannot hold become '_'.
TEST(Parser, ModuleNamesFromFileNamesPrintAndParseBack) {
  absl::StatusOr<std::unique_ptr<Module>> module =
      ParseHloModule("ENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n", "dir/my model<1>.hlo");
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ((*module)->name(), "my_model_1_");
  EXPECT_TRUE(ParseHloModule(PrintModule(**module)).ok());
}

// A constant's buffer is only allocated when its text could fill it.
TEST(Parser, ConstantsLargerThanTheirTextAreRefusedBeforeAllocating) {
  absl::StatusOr<std::unique_ptr<Module>> module =
      ParseHloModule("ENTRY e {\n  ROOT z = f32[9007199254740992] constant(0)\n}\n");
  ASSERT_FALSE(module.ok());
  EXPECT_NE(module.status().message().find("has 9007199254740992 elements; the text holds fewer"),
            absl::string_view::npos)
      << module.status();
}

TEST(Parser, KeepsUnknownAttributesVerbatim) {
  auto module = Parse(R"(HloModule m, is_scheduled=true
ENTRY e {
  p = f32[2] parameter(0), sharding={devices=[2]<=[2]}, metadata={op_name="a/b" source_line=3}
  ROOT c = f32[2] custom-call(p), custom_call_target="Foo", backend_config={"x": {y: "z"}},
    api_version=API_VERSION_STATUS_RETURNING
})");
  ASSERT_NE(module, nullptr);
  const Instruction* root = module->entry()->root();
  EXPECT_EQ(*root->attrs().custom_call_target, "Foo");
  ASSERT_NE(root->attrs().FindVerbatim("backend_config"), nullptr);
  EXPECT_EQ(root->attrs().FindVerbatim("backend_config")->value, R"({"x": {y: "z"}})");
  EXPECT_EQ(root->attrs().FindVerbatim("api_version")->value,
            "API_VERSION_STATUS_RETURNING");
  EXPECT_EQ(module->entry()->parameter(0)->attrs().FindVerbatim("sharding")->value,
            "{devices=[2]<=[2]}");
}

TEST(Parser, ErrorsNameFileLineAndColumnWithACaret) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(
      "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] frob(p)\n}\n",
      "bad.hlo");
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().message(),
            "bad.hlo:4:19: error: unknown opcode 'frob'\n"
            "  ROOT r = f32[2] frob(p)\n"
            "                  ^");
}

TEST(Parser, SplitsModulesOnSeparatorLines) {
  absl::StatusOr<std::vector<std::unique_ptr<Module>>> modules = ParseHloText(
      "HloModule a\nENTRY e {\n ROOT p = f32[] parameter(0)\n}\n// -----\n"
      "HloModule b\nENTRY e {\n ROOT p = s32[] parameter(0)\n}\n// -----\n",
      "two.hlo");
  ASSERT_TRUE(modules.ok()) << modules.status().message();
  ASSERT_EQ(modules->size(), 2u);
  EXPECT_EQ((*modules)[1]->name(), "b");
  EXPECT_EQ((*modules)[1]->entry()->root()->location().line, 8);
}

}  // namespace
}  // namespace seam
