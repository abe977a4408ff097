// Parsing and printing of the typed instruction attributes listed in
// attributes.def, e.g. `dimensions={0,1}`, `window={size=3x3 pad=1_1x1_1}`,
// `dim_labels=b01f_01io->b01f`, `slice={[0:4:2]}`, `to_apply=add`.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "seam/ir/attributes.h"
#include "seam/text/scanner.h"

namespace seam {

// A called-computation name waiting to be resolved once the module is read.
struct PendingComputationRef {
  Computation** slot;
  std::string name;
  size_t offset;  // where the name was written
};

// If `name` is a typed attribute, parses its value (the cursor is after `=`)
// into `attrs` and returns true; returns false for any other name.
absl::StatusOr<bool> ParseTypedAttribute(
    Scanner& scanner, absl::string_view name, Attributes& attrs,
    std::vector<PendingComputationRef>& pending);

// Appends `, name=value` for every typed attribute present, in table order.
void PrintTypedAttributes(const Attributes& attrs, std::string& out);

}  // namespace seam
