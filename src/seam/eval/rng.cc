// Random number ops. Seam does not reproduce the bits of XLA's Philox or
// ThreeFry generators; it documents its own deterministic algorithm:
// - rng-bit-generator(state): whatever `algorithm` says, output word i is
//   SplitMix64(state[0] ^ SplitMix64(state[1] + i)) truncated to the element
//   width, and the new state is the old one with state[1] advanced by the
//   number of words drawn (state[0] alone when the state has one word).
// - rng(a, b): rng_uniform draws uniformly in [a, b), rng_normal from
//   N(a, b^2), from a stream seeded by the instruction's name, so repeated
//   runs (and every backend) see the same values.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "seam/eval/ops.h"
#include "seam/eval/scalar_ops.h"
#include "seam/util/fnv1a.h"

namespace seam {
namespace {

using scalar::SplitMix64;

double Unit(uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

absl::StatusOr<Literal> BitGenerator(const Instruction& instruction, const Literal& state) {
  if (!instruction.shape().IsTuple() || instruction.shape().tuple_shapes().size() != 2 ||
      state.element_count() < 1) {
    return absl::InvalidArgumentError("rng-bit-generator must return (state, bits)");
  }
  uint64_t key = state.GetBits(0);
  uint64_t counter = state.element_count() > 1 ? state.GetBits(1) : 0;
  Literal out(instruction.shape());
  Literal& bits = out.mutable_tuple_elements()[1];
  for (int64_t i = 0; i < bits.element_count(); ++i) {
    bits.SetBits(i, scalar::RngBitWord(key, counter, static_cast<uint64_t>(i)));
  }
  Literal& new_state = out.mutable_tuple_elements()[0];
  new_state = state;
  uint64_t drawn = static_cast<uint64_t>(bits.element_count());
  new_state.SetBits(state.element_count() > 1 ? 1 : 0,
                    (state.element_count() > 1 ? counter : key) + drawn);
  return out;
}

absl::StatusOr<Literal> Rng(const Instruction& instruction, const Literal& a, const Literal& b) {
  std::string distribution = instruction.attrs().distribution.has_value()
                                 ? instruction.attrs().distribution->text
                                 : "rng_uniform";
  const uint64_t seed = Fnv1a(instruction.name());
  double lo = a.GetDouble(0), hi = b.GetDouble(0);
  Literal out(instruction.shape());
  for (int64_t i = 0; i < out.element_count(); ++i) {
    uint64_t r = SplitMix64(seed + 2 * static_cast<uint64_t>(i));
    double v;
    if (distribution == "rng_normal") {
      double u1 = Unit(r) + 0x1.0p-54, u2 = Unit(SplitMix64(r));
      v = lo + hi * std::sqrt(-2.0 * std::log(u1)) * std::cos(2 * M_PI * u2);
    } else if (distribution == "rng_uniform") {
      v = IsFloat(out.shape().dtype()) ? lo + (hi - lo) * Unit(r)
                                       : lo + std::floor((hi - lo) * Unit(r));
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown rng distribution '", distribution, "'"));
    }
    out.SetDouble(i, v);
  }
  return out;
}

}  // namespace

absl::StatusOr<Literal> EvalRng(const Instruction& instruction, OperandValues operands) {
  if (instruction.opcode() == Opcode::kRngBitGenerator) {
    return BitGenerator(instruction, *operands[0]);
  }
  return Rng(instruction, *operands[0], *operands[1]);
}

}  // namespace seam
