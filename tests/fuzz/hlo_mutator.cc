#include "hlo_mutator.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "seam/ir/dtype.h"
#include "seam/ir/opcode.h"

namespace seam::fuzz {
namespace {

// A span [begin, end) of the text.
struct Span {
  size_t begin = 0, end = 0;
};

// Draws are made one statement at a time (never two in one call's
// arguments, whose order compilers choose), so a seed gives the same mutant
// whichever compiler built the mutator.
size_t Pick(std::mt19937_64& rng, size_t n) {
  return std::uniform_int_distribution<size_t>(0, n - 1)(rng);
}

bool IsWordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
}

// Sizes and numbers where code tends to break: edges of types, powers of
// two and their neighbours, and the value's own neighbours.
int64_t InterestingNumber(int64_t value, std::mt19937_64& rng) {
  static const int64_t kEdges[] = {0,
                                   1,
                                   2,
                                   3,
                                   4,
                                   7,
                                   8,
                                   16,
                                   31,
                                   32,
                                   64,
                                   127,
                                   128,
                                   255,
                                   256,
                                   1024,
                                   4096,
                                   65535,
                                   65536,
                                   2147483647,
                                   2147483648LL,
                                   4294967296LL,
                                   1LL << 53,
                                   1LL << 62,
                                   INT64_MAX,
                                   -1,
                                   -2};
  const auto wrapping = [](uint64_t v) { return static_cast<int64_t>(v); };
  switch (Pick(rng, 4)) {
    case 0:
      return wrapping(static_cast<uint64_t>(value) + 1);
    case 1:
      return wrapping(static_cast<uint64_t>(value) - 1);
    case 2:
      return wrapping(static_cast<uint64_t>(value) * 2);
    default:
      return kEdges[Pick(rng, std::size(kEdges))];
  }
}

const std::vector<absl::string_view>& ElementTypeNames() {
  static const std::vector<absl::string_view> names = [] {
    std::vector<absl::string_view> all;
#define SEAM_DTYPE(e, text, bits, kind) all.push_back(text);
#include "seam/ir/dtypes.def"
#undef SEAM_DTYPE
    return all;
  }();
  return names;
}

// Where a shape's dimensions are written: the text between `f32[` and `]`.
std::vector<Span> DimensionLists(const std::string& text) {
  std::vector<Span> found;
  for (size_t at = text.find('['); at != std::string::npos; at = text.find('[', at + 1)) {
    size_t word = at;
    while (word > 0 && std::isalnum(static_cast<unsigned char>(text[word - 1]))) --word;
    if (word == at || !DTypeFromName(absl::string_view(text).substr(word, at - word))) continue;
    const size_t close = text.find(']', at);
    if (close == std::string::npos) break;
    found.push_back({at + 1, close});
  }
  return found;
}

// Where element types are written (the word before a dimension list).
std::vector<Span> ElementTypes(const std::string& text) {
  std::vector<Span> found;
  for (const Span& dims : DimensionLists(text)) {
    size_t word = dims.begin - 1;
    while (word > 0 && std::isalnum(static_cast<unsigned char>(text[word - 1]))) --word;
    found.push_back({word, dims.begin - 1});
  }
  return found;
}

// The end of a bracketed group opening at `at` (one past its closing
// bracket), counting (), [] and {} alike and skipping quoted strings.
size_t GroupEnd(const std::string& text, size_t at) {
  int depth = 0;
  for (size_t i = at; i < text.size() && text[i] != '\n'; ++i) {
    const char c = text[i];
    if (c == '"') {
      for (++i; i < text.size() && text[i] != '"' && text[i] != '\n'; ++i) {
        if (text[i] == '\\') ++i;
      }
    } else if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if (c == ')' || c == ']' || c == '}') {
      if (--depth == 0) return i + 1;
    }
  }
  return std::string::npos;
}

// One instruction line's parts: its name, its opcode, the inside of its
// operand list and what follows it (the attributes).
struct InstructionText {
  Span name, opcode, operands, attributes;
};

std::optional<InstructionText> ParseInstructionLine(const std::string& text, Span line) {
  const absl::string_view view = absl::string_view(text).substr(line.begin, line.end - line.begin);
  const size_t equals = view.find(" = ");
  if (equals == absl::string_view::npos) return std::nullopt;
  InstructionText parts;
  size_t name_end = line.begin + equals, name_begin = name_end;
  while (name_begin > line.begin && IsWordChar(text[name_begin - 1])) --name_begin;
  if (name_begin > line.begin && text[name_begin - 1] == '%') --name_begin;
  parts.name = {name_begin, name_end};
  // The shape: a tuple's parenthesis group, or a word with its brackets.
  size_t at = line.begin + equals + 3;
  if (at < line.end && text[at] == '(') {
    at = GroupEnd(text, at);
    if (at == std::string::npos || at > line.end) return std::nullopt;
  } else {
    while (at < line.end && text[at] != ' ') {
      if (text[at] == '[' || text[at] == '{') {
        at = GroupEnd(text, at);
        if (at == std::string::npos || at > line.end) return std::nullopt;
      } else {
        ++at;
      }
    }
  }
  while (at < line.end && text[at] == ' ') ++at;
  const size_t opcode_begin = at;
  while (at < line.end && IsWordChar(text[at])) ++at;
  if (at == opcode_begin || at >= line.end || text[at] != '(') return std::nullopt;
  parts.opcode = {opcode_begin, at};
  const size_t close = GroupEnd(text, at);
  if (close == std::string::npos || close > line.end) return std::nullopt;
  parts.operands = {at + 1, close - 1};
  parts.attributes = {close, line.end};
  return parts;
}

std::vector<Span> Lines(const std::string& text) {
  std::vector<Span> lines;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    lines.push_back({begin, end});
    begin = end + 1;
  }
  return lines;
}

