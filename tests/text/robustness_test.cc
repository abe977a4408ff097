// Bad input never crashes the parser: every prefix of a real module, and
// deterministic random mutations of it, either parse or give a located error.
// Run under ASan + UBSan in CI, this is a small, repeatable fuzz pass.
#include <random>
#include <string>

#include "gtest/gtest.h"
#include "seam/text/parser.h"
#include "seam/text/printer.h"

namespace seam {
namespace {

std::string ReadCorpus(const std::string& name) {
  absl::StatusOr<SourceFile> file =
      SourceFile::Read(SEAM_SOURCE_ROOT "/tests/corpus/hlo/" + name);
  EXPECT_TRUE(file.ok());
  return file.ok() ? file->text() : "";
}

void ExpectParsesOrFailsCleanly(const std::string& text) {
  absl::StatusOr<std::vector<std::unique_ptr<Module>>> modules =
      ParseHloText(text, "fuzz.hlo");
  if (modules.ok()) {
    // Whatever parsed must print and reparse.
    std::string printed = PrintModules(*modules);
    EXPECT_TRUE(ParseHloText(printed, "reprint.hlo").ok()) << printed;
    return;
  }
  EXPECT_EQ(modules.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(modules.status().message()).rfind("fuzz.hlo:", 0), 0u)
      << modules.status().message();
}

TEST(Robustness, EveryPrefixOfARealModule) {
  std::string text = ReadCorpus("xla_layer_norm_1x4096x768_bf16.hlo");
  ASSERT_FALSE(text.empty());
  for (size_t n = 0; n < text.size(); ++n) {
    SCOPED_TRACE(n);
    ExpectParsesOrFailsCleanly(text.substr(0, n));
  }
}

TEST(Robustness, RandomByteMutations) {
  const std::string alphabet = "{}()[]<>=,:;%\"'/*-_.x0123456789abfsTROOTENTRY \n";
  for (const char* name :
       {"xla_mha_block_1x12x128x64_bf16.hlo", "xla_xnn_parallel_dots_optimized.hlo",
        "hloenv_toy_nn_module_0093.jit_loss.44.before_optimizations.txt"}) {
    std::string text = ReadCorpus(name);
    ASSERT_FALSE(text.empty());
    std::mt19937 rng(1234);
    for (int trial = 0; trial < 400; ++trial) {
      std::string mutated = text;
      int edits = 1 + static_cast<int>(rng() % 3);
      for (int e = 0; e < edits; ++e) {
        size_t at = rng() % mutated.size();
        switch (rng() % 3) {
          case 0: mutated[at] = alphabet[rng() % alphabet.size()]; break;
          case 1: mutated.erase(at, 1 + rng() % 8); break;
          default: mutated.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
        }
      }
      SCOPED_TRACE(std::string(name) + " trial " + std::to_string(trial));
      ExpectParsesOrFailsCleanly(mutated);
    }
  }
}

}  // namespace
}  // namespace seam
