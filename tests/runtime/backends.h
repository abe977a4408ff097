// The compiled backends the runtime's differential tests run on: the CPU
// always, CUDA where a device is present (otherwise its cases skip, saying
// why), and the same CUDA kernels under the emulator (cuda-sim) wherever
// NVRTC is. One entry point compiles and runs a module under a strategy.
#pragma once

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "seam/compiler/cpu_compiler.h"
#include "seam/compiler/cuda_compiler.h"
#include "seam/eval/arguments.h"
#include "seam/eval/compare.h"
#include "seam/eval/evaluator.h"
#include "seam/runtime/cuda_executable.h"
#include "seam/runtime/executable.h"
#include "seam/runtime/jit.h"
#include "seam/runtime/nvrtc.h"
#include "seam/text/parser.h"
#include "seam/text/source_file.h"

namespace seam::testing {

enum class Backend { kCpu, kCuda, kCudaSim };

inline const char* BackendName(Backend b) {
  return b == Backend::kCpu ? "cpu" : b == Backend::kCuda ? "cuda" : "cuda-sim";
}

// What test cases on `b` are named after: "", "_cuda", "_cuda_sim".
inline const char* BackendSuffix(Backend b) {
  return b == Backend::kCpu ? "" : b == Backend::kCuda ? "_cuda" : "_cuda_sim";
}

inline std::vector<Backend> AllBackends() {
  return {Backend::kCpu, Backend::kCuda, Backend::kCudaSim};
}

// Ok when `backend` can run here.
inline absl::Status BackendPresent(Backend backend) {
  switch (backend) {
    case Backend::kCpu:
      return absl::OkStatus();
    case Backend::kCuda:
      return runtime::CudaDevicePresent();
    case Backend::kCudaSim:
      return runtime::NvrtcAvailable();
  }
  return absl::OkStatus();
}

struct CompiledRun {
  absl::StatusOr<Literal> result = absl::UnknownError("not run");
  int64_t compiled_kernels = 0;
};

// Compiles `module` for `backend` under `strategy` and runs it on
// `arguments`. `streamed` (CPU only) makes every output of 4-byte elements
// go through the non-temporal store path (a one-byte last-level cache);
// `excess_precision` (CPU only) keeps half arithmetic in float in kernels.
inline CompiledRun CompileAndRun(Backend backend, const Module& module, fusion::Strategy strategy,
                                 const std::vector<Literal>& arguments, bool streamed = false,
                                 bool excess_precision = false) {
  CompiledRun run;
  auto go = [&](auto compiled) {
    if (!compiled.ok()) {
      run.result = compiled.status();
      return;
    }
    run.compiled_kernels = (*compiled)->stats().compiled_kernels;
    run.result = (*compiled)->Run(arguments);
  };
  if (backend != Backend::kCpu) {
    compiler::CudaExecutableOptions options;
    options.strategy = strategy;
    options.emulate = backend == Backend::kCudaSim;
    go(compiler::CompileForCudaDevice(module, options));
  } else {
    compiler::CpuOptions options;
    options.plan.strategy = strategy;
    // Every half-typed result rounds, as in the interpreter these runs are
    // compared with element by element; the default's excess precision is
    // judged as `seam run --verify` judges it (JudgeOutputs).
    options.plan.excess_precision = excess_precision;
    if (streamed) options.plan.device.last_level_cache_bytes = 1;
    go(compiler::CompileForCpu(module, options));
  }
  return run;
}

// `path`'s text; a file that cannot be read fails the test.
inline std::string ReadFile(const std::filesystem::path& path) {
  absl::StatusOr<SourceFile> file = SourceFile::Read(path.string());
  EXPECT_TRUE(file.ok()) << file.status();
  return file.ok() ? file->text() : "";
}

// The first module of `text`; null (and the test failed) when it does not
// parse.
inline std::unique_ptr<Module> ParseFirst(const std::string& text, const std::string& name) {
  absl::StatusOr<std::vector<std::unique_ptr<Module>>> modules = ParseHloText(text, name);
  EXPECT_TRUE(modules.ok()) << modules.status();
  if (!modules.ok() || modules->empty()) return nullptr;
  return std::move(modules->front());
}

// Runs `executable`, compiled from `module`, and the interpreter (with the
// wide accumulation the differential tests compare against) on
// `arguments`, and expects the same result. `arguments` are left as the
// executable left them.
inline void ExpectSameAsInterpreter(runtime::Executable& executable, const Module& module,
                                    std::vector<Literal>& arguments) {
  Evaluator oracle;
  oracle.set_wide_accumulation(true);
  absl::StatusOr<Literal> expected = oracle.Run(module, arguments);
  ASSERT_TRUE(expected.ok()) << expected.status();
  absl::StatusOr<Literal> got = executable.Run(arguments);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(DescribeDifferences(*got, *expected, &RewriteTolerance, "the result"), "");
}

// The C++ of `text`'s CPU kernels (compiled with `options`, under stitch
// unless they say otherwise, dumped to a scratch directory named after
// `name`), after checking its result on random arguments against the
// interpreter; empty (and a failed expectation) when it does not compile.
inline std::string CpuKernelsChecked(const std::string& text, const std::string& name,
                                     compiler::CpuOptions options = {}) {
  std::unique_ptr<Module> module = ParseFirst(text, name);
  if (module == nullptr) return "";
  options.dump_to = ::testing::TempDir() + "/seam_kernels_" + name;
  absl::StatusOr<compiler::Compiled<runtime::Executable>> compiled =
      compiler::CompileForCpu(*module, options);
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  if (!compiled.ok()) return "";
  std::vector<Literal> arguments = RandomArguments(*module->entry(), /*seed=*/5);
  ExpectSameAsInterpreter(*compiled->executable, *module, arguments);
  return ReadFile(options.dump_to + "/kernels.cc");
}

// The disassembly of `source` built as the JIT builds it.
inline std::string Disassembly(const std::string& source, const std::string& name) {
  const std::filesystem::path dir = ::testing::TempDir(), cc = dir / (name + ".cc"),
                              object = dir / (name + ".o");
  std::ofstream(cc) << source;
  const runtime::CompilerOptions jit;
  const std::string command =
      absl::StrCat(jit.compiler, " ", absl::StrJoin(jit.flags, " "), " -w -c -o ", object.string(),
                   " ", cc.string(), " && objdump -d --no-show-raw-insn ", object.string());
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char buffer[4096];
  while (std::fgets(buffer, sizeof(buffer), pipe) != nullptr) out += buffer;
  EXPECT_EQ(::pclose(pipe), 0) << command;
  return out;
}

// The calls in `source`, built as the JIT builds it, of the scalar entry of
// the exp twins: vectorized loops call the twins by their vector-ABI names,
// so each such call is a loop left scalar. Empty when there are none (a
// failed expectation when it does not build).
inline std::vector<std::string> ScalarExpCalls(const std::string& source, const std::string& name) {
  const std::string code = Disassembly(source, name);
  EXPECT_FALSE(code.empty());
  std::vector<std::string> calls;
  for (absl::string_view line : absl::StrSplit(code, '\n')) {
    if (absl::StrContains(line, "call") && absl::StrContains(line, "<seam_exp_simd>")) {
      calls.emplace_back(line);
    }
  }
  return calls;
}

}  // namespace seam::testing
