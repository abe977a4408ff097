// FNV-1a, 64 bits: the stable hash of a byte string that seeds Seam's
// pseudo-random data (elided constants, rng) and checksums results. Unlike
// absl::Hash it is the same in every process and on every machine.
#pragma once

#include <cstdint>

#include "absl/strings/string_view.h"

namespace seam {

inline uint64_t Fnv1a(absl::string_view bytes) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (char c : bytes) hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  return hash;
}

}  // namespace seam