std::vector<InstructionText> Instructions(const std::string& text) {
  std::vector<InstructionText> found;
  for (const Span& line : Lines(text)) {
    if (std::optional<InstructionText> parts = ParseInstructionLine(text, line)) {
      found.push_back(*parts);
    }
  }
  return found;
}

// The items of a comma-separated list in [span.begin, span.end), split at
// commas outside brackets and quotes; each item's span.
std::vector<Span> TopLevelItems(const std::string& text, Span span) {
  std::vector<Span> items;
  size_t begin = span.begin;
  for (size_t i = span.begin; i <= span.end; ++i) {
    if (i == span.end || text[i] == ',') {
      size_t b = begin, e = i;
      while (b < e && text[b] == ' ') ++b;
      if (b < e) items.push_back({b, e});
      begin = i + 1;
    } else if (text[i] == '(' || text[i] == '[' || text[i] == '{' || text[i] == '"') {
      const size_t end = text[i] == '"' ? text.find('"', i + 1) + 1 : GroupEnd(text, i);
      if (end == std::string::npos || end == 0 || end > span.end) break;
      i = end - 1;
    }
  }
  return items;
}

std::string Replace(std::string text, Span span, absl::string_view with) {
  text.replace(span.begin, span.end - span.begin, with.data(), with.size());
  return text;
}

// One of the integers written within `span` (not parts of names) replaced
// by an interesting neighbour or edge.
std::optional<std::string> ChangeANumber(std::string text, Span span, std::mt19937_64& rng) {
  std::vector<Span> numbers;
  for (size_t i = span.begin; i < span.end; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i])) || (i > 0 && IsWordChar(text[i - 1]))) {
      continue;
    }
    size_t end = i;
    while (end < span.end && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
    numbers.push_back({i, end});
    i = end;
  }
  if (numbers.empty()) return std::nullopt;
  const Span number = numbers[Pick(rng, numbers.size())];
  int64_t value = 0;
  (void)absl::SimpleAtoi(text.substr(number.begin, number.end - number.begin), &value);
  return Replace(std::move(text), number, absl::StrCat(InterestingNumber(value, rng)));
}

std::optional<std::string> MutateDimension(std::string text, std::mt19937_64& rng) {
  const std::vector<Span> lists = DimensionLists(text);
  if (lists.empty()) return std::nullopt;
  const Span list = lists[Pick(rng, lists.size())];
  std::vector<std::string> dims = absl::StrSplit(
      absl::string_view(text).substr(list.begin, list.end - list.begin), ',', absl::SkipEmpty());
  switch (dims.empty() ? 1 : Pick(rng, 5)) {
    case 0: {  // resize one
      std::string& dim = dims[Pick(rng, dims.size())];
      int64_t value = 1;
      (void)absl::SimpleAtoi(absl::StripPrefix(dim, "<="), &value);
      dim = absl::StrCat(InterestingNumber(value, rng));
      break;
    }
    case 1: {  // add one
      const size_t at = Pick(rng, dims.size() + 1);
      const int64_t size = Pick(rng, 2) ? 1 : InterestingNumber(2, rng);
      dims.insert(dims.begin() + at, absl::StrCat(size));
      break;
    }
    case 2:  // drop one
      dims.erase(dims.begin() + Pick(rng, dims.size()));
      break;
    case 3: {  // swap two
      const size_t a = Pick(rng, dims.size());
      std::swap(dims[a], dims[Pick(rng, dims.size())]);
      break;
    }
    default:  // make one dynamic or static
      std::string& dim = dims[Pick(rng, dims.size())];
      dim = absl::StartsWith(dim, "<=") ? dim.substr(2) : absl::StrCat("<=", dim);
      break;
  }
  return Replace(std::move(text), list, absl::StrJoin(dims, ","));
}

