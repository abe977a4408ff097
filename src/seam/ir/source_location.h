// Where an IR entity was written in its source text (1-based; 0 = unknown).
#pragma once

namespace seam {

struct SourceLocation {
  int line = 0;
  int column = 0;
  bool known() const { return line > 0; }
};

}  // namespace seam
