// The verifier: every real module in the corpus verifies; malformed modules
// fail with a message naming the instruction and the location it was
// written at.
#include "seam/ir/verifier.h"

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "seam/text/parser.h"
#include "seam/util/error_location.h"

namespace seam {
namespace {

std::vector<std::string> CorpusFiles() {
  std::string dir = SEAM_SOURCE_ROOT "/tests/corpus/hlo";
  if (!std::filesystem::exists(dir)) dir = "/work/shared/hlo";
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".md") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(Verifier, EveryCorpusModuleVerifies) {
  std::vector<std::string> files = CorpusFiles();
  EXPECT_GE(files.size(), 22u);
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    auto modules = ParseHloFile(file, ParseOptions{.verify = false});
    ASSERT_TRUE(modules.ok()) << modules.status().message();
    for (const auto& module : *modules) {
      absl::Status status = VerifyModule(*module);
      std::optional<SourceLocation> at = ErrorLocation(status);
      EXPECT_TRUE(status.ok()) << (at ? absl::StrCat(at->line, ":", at->column, ": ") : "")
                               << status.message();
    }
  }
}

// Parses `text` without verifying, then verifies it.
absl::Status Verify(const std::string& text) {
  auto module = ParseHloModule(text, "t.hlo", ParseOptions{.verify = false});
  if (!module.ok()) return module.status();
  return VerifyModule(**module);
}

// The error's location as "line:col", or "unknown".
std::string Where(const absl::Status& status) {
  std::optional<SourceLocation> at = ErrorLocation(status);
  return at ? absl::StrCat(at->line, ":", at->column) : "unknown";
}

TEST(Verifier, ShapeMismatchPointsAtTheInstruction) {
  absl::Status status = Verify(R"(HloModule m
ENTRY e {
  p = f32[2,3] parameter(0)
  a = f32[2,3] add(p, p)
  ROOT b = f32[2,4] multiply(a, p)
})");
  EXPECT_EQ(status.message(),
            "'b': expected shape f32[2,3] from 'multiply' of its operands, got f32[2,4]");
  EXPECT_EQ(Where(status), "5:8");
}

TEST(Verifier, InferenceErrorsNameTheInstruction) {
  absl::Status status = Verify(R"(HloModule m
ENTRY e {
  p = f32[2,3] parameter(0)
  q = f32[3] parameter(1)
  ROOT a = f32[2,3] add(p, q)
})");
  EXPECT_EQ(status.message(),
            "'a': operands of 'add' must have the same dimensions, got f32[2,3] and f32[3]");
  EXPECT_EQ(Where(status), "5:8");
}

TEST(Verifier, ReduceKeepsTheDimensionsNotReduced) {
  absl::Status status = Verify(R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  p = f32[4,8] parameter(0)
  z = f32[] constant(0)
    r = f32[8] reduce(p, z), dimensions={1}, to_apply=add
  ROOT n = f32[8] negate(r)
})");
  EXPECT_EQ(status.message(),
            "'r': expected shape f32[4] from 'reduce' of its operands, got f32[8]");
  EXPECT_EQ(Where(status), "10:5");
}

