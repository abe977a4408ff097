// Where something was written in a source text (1-based; 0 = unknown): an
// IR entity, or an error the parser or verifier reports.
#pragma once

namespace seam {

struct SourceLocation {
  int line = 0;
  int column = 0;
  bool known() const { return line > 0; }
};

}  // namespace seam
