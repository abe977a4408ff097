#include "seam/codegen/vector_form.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace seam::codegen {
namespace {

// The prelude's functions with a vector-ABI twin.
const std::pair<absl::string_view, absl::string_view> kTwins[] = {{"seam_exp", "seam_exp_simd"},
                                                                  {"seam_tanh", "seam_tanh_simd"}};

}  // namespace

VectorForm CallForm(absl::string_view fn) {
  static const auto* const kPlainCalls =
      new absl::flat_hash_set<absl::string_view>{"static_cast",    "float",
                                                 "double",         "std::fma",
                                                 "std::sqrt",      "std::fabs",
                                                 "std::abs",       "seam_bf16_to_float",
                                                 "seam_keep",      "seam_float_to_bf16",
                                                 "seam_round_bf16"};
  if (kPlainCalls->contains(fn)) return VectorForm::kPlain;
  for (const auto& [inline_name, twin] : kTwins) {
    if (fn == inline_name) return VectorForm::kTwinned;
  }
  return VectorForm::kBranchy;
}

std::string CalledFunction(absl::string_view fn, bool twins) {
  if (twins) {
    for (const auto& [inline_name, twin] : kTwins) {
      if (fn == inline_name) return std::string(twin);
    }
  }
  return std::string(fn);
}

}  // namespace seam::codegen
