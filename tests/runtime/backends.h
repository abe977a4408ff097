// The compiled backends the runtime's differential tests run on: the CPU
// always, CUDA where a device is present (otherwise its cases skip, saying
// why). One entry point compiles and runs a module under a strategy.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "seam/runtime/cuda_compiler.h"
#include "seam/runtime/cuda_executable.h"
#include "seam/runtime/executable.h"

namespace seam::testing {

enum class Backend { kCpu, kCuda };

inline const char* BackendName(Backend b) { return b == Backend::kCpu ? "cpu" : "cuda"; }

inline std::vector<Backend> AllBackends() { return {Backend::kCpu, Backend::kCuda}; }

// Ok when `backend` can run here.
inline absl::Status BackendPresent(Backend backend) {
  return backend == Backend::kCpu ? absl::OkStatus() : runtime::CudaDevicePresent();
}

struct CompiledRun {
  absl::StatusOr<Literal> result = absl::UnknownError("not run");
  int64_t compiled_kernels = 0;
};

// Compiles `module` for `backend` under `strategy` and runs it on
// `arguments`. `streamed` (CPU only) makes every output go through the
// non-temporal store path (a one-byte last-level cache).
inline CompiledRun CompileAndRun(Backend backend, const Module& module, fusion::Strategy strategy,
                                 const std::vector<Literal>& arguments, bool streamed = false) {
  CompiledRun run;
  auto go = [&](auto compiled) {
    if (!compiled.ok()) {
      run.result = compiled.status();
      return;
    }
    run.compiled_kernels = (*compiled)->stats().compiled_kernels;
    run.result = (*compiled)->Run(arguments);
  };
  if (backend == Backend::kCuda) {
    runtime::CudaExecutableOptions options;
    options.strategy = strategy;
    go(runtime::CudaExecutable::Compile(module, options));
  } else {
    runtime::ExecutableOptions options;
    options.plan.strategy = strategy;
    if (streamed) options.plan.device.last_level_cache_bytes = 1;
    go(runtime::Executable::Compile(module, options));
  }
  return run;
}

}  // namespace seam::testing
