#include "seam/ir/attributes.h"

#include <array>

namespace seam {
namespace {

constexpr std::array<absl::string_view, 6> kDirectionNames = {
    "EQ", "NE", "GE", "GT", "LE", "LT"};

void AppendCalled(const std::optional<ComputationRef>& ref,
                  std::vector<Computation*>& out) {
  if (ref.has_value()) out.push_back(*ref);
}
void AppendCalled(const std::optional<ComputationRefList>& refs,
                  std::vector<Computation*>& out) {
  if (refs.has_value()) out.insert(out.end(), refs->begin(), refs->end());
}
template <typename T>
void AppendCalled(const std::optional<T>&, std::vector<Computation*>&) {}

}  // namespace

absl::string_view ComparisonDirectionName(ComparisonDirection d) {
  return kDirectionNames[static_cast<size_t>(d)];
}

std::optional<ComparisonDirection> ComparisonDirectionFromName(
    absl::string_view name) {
  for (size_t i = 0; i < kDirectionNames.size(); ++i) {
    if (kDirectionNames[i] == name) return static_cast<ComparisonDirection>(i);
  }
  return std::nullopt;
}

IntList ConvDimLabels::InputOrder() const {
  IntList order{input_batch};
  order.insert(order.end(), input_spatial.begin(), input_spatial.end());
  order.push_back(input_feature);
  return order;
}

IntList ConvDimLabels::KernelOrder() const {
  IntList order(kernel_spatial.begin(), kernel_spatial.end());
  order.push_back(kernel_input_feature);
  order.push_back(kernel_output_feature);
  return order;
}

IntList ConvDimLabels::OutputOrder() const {
  IntList order{output_batch};
  order.insert(order.end(), output_spatial.begin(), output_spatial.end());
  order.push_back(output_feature);
  return order;
}

const VerbatimAttribute* Attributes::FindVerbatim(absl::string_view name) const {
  for (const VerbatimAttribute& attr : verbatim) {
    if (attr.name == name) return &attr;
  }
  return nullptr;
}

std::vector<Computation*> Attributes::CalledComputations() const {
  std::vector<Computation*> out;
#define SEAM_ATTR(member, text, Type) AppendCalled(member, out);
#include "seam/ir/attributes.def"
#undef SEAM_ATTR
  return out;
}

void Attributes::MapCalledComputations(
    const std::function<Computation*(Computation*)>& map) {
  auto apply = [&](auto& member) {
    using T = std::decay_t<decltype(member)>;
    if constexpr (std::is_same_v<T, std::optional<ComputationRef>>) {
      if (member.has_value() && *member != nullptr) *member = map(*member);
    } else if constexpr (std::is_same_v<T, std::optional<ComputationRefList>>) {
      if (member.has_value()) {
        for (Computation*& c : *member) {
          if (c != nullptr) c = map(c);
        }
      }
    }
  };
#define SEAM_ATTR(member, text, Type) apply(member);
#include "seam/ir/attributes.def"
#undef SEAM_ATTR
}

const std::vector<absl::string_view>& TypedAttributeNames() {
  static const auto* names = new std::vector<absl::string_view>{
#define SEAM_ATTR(member, text, Type) text,
#include "seam/ir/attributes.def"
#undef SEAM_ATTR
  };
  return *names;
}

}  // namespace seam
