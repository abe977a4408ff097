// Names for parameterized tests built from file names and pass specs:
// gtest accepts letters, digits and underscores only.
#pragma once

#include <cctype>
#include <string>

namespace seam::testing {

// `text` with every character that is not a letter or digit made '_'.
inline std::string TestIdentifier(std::string text) {
  for (char& c : text) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return text;
}

// A corpus file's test name: its name up to the first dot.
inline std::string CorpusTestName(const std::string& file) {
  return TestIdentifier(file.substr(0, file.find('.')));
}

}  // namespace seam::testing
