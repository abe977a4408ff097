// The libFuzzer entry points of one harness, named at compile time by
// SEAM_FUZZ_HARNESS. HLO harnesses mutate with the structure-aware mutator
// three times in four, with libFuzzer's byte mutations otherwise.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>

#include "harnesses.h"
#include "hlo_mutator.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

const seam::fuzz::Harness& TheHarness() {
  static const seam::fuzz::Harness* harness = seam::fuzz::FindHarness(SEAM_FUZZ_HARNESS);
  return *harness;
}

std::string LibFuzzerBytes(std::string text, std::mt19937_64&) {
  const size_t size = text.size();
  text.resize(size * 2 + 64);
  text.resize(LLVMFuzzerMutate(reinterpret_cast<uint8_t*>(text.data()), size, text.size()));
  return text;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  TheHarness().run(absl::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  std::mt19937_64 rng(seed);
  if (!TheHarness().hlo_text || rng() % 4 == 0) return LLVMFuzzerMutate(data, size, max_size);
  const auto kind = static_cast<seam::fuzz::Mutation>(rng() % seam::fuzz::kMutationCount);
  std::string mutated = seam::fuzz::Mutate(std::string(reinterpret_cast<char*>(data), size), kind,
                                           rng, LibFuzzerBytes);
  if (mutated.size() > max_size) mutated.resize(max_size);
  std::memcpy(data, mutated.data(), mutated.size());
  return mutated.size();
}