std::optional<std::string> MutateElementType(std::string text, std::mt19937_64& rng) {
  const std::vector<Span> types = ElementTypes(text);
  if (types.empty()) return std::nullopt;
  const std::vector<absl::string_view>& names = ElementTypeNames();
  const Span type = types[Pick(rng, types.size())];
  return Replace(std::move(text), type, names[Pick(rng, names.size())]);
}

std::optional<std::string> MutateOpcode(std::string text, std::mt19937_64& rng) {
  const std::vector<InstructionText> instructions = Instructions(text);
  if (instructions.empty()) return std::nullopt;
  const Opcode opcode = static_cast<Opcode>(Pick(rng, kOpcodeCount));
  return Replace(std::move(text), instructions[Pick(rng, instructions.size())].opcode,
                 OpcodeName(opcode));
}

std::optional<std::string> MutateOperand(std::string text, std::mt19937_64& rng) {
  const std::vector<InstructionText> instructions = Instructions(text);
  if (instructions.empty()) return std::nullopt;
  const InstructionText& target = instructions[Pick(rng, instructions.size())];
  const std::vector<Span> operands = TopLevelItems(text, target.operands);
  const auto name_of = [&](const InstructionText& i) {
    return text.substr(i.name.begin, i.name.end - i.name.begin);
  };
  // Replacements are worked out before `text` is handed on.
  const std::string other = name_of(instructions[Pick(rng, instructions.size())]);
  if (operands.empty()) return Replace(std::move(text), target.operands, other);  // give it one
  const Span operand = operands[Pick(rng, operands.size())];
  switch (Pick(rng, 3)) {
    case 0: {  // another value, keeping a typed operand's type
      const absl::string_view written =
          absl::string_view(text).substr(operand.begin, operand.end - operand.begin);
      const size_t space = written.rfind(' ');
      const Span name =
          space == absl::string_view::npos ? operand : Span{operand.begin + space + 1, operand.end};
      return Replace(std::move(text), name, other);
    }
    case 1: {  // dropped, with the comma before or after it
      Span drop = operand;
      while (drop.begin > target.operands.begin && text[drop.begin - 1] != ',') --drop.begin;
      if (drop.begin > target.operands.begin) {
        --drop.begin;
      } else if (drop.end < target.operands.end) {
        ++drop.end;
      }
      return Replace(std::move(text), drop, "");
    }
    default: {  // repeated
      const std::string copy = text.substr(operand.begin, operand.end - operand.begin);
      return Replace(std::move(text), {operand.end, operand.end}, absl::StrCat(", ", copy));
    }
  }
}

std::optional<std::string> MutateAttribute(std::string text, std::mt19937_64& rng) {
  const std::vector<InstructionText> instructions = Instructions(text);
  std::vector<std::pair<size_t, Span>> attributes;  // (instruction, item)
  for (size_t i = 0; i < instructions.size(); ++i) {
    for (const Span& item : TopLevelItems(text, instructions[i].attributes)) {
      attributes.push_back({i, item});
    }
  }
  if (attributes.empty()) return std::nullopt;
  const auto [owner, item] = attributes[Pick(rng, attributes.size())];
  const std::string written = text.substr(item.begin, item.end - item.begin);
  switch (Pick(rng, 4)) {
    case 0: {  // dropped, with its comma
      Span drop = item;
      while (drop.begin > 0 && text[drop.begin - 1] == ' ') --drop.begin;
      if (drop.begin > 0 && text[drop.begin - 1] == ',') --drop.begin;
      return Replace(std::move(text), drop, "");
    }
    case 1: {  // copied onto another instruction
      const InstructionText& to = instructions[Pick(rng, instructions.size())];
      return Replace(std::move(text), {to.attributes.end, to.attributes.end},
                     absl::StrCat(", ", written));
    }
    case 2: {  // replaced by another instruction's attribute of the same name
      const std::string key = written.substr(0, written.find('='));
      std::vector<Span> same;
      for (const auto& [i, other] : attributes) {
        if (absl::StartsWith(absl::string_view(text).substr(other.begin), key + "=")) {
          same.push_back(other);
        }
      }
      if (same.empty()) return std::nullopt;  // not written key=value
      const Span from = same[Pick(rng, same.size())];
      return Replace(text, item, text.substr(from.begin, from.end - from.begin));
    }
    default:  // a number in it changed
      return ChangeANumber(std::move(text), item, rng);
  }
}

