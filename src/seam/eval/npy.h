// NumPy .npy and .npz files: how arrays enter and leave `seam run`.
// bf16 has no NumPy type: it is written as the raw 16 bits with descr '|V2'
// (what ml_dtypes-based tools read back as bytes), and '|V2' or '<u2' data is
// accepted wherever a bf16 array is expected (see ConvertForParameter).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "seam/ir/literal.h"

namespace seam {

using NamedArrays = std::vector<std::pair<std::string, Literal>>;

// Parses the bytes of one .npy file; `what` names it in errors.
absl::StatusOr<Literal> ParseNpy(absl::string_view bytes, absl::string_view what);
std::string SerializeNpy(const Literal& array);

absl::StatusOr<Literal> ReadNpyFile(const std::string& path);
absl::Status WriteNpyFile(const std::string& path, const Literal& array);
// Arrays in archive order, named without the `.npy` suffix. Stored and
// deflated members are both read; zip64 sizes are understood.
absl::StatusOr<NamedArrays> ReadNpzFile(const std::string& path);
// Whether members are checked against their CRC-32: always, except where a
// fuzzer's mutations must reach the parsing of the members' contents.
enum class NpzChecks { kCrc32, kSkipCrc32ForFuzzing };
// The bytes of one .npz archive; `what` names it in errors.
absl::StatusOr<NamedArrays> ParseNpz(absl::string_view bytes, absl::string_view what,
                                     NpzChecks checks = NpzChecks::kCrc32);
// Writes an uncompressed archive, as numpy.savez does.
absl::Status WriteNpzFile(const std::string& path,
                          const std::vector<std::pair<std::string, const Literal*>>& arrays);

// Makes `array` fit a parameter of `expected` element type when only the
// NumPy spelling differs (bf16 read as 16-bit raw data); otherwise checks
// that element type and dimensions match, naming `what` in the error.
absl::StatusOr<Literal> ConvertForParameter(Literal array, const Shape& expected,
                                            absl::string_view what);

}  // namespace seam