// The library ops beside dot and convolution: what each result must be.
TEST(Verifier, LinearAlgebraOpsHaveTheirShapes) {
  EXPECT_TRUE(Verify(R"(HloModule m
ENTRY e {
  p = f32[4,16] parameter(0)
  r = c64[4,9] fft(p), fft_type=RFFT, fft_length={16}
  i = f32[4,16] fft(r), fft_type=IRFFT, fft_length={16}
  t = (f32[4,3], s32[4,3]) topk(p), k=3, largest=true
  a = f32[2,3,3] parameter(1)
  c = f32[2,3,3] cholesky(a), lower=true
  b = f32[2,5,3] parameter(2)
  s = f32[2,5,3] triangular-solve(a, b), left_side=false, lower=true, transpose_a=NO_TRANSPOSE
  ROOT u = (f32[4,16], (f32[4,3], s32[4,3]), f32[2,3,3], f32[2,5,3]) tuple(i, t, c, s)
})")
                  .ok());
  const std::pair<const char*, const char*> wrong[] = {
      {"p = f32[4,8] parameter(0)\n  ROOT t = (f32[4,16], s32[4,16]) topk(p), k=16",
       "'t': k=16 of 'topk' is outside [0, 8], the last dimension of f32[4,8]"},
      {"p = f32[4,3] parameter(0)\n  ROOT c = f32[4,3] cholesky(p), lower=true",
       "'c': the operand of 'cholesky' must be float or complex matrices, square in the last two "
       "dimensions, got f32[4,3]"},
      {"p = c64[4,8] parameter(0)\n  ROOT f = c64[4,16] fft(p), fft_type=FFT, fft_length={16}",
       "'f': FFT of 'fft' with fft_length={16} needs trailing dimensions {16}, got c64[4,8]"},
      {"p = f32[4,8] parameter(0)\n  ROOT f = f32[4,8] fft(p), fft_type=FFT, fft_length={8}",
       "'f': FFT of 'fft' takes c64 or c128, got f32[4,8]"},
      {"a = f32[3,3] parameter(0)\n  b = f32[5,7] parameter(1)\n"
       "  ROOT c = f32[5,7] triangular-solve(a, b), left_side=true, lower=true",
       "'c': operand 1 of 'triangular-solve' must be f32 with f32[3,3]'s batch dimensions and 3 "
       "in its second last dimension (left_side=true), got f32[5,7]"},
  };
  for (const auto& [body, message] : wrong) {
    EXPECT_EQ(Verify(absl::StrCat("HloModule m\nENTRY e {\n  ", body, "\n}")).message(), message);
  }
}

TEST(Verifier, WhileBodyMustKeepTheLoopState) {
  absl::Status status = Verify(R"(HloModule m
cond {
  s = (s32[], f32[4]) parameter(0)
  ROOT t = pred[] constant(false)
}
body {
  s = (s32[], f32[4]) parameter(0)
  ROOT i = s32[] get-tuple-element(s), index=0
}
ENTRY e {
  s = (s32[], f32[4]) parameter(0)
  ROOT w = (s32[], f32[4]) while(s), condition=cond, body=body
})");
  EXPECT_EQ(status.message(),
            "'w': body computation 'body' of 'while' must return the loop state (s32[], f32[4]), "
            "got s32[]");
  EXPECT_EQ(Where(status), "12:8");
}

TEST(Verifier, OperandCount) {
  absl::Status status = Verify(R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  ROOT d = f32[2] dynamic-slice(p), dynamic_slice_sizes={2}
})");
  EXPECT_EQ(status.message(),
            "'d': 'dynamic-slice' of f32[4] takes 2 operands (one start index per dimension), "
            "got 1");
  EXPECT_EQ(Where(status), "4:8");
}

TEST(Verifier, ParserRendersTheErrorAtItsPlace) {
  auto module = ParseHloModule(R"(HloModule m
ENTRY e {
  p = f32[3] parameter(0)
  ROOT t = f32[3] transpose(p), dimensions={1}
})",
                               "t.hlo");
  ASSERT_FALSE(module.ok());
  EXPECT_NE(module.status().message().find("t.hlo:4:8: error: 't': dimensions of 'transpose'"),
            absl::string_view::npos)
      << module.status().message();
}

// ---- Structural errors the parser never builds, made directly ----------

struct TestModule {
  std::unique_ptr<Module> module = std::make_unique<Module>("m");

  Computation* AddComputation(const std::string& name, int line) {
    auto computation = std::make_unique<Computation>(name);
    computation->set_location({line, 1});
    return module->AddComputation(std::move(computation));
  }
  static Instruction* Add(Computation* c, const std::string& name, Opcode opcode, Shape shape,
                          std::vector<Instruction*> operands, int line) {
    auto instruction = std::make_unique<Instruction>(name, opcode, std::move(shape));
    instruction->set_location({line, 3});
    for (Instruction* operand : operands) instruction->AppendOperand(operand);
    return c->AddInstruction(std::move(instruction));
  }
  static Instruction* Param(Computation* c, const std::string& name, int64_t number, int line) {
    auto instruction =
        std::make_unique<Instruction>(name, Opcode::kParameter, Shape::Scalar(DType::kF32));
    instruction->set_parameter_number(number);
    instruction->set_location({line, 3});
    return c->AddInstruction(std::move(instruction));
  }
};

const Shape kF32 = Shape::Scalar(DType::kF32);

TEST(VerifierStructure, ModuleNeedsAnEntry) {
  TestModule t;
  EXPECT_EQ(VerifyModule(*t.module).message(), "module 'm' has no entry computation");
}

