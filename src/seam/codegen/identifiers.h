// Identifiers in C++ text Seam generates: which names a declaration
// reads and which a statement assigns, for moving declarations out of a
// loop and dropping those nothing reads.
#pragma once

#include <cctype>

#include "absl/strings/string_view.h"

namespace seam::codegen {

// Calls `f` on each identifier of `text` and the text after it (numbers,
// hexadecimal floats among them, are skipped whole).
template <typename F>
void ForEachIdentifier(absl::string_view text, F f) {
  auto word = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; };
  for (size_t at = 0; at < text.size();) {
    if (!word(text[at])) {
      ++at;
      continue;
    }
    const bool number = std::isdigit(static_cast<unsigned char>(text[at]));
    size_t end = at;
    while (end < text.size() && (word(text[end]) || (number && text[end] == '.'))) ++end;
    if (!number) f(text.substr(at, end - at), text.substr(end));
    at = end;
  }
}

// Whether `after`, the text after a name, assigns to it (`=`, `+=`...).
inline bool Assigns(absl::string_view after) {
  const size_t at = after.find_first_not_of(' ');
  if (at == absl::string_view::npos) return false;
  after.remove_prefix(at);
  if (after.size() >= 2 && after[0] == '=') return after[1] != '=';
  return after.size() >= 2 && after[1] == '=' &&
         absl::string_view("+-*/%|&^").find(after[0]) != absl::string_view::npos;
}

// Whether `text` mentions identifier `name`.
inline bool Reads(absl::string_view text, absl::string_view name) {
  bool read = false;
  ForEachIdentifier(text, [&](absl::string_view word, absl::string_view) { read |= word == name; });
  return read;
}

}  // namespace seam::codegen
