// Deterministic pseudo-random data for inputs and elided constants. Element i
// of a fill with seed s is a pure function of (s, i) (SplitMix64), so values
// do not depend on the order or the machine that makes them. Ranges: floats
// and complex parts uniform in [-1, 1), integers uniform in [0, 8) (small, so
// they are valid sizes and indices more often than not), pred fair coin.
#pragma once

#include <cstdint>

#include "absl/strings/string_view.h"
#include "seam/ir/literal.h"
#include "seam/ir/module.h"

namespace seam {

void FillRandom(Literal& literal, uint64_t seed);

// Moves every finite non-zero element of a real float array one ulp of its
// type up or down in magnitude, the direction pseudo-random (seeded as
// FillRandom): a rounding-sized change of the data, to see how far a
// computation's results move under one (the largest finite value only
// moves down); a tuple's elements each. Zeros, infinities, NaN and
// elements of other types stay as they are.
void NudgeByOneUlp(Literal& literal, uint64_t seed);
// The policy for a constant written as `{...}`: FillRandom seeded by a hash
// of the constant's name, so every run and every backend sees the same data.
void FillElided(Literal& literal, absl::string_view name);

// The data of `constant`, whose literal is elided: FillElided seeded by the
// name of the constant it was copied from, else its own.
Literal ElidedConstantData(const Instruction& constant);

// Writes out every elided constant of `module` as FillElided fills it, so
// that a tool that does not know Seam's policy (XLA, say) computes what
// Seam computes from the printed module.
void FillElidedConstants(Module& module);

}  // namespace seam
