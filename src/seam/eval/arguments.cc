#include "seam/eval/arguments.h"

#include <cmath>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "seam/eval/npy.h"
#include "seam/eval/random_fill.h"
#include "seam/util/fnv1a.h"
#include "seam/util/status_macros.h"

namespace seam {

std::vector<Literal> RandomArguments(const Computation& entry, uint64_t seed) {
  std::vector<Literal> arguments;
  for (int i = 0; i < entry.parameter_count(); ++i) {
    Literal argument(entry.parameter(i)->shape());
    FillRandom(argument, seed * 1000003 + static_cast<uint64_t>(i));
    arguments.push_back(std::move(argument));
  }
  return arguments;
}

absl::StatusOr<std::vector<Literal>> LoadArguments(const Computation& entry,
                                                   const std::string& path) {
  NamedArrays arrays;
  if (absl::EndsWith(path, ".npy")) {
    SEAM_ASSIGN_OR_RETURN(Literal array, ReadNpyFile(path));
    arrays.push_back({"arr_0", std::move(array)});
  } else {
    SEAM_ASSIGN_OR_RETURN(arrays, ReadNpzFile(path));
  }
  int count = entry.parameter_count();
  if (static_cast<int>(arrays.size()) != count) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": holds ", arrays.size(),
                                                   " array(s), the module takes ", count));
  }
  // By name when every parameter has its array; in order only when the
  // arrays carry NumPy's positional names (arr_0, arr_1...): an array named
  // after no parameter is not bound to one by its place.
  bool by_name = true, positional = true;
  for (int i = 0; i < count; ++i) {
    by_name = by_name && std::any_of(arrays.begin(), arrays.end(), [&](const auto& a) {
                return a.first == entry.parameter(i)->name();
              });
    positional = positional && arrays[i].first == absl::StrCat("arr_", i);
  }
  if (!by_name && !positional) {
    std::vector<std::string> names, parameters;
    for (const auto& a : arrays) names.push_back(a.first);
    for (int i = 0; i < count; ++i) parameters.push_back(entry.parameter(i)->name());
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": holds arrays named ", absl::StrJoin(names, ", "), " for parameters ",
        absl::StrJoin(parameters, ", "),
        ": name each array after its parameter, or save them in order unnamed (arr_0, arr_1...)"));
  }
  std::vector<Literal> arguments;
  for (int i = 0; i < count; ++i) {
    const Instruction& param = *entry.parameter(i);
    auto it = by_name ? std::find_if(arrays.begin(), arrays.end(),
                                     [&](const auto& a) { return a.first == param.name(); })
                      : arrays.begin() + i;
    std::string what = absl::StrCat(path, ": array '", it->first, "' for parameter ", i, " ('",
                                    param.name(), "')");
    SEAM_ASSIGN_OR_RETURN(Literal argument,
                          ConvertForParameter(std::move(it->second), param.shape(), what));
    arguments.push_back(std::move(argument));
  }
  return arguments;
}

std::vector<NamedResult> NameResults(const Computation& entry, Literal result) {
  const Instruction& root = *entry.root();
  std::vector<NamedResult> named;
  if (!result.shape().IsTuple()) {
    named.push_back({root.name(), std::move(result)});
    return named;
  }
  auto& elements = result.mutable_tuple_elements();
  for (size_t i = 0; i < elements.size(); ++i) {
    std::string name = root.opcode() == Opcode::kTuple
                           ? root.operand(static_cast<int>(i))->name()
                           : absl::StrCat(root.name(), ".", i);
    named.push_back({std::move(name), std::move(elements[i])});
  }
  return named;
}

Summary Summarize(const Literal& value) {
  Summary s;
  s.checksum = Fnv1a(
      absl::string_view(reinterpret_cast<const char*>(value.bytes().data()), value.bytes().size()));
  if (!value.shape().IsArray() || value.is_elided() || value.is_opaque()) return s;
  bool first = true;
  double sum = 0;
  int64_t counted = 0;
  bool complex = IsComplex(value.shape().dtype());
  for (int64_t i = 0; i < value.element_count(); ++i) {
    double v = complex ? std::abs(value.GetComplex(i)) : value.GetDouble(i);
    if (std::isnan(v)) {
      ++s.nan_count;
      continue;
    }
    s.min = first ? v : std::min(s.min, v);
    s.max = first ? v : std::max(s.max, v);
    first = false;
    sum += v;
    ++counted;
  }
  s.mean = counted > 0 ? sum / static_cast<double>(counted) : 0;
  return s;
}

std::string FormatSummary(const NamedResult& result) {
  Summary s = Summarize(result.value);
  std::string line = absl::StrFormat("%-24s %-20s min=%-12.6g max=%-12.6g mean=%-12.6g",
                                     result.name, result.value.shape().ToString(false), s.min,
                                     s.max, s.mean);
  if (s.nan_count > 0) absl::StrAppend(&line, " nan=", s.nan_count);
  absl::StrAppend(&line, absl::StrFormat(" checksum=%016x", s.checksum));
  return line;
}

}  // namespace seam
