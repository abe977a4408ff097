#include "seam/text/attribute_text.h"

#include <cctype>
#include <charconv>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "seam/ir/computation.h"
#include "seam/util/status_macros.h"

namespace seam {
namespace {

using Pending = std::vector<PendingComputationRef>;

// ---- parsing, one overload per value type ----

absl::Status ParseValue(Scanner& s, int64_t& v, Pending&) {
  SEAM_ASSIGN_OR_RETURN(v, s.Integer());
  return absl::OkStatus();
}

absl::Status ParseValue(Scanner& s, double& v, Pending&) {
  SEAM_ASSIGN_OR_RETURN(v, s.Double());
  return absl::OkStatus();
}

absl::Status ParseValue(Scanner& s, bool& v, Pending&) {
  if (s.TryConsume("true")) return v = true, absl::OkStatus();
  if (s.TryConsume("false")) return v = false, absl::OkStatus();
  return s.Unexpected("true or false");
}

absl::Status ParseValue(Scanner& s, std::string& v, Pending&) {
  SEAM_ASSIGN_OR_RETURN(v, s.QuotedString());
  return absl::OkStatus();
}

absl::Status ParseValue(Scanner& s, Identifier& v, Pending&) {
  SEAM_ASSIGN_OR_RETURN(v.text, s.Name("a word"));
  return absl::OkStatus();
}

absl::Status ParseValue(Scanner& s, ComparisonDirection& v, Pending&) {
  size_t at = (s.SkipTrivia(), s.pos());
  SEAM_ASSIGN_OR_RETURN(std::string word, s.Name("a comparison direction"));
  std::optional<ComparisonDirection> d = ComparisonDirectionFromName(word);
  if (!d.has_value()) {
    return s.ErrorAtOffset(at, absl::StrCat("unknown comparison direction '", word,
                                            "', expected EQ, NE, GE, GT, LE or LT"));
  }
  v = *d;
  return absl::OkStatus();
}

absl::Status ParseValue(Scanner& s, IntList& v, Pending&) {
  SEAM_RETURN_IF_ERROR(s.Expect("{"));
  if (s.TryConsume("}")) return absl::OkStatus();
  do {
    SEAM_ASSIGN_OR_RETURN(int64_t x, s.Integer());
    v.push_back(x);
  } while (s.TryConsume(","));
  return s.Expect("}");
}

absl::Status ParseValue(Scanner& s, SliceRanges& v, Pending&) {
  SEAM_RETURN_IF_ERROR(s.Expect("{"));
  if (s.TryConsume("}")) return absl::OkStatus();
  do {
    SliceRange range;
    SEAM_RETURN_IF_ERROR(s.Expect("["));
    SEAM_ASSIGN_OR_RETURN(range.start, s.Integer("a slice start"));
    SEAM_RETURN_IF_ERROR(s.Expect(":"));
    SEAM_ASSIGN_OR_RETURN(range.limit, s.Integer("a slice limit"));
    if (s.TryConsume(":")) {
      SEAM_ASSIGN_OR_RETURN(range.stride, s.Integer("a slice stride"));
    }
    SEAM_RETURN_IF_ERROR(s.Expect("]"));
    v.push_back(range);
  } while (s.TryConsume(","));
  return s.Expect("}");
}

// `AxBxC` where each item is read by `item`. No spaces inside: items read
// their parts raw (RawInteger), so a part missing at a line end is reported
// there, not at the next line's first token.
template <typename ItemFn>
absl::Status ParseXList(Scanner& s, ItemFn item) {
  s.SkipTrivia();
  do {
    SEAM_RETURN_IF_ERROR(item());
  } while (s.PeekRaw() == 'x' && (s.Advance(), true));
  return absl::OkStatus();
}

// `lo_hi` or `lo_hi_interior` where allowed.
absl::Status ParsePadItem(Scanner& s, PadDim& pad, bool allow_interior) {
  SEAM_ASSIGN_OR_RETURN(pad.low, s.RawInteger("a padding amount"));
  if (s.PeekRaw() != '_') return s.Unexpected("'_' in padding");
  s.Advance();
  SEAM_ASSIGN_OR_RETURN(pad.high, s.RawInteger("a padding amount"));
  if (allow_interior && s.PeekRaw() == '_') {
    s.Advance();
    SEAM_ASSIGN_OR_RETURN(pad.interior, s.RawInteger("an interior padding amount"));
  }
  return absl::OkStatus();
}

absl::Status ParseValue(Scanner& s, PaddingConfig& v, Pending&) {
  return ParseXList(s, [&]() -> absl::Status {
    PadDim pad;
    SEAM_RETURN_IF_ERROR(ParsePadItem(s, pad, /*allow_interior=*/true));
    v.push_back(pad);
    return absl::OkStatus();
  });
}

absl::Status ParseWindowField(Scanner& s, absl::string_view key,
                              std::vector<WindowDim>& dims, size_t& count) {
  size_t i = 0;
  auto slot = [&]() -> WindowDim& {
    if (dims.size() <= i) dims.resize(i + 1);
    return dims[i++];
  };
  auto ints = [&](auto setter) {
    return ParseXList(s, [&]() -> absl::Status {
      SEAM_ASSIGN_OR_RETURN(int64_t x, s.RawInteger());
      setter(slot(), x);
      return absl::OkStatus();
    });
  };
  absl::Status status;
  if (key == "size") {
    status = ints([](WindowDim& d, int64_t x) { d.size = x; });
  } else if (key == "stride") {
    status = ints([](WindowDim& d, int64_t x) { d.stride = x; });
  } else if (key == "lhs_dilate") {
    status = ints([](WindowDim& d, int64_t x) { d.lhs_dilation = x; });
  } else if (key == "rhs_dilate") {
    status = ints([](WindowDim& d, int64_t x) { d.rhs_dilation = x; });
  } else if (key == "rhs_reversal") {
    status = ints([](WindowDim& d, int64_t x) { d.reversal = x != 0; });
  } else if (key == "pad") {
    status = ParseXList(s, [&]() -> absl::Status {
      PadDim pad;
      SEAM_RETURN_IF_ERROR(ParsePadItem(s, pad, /*allow_interior=*/false));
      WindowDim& d = slot();
      d.pad_low = pad.low;
      d.pad_high = pad.high;
      return absl::OkStatus();
    });
  } else {
    return s.Error(absl::StrCat("unknown window field '", key,
                                "', expected size, stride, pad, lhs_dilate, "
                                "rhs_dilate or rhs_reversal"));
  }
  count = i;
  return status;
}

absl::Status ParseValue(Scanner& s, Window& v, Pending&) {
  SEAM_RETURN_IF_ERROR(s.Expect("{"));
  size_t rank = 0;
  bool first = true;
  while (!s.TryConsume("}")) {
    size_t at = (s.SkipTrivia(), s.pos());
    SEAM_ASSIGN_OR_RETURN(std::string key, s.Name("a window field"));
    SEAM_RETURN_IF_ERROR(s.Expect("="));
    size_t count = 0;
    SEAM_RETURN_IF_ERROR(ParseWindowField(s, key, v.dims, count));
    if (!first && count != rank) {
      return s.ErrorAtOffset(at, absl::StrCat("window field '", key, "' has ", count,
                                              count == 1 ? " dimension" : " dimensions",
                                              ", expected ", rank));
    }
    rank = count;
    first = false;
  }
  return absl::OkStatus();
}

// One side of dim_labels, e.g. `b01f`: the two named dimensions and the
// spatial ones by digit.
absl::Status ParseLabelGroup(Scanner& s, char a, char b, int64_t& pos_a,
                             int64_t& pos_b, IntList& spatial) {
  size_t start = s.pos();
  std::string labels;
  while (std::isalnum(static_cast<unsigned char>(s.PeekRaw()))) {
    labels += s.PeekRaw();
    s.Advance();
  }
  pos_a = pos_b = -1;
  std::vector<int64_t> by_digit(labels.size(), -1);
  size_t digits = 0;
  for (size_t i = 0; i < labels.size(); ++i) {
    char c = labels[i];
    int64_t* target = c == a ? &pos_a : c == b ? &pos_b : nullptr;
    if (target != nullptr && *target < 0) {
      *target = static_cast<int64_t>(i);
      continue;
    }
    size_t d = static_cast<size_t>(c - '0');
    if (std::isdigit(static_cast<unsigned char>(c)) && d < labels.size() &&
        by_digit[d] < 0) {
      by_digit[d] = static_cast<int64_t>(i);
      ++digits;
      continue;
    }
    return s.ErrorAtOffset(start, absl::StrCat("malformed dim_labels group '", labels,
                                               "': expected one '", std::string(1, a),
                                               "', one '", std::string(1, b),
                                               "' and distinct spatial digits"));
  }
  if (pos_a < 0 || pos_b < 0 || digits + 2 != labels.size()) {
    return s.ErrorAtOffset(start, absl::StrCat("malformed dim_labels group '", labels,
                                               "': expected one '", std::string(1, a),
                                               "', one '", std::string(1, b),
                                               "' and digits 0..n-1"));
  }
  spatial.assign(by_digit.begin(), by_digit.begin() + digits);
  for (int64_t p : spatial) {
    if (p < 0) return s.ErrorAtOffset(start, "dim_labels spatial digits must be 0..n-1");
  }
  return absl::OkStatus();
}

absl::Status ParseValue(Scanner& s, ConvDimLabels& v, Pending&) {
  s.SkipTrivia();
  size_t start = s.pos();
  SEAM_RETURN_IF_ERROR(ParseLabelGroup(s, 'b', 'f', v.input_batch, v.input_feature,
                                       v.input_spatial));
  if (s.PeekRaw() != '_') return s.Unexpected("'_' in dim_labels");
  s.Advance();
  SEAM_RETURN_IF_ERROR(ParseLabelGroup(s, 'i', 'o', v.kernel_input_feature,
                                       v.kernel_output_feature, v.kernel_spatial));
  if (!(s.PeekRaw() == '-' && s.PeekRawAt(1) == '>')) {
    return s.Unexpected("'->' in dim_labels");
  }
  s.Advance(2);
  SEAM_RETURN_IF_ERROR(ParseLabelGroup(s, 'b', 'f', v.output_batch, v.output_feature,
                                       v.output_spatial));
  if (v.input_spatial.size() != v.kernel_spatial.size() ||
      v.input_spatial.size() != v.output_spatial.size()) {
    return s.ErrorAtOffset(start, "dim_labels groups have different spatial ranks");
  }
  return absl::OkStatus();
}

absl::Status ParseValue(Scanner& s, ComputationRef& v, Pending& pending) {
  size_t at = (s.SkipTrivia(), s.pos());
  SEAM_ASSIGN_OR_RETURN(std::string name, s.Name("a computation name"));
  v = nullptr;
  pending.push_back({&v, std::move(name), at});
  return absl::OkStatus();
}

absl::Status ParseValue(Scanner& s, ComputationRefList& v, Pending& pending) {
  SEAM_RETURN_IF_ERROR(s.Expect("{"));
  std::vector<std::pair<std::string, size_t>> names;
  if (!s.TryConsume("}")) {
    do {
      size_t at = (s.SkipTrivia(), s.pos());
      SEAM_ASSIGN_OR_RETURN(std::string name, s.Name("a computation name"));
      names.push_back({std::move(name), at});
    } while (s.TryConsume(","));
    SEAM_RETURN_IF_ERROR(s.Expect("}"));
  }
  v.assign(names.size(), nullptr);  // final size: slots stay put
  for (size_t i = 0; i < names.size(); ++i) {
    pending.push_back({&v[i], std::move(names[i].first), names[i].second});
  }
  return absl::OkStatus();
}

// ---- printing ----

std::string PrintValue(int64_t v) { return absl::StrCat(v); }
std::string PrintValue(bool v) { return v ? "true" : "false"; }
std::string PrintValue(const Identifier& v) { return v.text; }
std::string PrintValue(ComparisonDirection v) {
  return std::string(ComparisonDirectionName(v));
}
std::string PrintValue(double v) {
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), v);
  return std::string(buffer, result.ptr);
}
std::string PrintValue(const std::string& v) {
  std::string out = "\"";
  for (char c : v) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default: out += c;
    }
  }
  return out + "\"";
}
std::string PrintValue(const IntList& v) {
  return absl::StrCat("{", absl::StrJoin(v, ","), "}");
}
std::string PrintValue(const SliceRanges& v) {
  return absl::StrCat("{", absl::StrJoin(v, ", ", [](std::string* out, const SliceRange& r) {
    absl::StrAppend(out, "[", r.start, ":", r.limit);
    if (r.stride != 1) absl::StrAppend(out, ":", r.stride);
    out->push_back(']');
  }), "}");
}
std::string PrintPad(int64_t low, int64_t high) { return absl::StrCat(low, "_", high); }
std::string PrintValue(const PaddingConfig& v) {
  return absl::StrJoin(v, "x", [](std::string* out, const PadDim& p) {
    absl::StrAppend(out, PrintPad(p.low, p.high));
    if (p.interior != 0) absl::StrAppend(out, "_", p.interior);
  });
}
std::string PrintValue(const Window& v) {
  auto field = [&](absl::string_view key, auto get, auto is_default) {
    bool all_default = true;
    for (const WindowDim& d : v.dims) all_default = all_default && is_default(d);
    if (all_default) return std::string();
    return absl::StrCat(" ", key, "=", absl::StrJoin(v.dims, "x", [&](std::string* out, const WindowDim& d) {
      absl::StrAppend(out, get(d));
    }));
  };
  std::string out = "{";
  if (!v.dims.empty()) {
    out += field("size", [](const WindowDim& d) { return absl::StrCat(d.size); },
                 [](const WindowDim&) { return false; });
    out += field("stride", [](const WindowDim& d) { return absl::StrCat(d.stride); },
                 [](const WindowDim& d) { return d.stride == 1; });
    out += field("pad", [](const WindowDim& d) { return PrintPad(d.pad_low, d.pad_high); },
                 [](const WindowDim& d) { return d.pad_low == 0 && d.pad_high == 0; });
    out += field("lhs_dilate", [](const WindowDim& d) { return absl::StrCat(d.lhs_dilation); },
                 [](const WindowDim& d) { return d.lhs_dilation == 1; });
    out += field("rhs_dilate", [](const WindowDim& d) { return absl::StrCat(d.rhs_dilation); },
                 [](const WindowDim& d) { return d.rhs_dilation == 1; });
    out += field("rhs_reversal", [](const WindowDim& d) { return absl::StrCat(d.reversal ? 1 : 0); },
                 [](const WindowDim& d) { return !d.reversal; });
    out.erase(1, 1);  // the space before the first field
  }
  return out + "}";
}
std::string PrintLabelGroup(char a, int64_t pos_a, char b, int64_t pos_b,
                            const IntList& spatial) {
  std::string labels(spatial.size() + 2, '?');
  labels[pos_a] = a;
  labels[pos_b] = b;
  for (size_t i = 0; i < spatial.size(); ++i) {
    labels[spatial[i]] = static_cast<char>('0' + i);
  }
  return labels;
}
std::string PrintValue(const ConvDimLabels& v) {
  return absl::StrCat(
      PrintLabelGroup('b', v.input_batch, 'f', v.input_feature, v.input_spatial), "_",
      PrintLabelGroup('i', v.kernel_input_feature, 'o', v.kernel_output_feature,
                      v.kernel_spatial),
      "->", PrintLabelGroup('b', v.output_batch, 'f', v.output_feature, v.output_spatial));
}
std::string PrintValue(const ComputationRef& v) {
  return v == nullptr ? "<null>" : v->name();
}
std::string PrintValue(const ComputationRefList& v) {
  return absl::StrCat("{", absl::StrJoin(v, ", ", [](std::string* out, Computation* c) {
    out->append(PrintValue(c));
  }), "}");
}

}  // namespace

absl::StatusOr<bool> ParseTypedAttribute(Scanner& scanner, absl::string_view name,
                                         Attributes& attrs, Pending& pending) {
#define SEAM_ATTR(member, text, Type)                          \
  if (name == text) {                                          \
    attrs.member.emplace();                                    \
    SEAM_RETURN_IF_ERROR(ParseValue(scanner, *attrs.member, pending)); \
    return true;                                               \
  }
#include "seam/ir/attributes.def"
#undef SEAM_ATTR
  return false;
}

void PrintTypedAttributes(const Attributes& attrs, std::string& out) {
#define SEAM_ATTR(member, text, Type)                                   \
  if (attrs.member.has_value()) {                                       \
    absl::StrAppend(&out, ", " text "=", PrintValue(*attrs.member));     \
  }
#include "seam/ir/attributes.def"
#undef SEAM_ATTR
}

}  // namespace seam
