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

// A NUL byte inside a string would end it wherever it is handed on as C
// text (the printed module, an error message): refused where it is, and
// the message shows it.
TEST(Robustness, NulByteInAStringIsAnError) {
  std::string text =
      "HloModule m\nENTRY e {\n  p = f32[8] parameter(0)\n"
      "  ROOT c = f32[8] custom-call(p), custom_call_target=\"ab";
  text += '\0';
  text += "cd\"\n}\n";
  absl::StatusOr<std::vector<std::unique_ptr<Module>>> modules = ParseHloText(text, "nul.hlo");
  ASSERT_FALSE(modules.ok());
  const std::string message(modules.status().message());
  EXPECT_EQ(message.find('\0'), std::string::npos);
  EXPECT_NE(message.find("nul.hlo:4:57: error: a NUL byte inside a string"), std::string::npos)
      << message;
  EXPECT_NE(message.find("custom_call_target=\"ab?cd\""), std::string::npos) << message;
}

// A UTF-8 byte order mark before the text (some editors write one) is not
// part of it.
TEST(Robustness, AByteOrderMarkIsSkipped) {
  const std::string text =
      "\xEF\xBB\xBFHloModule m\nENTRY e {\n  ROOT p = f32[8] parameter(0)\n}\n";
  absl::StatusOr<std::vector<std::unique_ptr<Module>>> modules = ParseHloText(text, "bom.hlo");
  ASSERT_TRUE(modules.ok()) << modules.status();
  EXPECT_EQ((*modules)[0]->name(), "m");
}

}  // namespace
}  // namespace seam