TEST(VerifierStructure, ComputationNeedsARoot) {
  TestModule t;
  Computation* e = t.AddComputation("e", 2);
  t.module->set_entry(e);
  TestModule::Param(e, "p", 0, 3);
  absl::Status status = VerifyModule(*t.module);
  EXPECT_EQ(status.message(), "computation 'e' has no root instruction");
  EXPECT_EQ(Where(status), "2:1");
}

TEST(VerifierStructure, ParametersAreNumberedWithoutGaps) {
  TestModule t;
  Computation* e = t.AddComputation("e", 2);
  t.module->set_entry(e);
  e->set_root(TestModule::Param(e, "p", 1, 3));
  absl::Status status = VerifyModule(*t.module);
  EXPECT_EQ(status.message(),
            "'p': parameter number 1 leaves a gap: computation 'e' has no parameter(0); "
            "parameters must be numbered 0..n-1");
  EXPECT_EQ(Where(status), "3:3");
}

TEST(VerifierStructure, AGapIsReportedAtTheParameterPastIt) {
  TestModule t;
  Computation* e = t.AddComputation("e", 2);
  t.module->set_entry(e);
  Instruction* p = TestModule::Param(e, "p", 0, 3);
  Instruction* q = TestModule::Param(e, "q", 2, 4);
  TestModule::Param(e, "r", 3, 5);
  e->set_root(TestModule::Add(e, "a", Opcode::kAdd, kF32, {p, q}, 6));
  absl::Status status = VerifyModule(*t.module);
  EXPECT_EQ(status.message(),
            "'q': parameter number 2 leaves a gap: computation 'e' has no parameter(1); "
            "parameters must be numbered 0..n-1");
  EXPECT_EQ(Where(status), "4:3");
}

TEST(VerifierStructure, ParameterNumbersAreUnique) {
  TestModule t;
  Computation* e = t.AddComputation("e", 2);
  t.module->set_entry(e);
  Instruction* p = TestModule::Param(e, "p", 0, 3);
  Instruction* q = TestModule::Param(e, "q", 0, 4);
  e->set_root(TestModule::Add(e, "a", Opcode::kAdd, kF32, {p, q}, 5));
  absl::Status status = VerifyModule(*t.module);
  EXPECT_EQ(status.message(), "'q': parameter number 0 is already used by 'p'");
  EXPECT_EQ(Where(status), "4:3");
}

TEST(VerifierStructure, OperandsBelongToTheSameComputation) {
  TestModule t;
  Computation* other = t.AddComputation("other", 2);
  Instruction* x = TestModule::Param(other, "x", 0, 3);
  other->set_root(x);
  Computation* e = t.AddComputation("e", 5);
  t.module->set_entry(e);
  Instruction* p = TestModule::Param(e, "p", 0, 6);
  e->set_root(TestModule::Add(e, "a", Opcode::kAdd, kF32, {p, x}, 7));
  absl::Status status = VerifyModule(*t.module);
  EXPECT_EQ(status.message(), "'a': operand 1 'x' belongs to computation 'other', not 'e'");
  EXPECT_EQ(Where(status), "7:3");
}

TEST(VerifierStructure, InstructionsFormNoCycle) {
  TestModule t;
  Computation* e = t.AddComputation("e", 2);
  t.module->set_entry(e);
  Instruction* p = TestModule::Param(e, "p", 0, 3);
  Instruction* a = TestModule::Add(e, "a", Opcode::kAdd, kF32, {p, p}, 4);
  Instruction* b = TestModule::Add(e, "b", Opcode::kAdd, kF32, {a, p}, 5);
  a->ReplaceOperand(1, b);
  e->set_root(b);
  absl::Status status = VerifyModule(*t.module);
  EXPECT_NE(status.message().find("the instructions form a cycle"), absl::string_view::npos)
      << status.message();
}

TEST(VerifierStructure, CalledComputationsExist) {
  TestModule t;
  Computation* e = t.AddComputation("e", 2);
  t.module->set_entry(e);
  Instruction* p = TestModule::Param(e, "p", 0, 3);
  Instruction* call = TestModule::Add(e, "c", Opcode::kCall, kF32, {p}, 4);
  call->mutable_attrs().to_apply = nullptr;
  e->set_root(call);
  absl::Status status = VerifyModule(*t.module);
  EXPECT_EQ(status.message(), "'c': calls a computation that does not exist");
  EXPECT_EQ(Where(status), "4:3");
}

