// What every generated source file starts with: standard headers, the
// interpreter's scalar semantics (eval/scalar_ops.h) and 16-bit float
// conversions (ir/float16.cc), embedded at build time so compiled kernels
// compute what the interpreter computes: exactly, but for exp on floats,
// which kernels evaluate within 2 ulp with a vectorizable polynomial.
#pragma once

#include <string>

namespace seam::codegen {

extern const char kScalarOpsSource[];
extern const char kFloat16Source[];

// The C++ prelude for CPU kernels.
std::string CpuPrelude();

}  // namespace seam::codegen
