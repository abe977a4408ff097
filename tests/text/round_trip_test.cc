// Every real module in the corpus parses, verifies, and prints to a fixpoint:
// print(parse(print(m))) == print(m), and the reparsed module has the same
// computations, instructions, opcodes, shapes, operands and attributes.
#include <filesystem>
#include <string>
#include <vector>

#include "../common/test_names.h"
#include "gtest/gtest.h"
#include "seam/text/parser.h"
#include "seam/text/printer.h"

namespace seam {
namespace {

std::vector<std::string> CorpusFiles() {
  std::vector<std::string> files;
  for (const auto& entry :
       std::filesystem::directory_iterator(SEAM_SOURCE_ROOT "/tests/corpus/hlo")) {
    if (entry.path().extension() != ".md") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Compares two modules structurally, reporting the first difference.
void ExpectSameStructure(const Module& a, const Module& b) {
  ASSERT_EQ(a.name(), b.name());
  ASSERT_EQ(a.attributes(), b.attributes());
  ASSERT_EQ(a.computations().size(), b.computations().size());
  ASSERT_EQ(a.entry()->name(), b.entry()->name());
  for (size_t c = 0; c < a.computations().size(); ++c) {
    const Computation& ca = *a.computations()[c];
    const Computation& cb = *b.computations()[c];
    ASSERT_EQ(ca.name(), cb.name());
    ASSERT_EQ(ca.root()->name(), cb.root()->name()) << ca.name();
    std::vector<Instruction*> ia = ca.MakePostOrder();
    std::vector<Instruction*> ib = cb.MakePostOrder();
    ASSERT_EQ(ia.size(), ib.size()) << ca.name();
    for (size_t i = 0; i < ia.size(); ++i) {
      const Instruction& x = *ia[i];
      const Instruction& y = *ib[i];
      SCOPED_TRACE(x.name());
      ASSERT_EQ(x.name(), y.name());
      ASSERT_EQ(x.opcode(), y.opcode());
      ASSERT_EQ(x.shape(), y.shape());
      ASSERT_EQ(x.operand_count(), y.operand_count());
      for (int k = 0; k < x.operand_count(); ++k) {
        ASSERT_EQ(x.operand(k)->name(), y.operand(k)->name());
      }
      ASSERT_EQ(x.attrs().verbatim, y.attrs().verbatim);
      ASSERT_EQ(x.attrs().dimensions, y.attrs().dimensions);
      ASSERT_EQ(x.attrs().window, y.attrs().window);
      ASSERT_EQ(x.attrs().dim_labels, y.attrs().dim_labels);
      ASSERT_EQ(x.attrs().slice, y.attrs().slice);
      std::vector<Computation*> called_x = x.CalledComputations();
      std::vector<Computation*> called_y = y.CalledComputations();
      ASSERT_EQ(called_x.size(), called_y.size());
      for (size_t k = 0; k < called_x.size(); ++k) {
        ASSERT_EQ(called_x[k]->name(), called_y[k]->name());
      }
      ASSERT_EQ(x.literal() == nullptr, y.literal() == nullptr);
      if (x.literal() != nullptr) {
        ASSERT_EQ(*x.literal(), *y.literal());
      }
    }
  }
}

class CorpusRoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(CorpusRoundTrip, PrintParsePrintIsAFixpoint) {
  absl::StatusOr<std::vector<std::unique_ptr<Module>>> first = ParseHloFile(GetParam());
  ASSERT_TRUE(first.ok()) << first.status().message();
  std::string printed = PrintModules(*first);

  absl::StatusOr<std::vector<std::unique_ptr<Module>>> second =
      ParseHloText(printed, "first-print");
  ASSERT_TRUE(second.ok()) << second.status().message();
  EXPECT_EQ(PrintModules(*second), printed);

  ASSERT_EQ(first->size(), second->size());
  for (size_t i = 0; i < first->size(); ++i) {
    ExpectSameStructure(*(*first)[i], *(*second)[i]);
  }
}

std::string TestName(const ::testing::TestParamInfo<std::string>& info) {
  return seam::testing::TestIdentifier(std::filesystem::path(info.param).stem().string());
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusRoundTrip, ::testing::ValuesIn(CorpusFiles()),
                         TestName);

TEST(CorpusRoundTrip, CorpusHasAllTwentyTwoModules) {
  EXPECT_EQ(CorpusFiles().size(), 22u);
}

TEST(CorpusRoundTrip, KernelReuseFileHoldsFiveModules) {
  auto modules =
      ParseHloFile(SEAM_SOURCE_ROOT "/tests/corpus/hlo/xla_gpu_tests_kernel_reuse.hlo");
  ASSERT_TRUE(modules.ok()) << modules.status().message();
  EXPECT_EQ(modules->size(), 5u);
}

}  // namespace
}  // namespace seam
