// The x86 instruction sets the CPU backend's kernels are tested on: the
// host's, and on an AVX-512 host also AVX2, compiled as an AVX2 host's JIT
// compiles them (its flags with AVX-512 off), so that what GCC makes of
// the kernels for AVX2 is checked wherever the tests run.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "seam/runtime/jit.h"

namespace seam::testing {

struct InstructionSet {
  std::string name;
  runtime::CompilerOptions compiler;
};

inline std::vector<InstructionSet> TestedInstructionSets() {
  std::vector<InstructionSet> sets = {{"host", {}}};
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2") &&
      __builtin_cpu_supports("fma")) {
    InstructionSet avx2{"avx2", {}};
    avx2.compiler.flags.push_back("-mno-avx512f");
    sets.push_back(std::move(avx2));
  }
#endif
  return sets;
}

// AVX2 as tested here, or null where the host cannot run it beside its own.
inline std::optional<InstructionSet> Avx2BesideTheHost() {
  std::vector<InstructionSet> sets = TestedInstructionSets();
  if (sets.size() < 2) return std::nullopt;
  return sets[1];
}

}  // namespace seam::testing
