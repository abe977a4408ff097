// Arguments for running a module and names and summaries for its results:
// what `seam run` reads and prints, shared with every backend's checks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "seam/ir/computation.h"
#include "seam/ir/literal.h"

namespace seam {

// One pseudo-random argument per parameter (see random_fill.h); parameter i
// uses seed `seed * 1000003 + i`.
std::vector<Literal> RandomArguments(const Computation& entry, uint64_t seed);

// Arguments from a .npy (one parameter) or .npz file. An .npz binds each
// parameter to the array of its name, or, when the arrays carry NumPy's
// positional names (arr_0, arr_1...), by position; any other names are an
// error naming both lists. Count, element type and dimensions are checked.
absl::StatusOr<std::vector<Literal>> LoadArguments(const Computation& entry,
                                                   const std::string& path);

struct NamedResult {
  std::string name;
  Literal value;
};
// The entry's results, one per output: a tuple root is split into its
// elements, named after the instructions that produce them.
std::vector<NamedResult> NameResults(const Computation& entry, Literal result);

struct Summary {
  double min = 0, max = 0, mean = 0;
  int64_t nan_count = 0;
  uint64_t checksum = 0;  // FNV-1a over the raw bytes
};
Summary Summarize(const Literal& value);
// `name  f32[2,3]  min=… max=… mean=… checksum=…`
std::string FormatSummary(const NamedResult& result);

}  // namespace seam