std::optional<std::string> MutateLine(std::string text, std::mt19937_64& rng) {
  const std::vector<Span> lines = Lines(text);
  if (lines.size() < 2) return std::nullopt;
  const size_t n = Pick(rng, lines.size() - 1);
  const Span line = lines[n], next = lines[n + 1];
  const std::string first = text.substr(line.begin, line.end - line.begin);
  const std::string second = text.substr(next.begin, next.end - next.begin);
  switch (Pick(rng, 4)) {
    case 0:
      return Replace(std::move(text), {line.begin, next.begin}, "");
    case 1:
      return Replace(std::move(text), {line.begin, line.begin}, first + "\n");
    case 2:
      return Replace(std::move(text), {line.begin, next.end}, second + "\n" + first);
    default: {  // ROOT moves to this line
      const size_t root = text.find("ROOT ");
      if (root == std::string::npos) return std::nullopt;
      text.erase(root, 5);
      const size_t at = line.begin > root ? line.begin - 5 : line.begin;
      size_t indent = at;
      while (indent < text.size() && text[indent] == ' ') ++indent;
      return Replace(std::move(text), {indent, indent}, "ROOT ");
    }
  }
}

std::optional<std::string> MutateNumber(std::string text, std::mt19937_64& rng) {
  const Span all{0, text.size()};
  return ChangeANumber(std::move(text), all, rng);
}

}  // namespace

absl::string_view MutationName(Mutation mutation) {
  switch (mutation) {
    case Mutation::kDimension:
      return "dimension";
    case Mutation::kElementType:
      return "element-type";
    case Mutation::kOpcode:
      return "opcode";
    case Mutation::kAttribute:
      return "attribute";
    case Mutation::kOperand:
      return "operand";
    case Mutation::kLine:
      return "line";
    case Mutation::kNumber:
      return "number";
    case Mutation::kBytes:
      return "bytes";
  }
  return "?";
}

std::string MutateBytes(std::string text, std::mt19937_64& rng) {
  static const char kSpecial[] = "\0\xff{}[](),=%\"\n -.0123456789";
  const size_t at = text.empty() ? 0 : Pick(rng, text.size());
  switch (text.empty() ? 1 : Pick(rng, 4)) {
    case 0:
      text[at] = static_cast<char>(text[at] ^ (1 << Pick(rng, 8)));
      break;
    case 1:
      text.insert(text.begin() + at, kSpecial[Pick(rng, sizeof(kSpecial) - 1)]);
      break;
    case 2:
      text.erase(at, 1 + Pick(rng, std::min<size_t>(16, text.size() - at)));
      break;
    default: {
      const size_t length = 1 + Pick(rng, std::min<size_t>(32, text.size() - at));
      text.insert(Pick(rng, text.size() + 1), text.substr(at, length));
    }
  }
  return text;
}

std::string Mutate(std::string text, Mutation kind, std::mt19937_64& rng,
                   const ByteMutator& bytes) {
  // In Mutation's order; bytes have no structure-aware form.
  using Structured = std::optional<std::string> (*)(std::string, std::mt19937_64&);
  static constexpr Structured kStructured[] = {MutateDimension, MutateElementType, MutateOpcode,
                                               MutateAttribute, MutateOperand,     MutateLine,
                                               MutateNumber};
  static_assert(std::size(kStructured) == kMutationCount - 1);
  const size_t k = static_cast<size_t>(kind);
  std::optional<std::string> mutated;
  if (k < std::size(kStructured)) mutated = kStructured[k](text, rng);
  return mutated.has_value() ? *std::move(mutated) : bytes(std::move(text), rng);
}

}  // namespace seam::fuzz
