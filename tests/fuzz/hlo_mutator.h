// A structure-aware mutator for HLO text: it knows where a module's
// shapes, element types, opcodes, operands and attributes are written and
// changes one of them, so most mutants still parse and reach the verifier,
// the interpreter and the passes (byte mutations mostly stop at the
// scanner). Used by the libFuzzer harnesses' custom mutator and by
// `seam_hlo_mutate`, the mutation campaign's generator.
#pragma once

#include <functional>
#include <random>
#include <string>

#include "absl/strings/string_view.h"

namespace seam::fuzz {

enum class Mutation {
  kDimension,    // a dimension of a shape: resized, dropped, added, swapped
  kElementType,  // an element type replaced by another
  kOpcode,       // an instruction's opcode replaced by another
  kAttribute,    // an attribute dropped, copied from elsewhere, or a number in it changed
  kOperand,      // an operand replaced by another value, dropped or repeated
  kLine,         // a line dropped, repeated or swapped with the next; ROOT moved
  kNumber,       // any integer in the text (constants, parameter numbers...)
  kBytes,        // bytes flipped, inserted, erased or repeated
};
inline constexpr int kMutationCount = 8;
absl::string_view MutationName(Mutation mutation);

// Byte-level mutation of a whole text: libFuzzer's own under a fuzzer,
// MutateBytes elsewhere.
using ByteMutator = std::function<std::string(std::string text, std::mt19937_64& rng)>;
std::string MutateBytes(std::string text, std::mt19937_64& rng);

// Applies one mutation of `kind`; a text with no place for it (no opcode
// anywhere, say) gets a byte mutation instead.
std::string Mutate(std::string text, Mutation kind, std::mt19937_64& rng,
                   const ByteMutator& bytes = MutateBytes);

}  // namespace seam::fuzz