TEST(VerifierStructure, CallGraphHasNoCycle) {
  TestModule t;
  Computation* f = t.AddComputation("f", 2);
  Instruction* x = TestModule::Param(f, "x", 0, 3);
  Instruction* again = TestModule::Add(f, "again", Opcode::kCall, kF32, {x}, 4);
  again->mutable_attrs().to_apply = f;
  f->set_root(again);
  Computation* e = t.AddComputation("e", 6);
  t.module->set_entry(e);
  Instruction* p = TestModule::Param(e, "p", 0, 7);
  Instruction* call = TestModule::Add(e, "c", Opcode::kCall, kF32, {p}, 8);
  call->mutable_attrs().to_apply = f;
  e->set_root(call);
  absl::Status status = VerifyModule(*t.module);
  EXPECT_EQ(status.message(), "'again': call cycle: f -> f");
  EXPECT_EQ(Where(status), "4:3");
}

// f -> g -> h -> g: the cycle is g and h, reported at the call closing it.
TEST(VerifierStructure, CallCycleNamesEveryComputationOnIt) {
  TestModule t;
  auto calling = [&](const std::string& name, int line) {
    Computation* c = t.AddComputation(name, line);
    Instruction* x = TestModule::Param(c, "x", 0, line + 1);
    c->set_root(TestModule::Add(c, "call_" + name, Opcode::kCall, kF32, {x}, line + 2));
    return c;
  };
  Computation* f = calling("f", 2);
  Computation* g = calling("g", 6);
  Computation* h = calling("h", 10);
  f->root()->mutable_attrs().to_apply = g;
  g->root()->mutable_attrs().to_apply = h;
  h->root()->mutable_attrs().to_apply = g;
  Computation* e = calling("e", 14);
  e->root()->mutable_attrs().to_apply = f;
  t.module->set_entry(e);
  absl::Status status = VerifyModule(*t.module);
  EXPECT_EQ(status.message(), "'call_h': call cycle: g -> h -> g");
  EXPECT_EQ(Where(status), "12:3");
  // MakeComputationPostOrder, which knows no locations, names it the same way.
  EXPECT_EQ(t.module->MakeComputationPostOrder().status().message(), "call cycle: g -> h -> g");
}

// A chain of `n` calls below the entry, each computation calling the next.
std::string CallChain(int n) {
  std::string text =
      "HloModule deep\n\nc0 {\n  x = f32[] parameter(0)\n  ROOT y = f32[] negate(x)\n}\n";
  for (int k = 1; k < n; ++k) {
    absl::StrAppend(&text, "c", k,
                    " {\n  x = f32[] parameter(0)\n  ROOT y = f32[] call(x), to_apply=c", k - 1,
                    "\n}\n");
  }
  absl::StrAppend(&text,
                  "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT r = f32[] call(p), to_apply=c",
                  n - 1, "\n}\n");
  return text;
}

// The interpreter and the passes recurse once per level of calls: a chain
// deeper than the verifier allows is refused at the call past the limit;
// one within it verifies.
TEST(Verifier, CallsNestAtMost256Deep) {
  EXPECT_TRUE(ParseHloModule(CallChain(255)).ok());
  absl::StatusOr<std::unique_ptr<Module>> deep = ParseHloModule(CallChain(10000), "deep.hlo");
  ASSERT_FALSE(deep.ok());
  EXPECT_NE(std::string(deep.status().message()).find("calls nest more than 256 deep from here"),
            std::string::npos)
      << deep.status();
}

// Everything that walks a shape recurses into its tuples.
TEST(Verifier, TupleShapesNestAtMost100Deep) {
  auto nested = [](int n) {
    return absl::StrCat("HloModule t\nENTRY e {\n  p = ", std::string(n, '('), "f32[]",
                        std::string(n, ')'), " parameter(0)\n  ROOT r = f32[] constant(0)\n}\n");
  };
  EXPECT_TRUE(ParseHloModule(nested(100)).ok());
  absl::StatusOr<std::unique_ptr<Module>> deep = ParseHloModule(nested(9000), "tuple.hlo");
  ASSERT_FALSE(deep.ok());
  EXPECT_NE(std::string(deep.status().message()).find("tuple shapes nest more than 100 deep"),
            std::string::npos)
      << deep.status();
}

}  // namespace
}  // namespace seam
