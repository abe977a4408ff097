// Instruction attributes. The ones Seam computes with are typed members
// generated from attributes.def; every other attribute is kept verbatim, in
// source order, so that printing loses nothing.
#pragma once

#include <functional>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>
#include "absl/strings/string_view.h"

namespace seam {

class Computation;

using IntList = std::vector<int64_t>;

inline bool Contains(const IntList& list, int64_t value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

// A bare word value such as `kLoop`, `TOTALORDER` or `rng_default`.
struct Identifier {
  std::string text;
  bool operator==(const Identifier&) const = default;
};

enum class ComparisonDirection : uint8_t { kEq, kNe, kGe, kGt, kLe, kLt };
absl::string_view ComparisonDirectionName(ComparisonDirection d);
std::optional<ComparisonDirection> ComparisonDirectionFromName(
    absl::string_view name);

// `slice={[start:limit:stride], ...}`, one entry per dimension.
struct SliceRange {
  int64_t start = 0;
  int64_t limit = 0;
  int64_t stride = 1;
  bool operator==(const SliceRange&) const = default;
};
using SliceRanges = std::vector<SliceRange>;

// One spatial dimension of a convolution / reduce-window window.
struct WindowDim {
  int64_t size = 1;
  int64_t stride = 1;
  int64_t pad_low = 0;
  int64_t pad_high = 0;
  int64_t lhs_dilation = 1;  // "base dilation" for reduce-window
  int64_t rhs_dilation = 1;  // "window dilation"
  bool reversal = false;
  bool operator==(const WindowDim&) const = default;
};
struct Window {
  std::vector<WindowDim> dims;
  bool operator==(const Window&) const = default;
};

// `padding=lo_hi[_interior]x...` of the pad op.
struct PadDim {
  int64_t low = 0;
  int64_t high = 0;
  int64_t interior = 0;
  bool operator==(const PadDim&) const = default;
};
using PaddingConfig = std::vector<PadDim>;

// Convolution dimension numbers as written by `dim_labels=b01f_01io->b01f`.
struct ConvDimLabels {
  int64_t input_batch = 0;
  int64_t input_feature = 0;
  IntList input_spatial;
  int64_t kernel_input_feature = 0;
  int64_t kernel_output_feature = 0;
  IntList kernel_spatial;
  int64_t output_batch = 0;
  int64_t output_feature = 0;
  IntList output_spatial;
  bool operator==(const ConvDimLabels&) const = default;

  // Dimension orders (outermost first) that lay the operands out for
  // computing: [batch, spatial..., feature] for the input and the output,
  // [spatial..., input feature, output feature] for the kernel.
  IntList InputOrder() const;
  IntList KernelOrder() const;
  IntList OutputOrder() const;
};

// A reference to a called computation, resolved after the whole module parsed.
using ComputationRef = Computation*;
using ComputationRefList = std::vector<Computation*>;

// An attribute Seam does not interpret: its name and its value as written.
struct VerbatimAttribute {
  std::string name;
  std::string value;
  bool operator==(const VerbatimAttribute&) const = default;
};

struct Attributes {
#define SEAM_ATTR(member, text, Type) std::optional<Type> member;
#include "seam/ir/attributes.def"
#undef SEAM_ATTR
  std::vector<VerbatimAttribute> verbatim;

  // The verbatim attribute called `name`, if any.
  const VerbatimAttribute* FindVerbatim(absl::string_view name) const;
  // Called computations in print order (to_apply, body, branches...).
  std::vector<Computation*> CalledComputations() const;
  // Points every called computation c at map(c): for passes that clone or
  // replace computations.
  void MapCalledComputations(const std::function<Computation*(Computation*)>& map);

  bool operator==(const Attributes&) const = default;
};

// The text names of the typed attributes, in print order.
const std::vector<absl::string_view>& TypedAttributeNames();

}  // namespace seam
