#include "seam/text/parser.h"

#include <map>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "seam/text/attribute_text.h"
#include "seam/text/literal_text.h"
#include "seam/text/scanner.h"
#include "seam/text/shape_text.h"
#include "seam/util/error_location.h"
#include "seam/util/status_macros.h"

namespace seam {
namespace {

constexpr absl::string_view kModuleSeparator = "// -----";

// A name used before it is resolved: an operand or a control predecessor.
struct PendingUse {
  Instruction* user;
  std::string name;
  size_t offset;
  std::optional<Shape> declared_shape;  // typed operands: `f32[] %x`
  bool is_control = false;
};

// A signature, `(p0: f32[], p1: s32[2]) -> f32[]`: the parameters' and
// the root's shapes, checked against them once the body is read.
struct Signature {
  size_t offset = 0;
  std::vector<Shape> parameters;
  Shape result;
};

// What one computation's parse needs to remember until its closing brace.
// Instructions join the computation only then, once their parameter
// numbers are known to be in range.
struct ComputationScope {
  absl::flat_hash_map<std::string, Instruction*> by_name;
  std::vector<PendingUse> uses;
  Instruction* root = nullptr;
  std::vector<std::unique_ptr<Instruction>> instructions;
};

std::string ModuleNameFromFile(absl::string_view filename) {
  size_t slash = filename.rfind('/');
  absl::string_view base =
      slash == absl::string_view::npos ? filename : filename.substr(slash + 1);
  size_t dot = base.find('.');
  std::string name(base.substr(0, dot));
  // The name is printed as `HloModule <name>`: characters a name cannot
  // hold become '_', so the printed module parses back.
  for (char& c : name) {
    if (!IsNameChar(c)) c = '_';
  }
  return name.empty() ? "module" : name;
}

class Parser {
 public:
  Parser(const SourceFile& file, size_t begin, size_t end)
      : file_(file), s_(file, begin, end) {}

  absl::StatusOr<std::unique_ptr<Module>> Parse();

 private:
  absl::Status ParseHeader(Module& module);
  absl::StatusOr<std::string> AttributeKey(absl::string_view what, size_t& at);
  absl::Status ParseDebugTables(Module& module);
  absl::Status ParseComputation(Module& module);
  absl::StatusOr<Signature> ParseSignature();
  absl::Status CheckSignature(const Computation& computation, const Signature& signature,
                              absl::string_view what);
  absl::Status CheckParameterNumbers(const ComputationScope& scope, const std::string& name);
  absl::Status ParseInstruction(ComputationScope& scope);
  absl::Status ParseOperands(Instruction& instruction, ComputationScope& scope);
  absl::Status ParseAttributes(Instruction& instruction, ComputationScope& scope);
  absl::Status ParseControlPredecessors(Instruction& instruction,
                                        ComputationScope& scope);
  absl::Status ResolveUses(ComputationScope& scope);
  absl::Status ResolveCalls(Module& module);

  const SourceFile& file_;
  Scanner s_;
  std::vector<PendingComputationRef> pending_calls_;
  absl::flat_hash_map<std::string, size_t> computation_offsets_;
  // The header's entry_computation_layout, checked against the entry.
  std::optional<Signature> entry_layout_;
};

absl::StatusOr<std::unique_ptr<Module>> Parser::Parse() {
  auto module = std::make_unique<Module>(ModuleNameFromFile(file_.name()));
  if (s_.PeekWord() == "HloModule") SEAM_RETURN_IF_ERROR(ParseHeader(*module));
  SEAM_RETURN_IF_ERROR(ParseDebugTables(*module));
  while (!s_.AtEnd()) {
    // Else the header reads as a computation named `HloModule`.
    if (s_.PeekWord() == "HloModule") {
      return s_.Error("a second 'HloModule' header; separate modules with a '// -----' line");
    }
    SEAM_RETURN_IF_ERROR(ParseComputation(*module));
  }
  // A `/*` left open at the end swallowed whatever followed it.
  if (s_.unterminated_comment()) return s_.Error("unterminated comment");
  if (module->computations().empty()) {
    return s_.Error(absl::StrCat("module '", module->name(),
                                 "' has no computations, expected an ENTRY computation"));
  }
  // Without ENTRY, the last computation is the entry, as in XLA.
  if (module->entry() == nullptr) {
    module->set_entry(module->computations().back().get());
  }
  SEAM_RETURN_IF_ERROR(ResolveCalls(*module));
  if (entry_layout_.has_value()) {
    SEAM_RETURN_IF_ERROR(
        CheckSignature(*module->entry(), *entry_layout_, "entry_computation_layout"));
  }
  return module;
}

absl::Status Parser::ParseHeader(Module& module) {
  SEAM_RETURN_IF_ERROR(s_.Expect("HloModule"));
  SEAM_ASSIGN_OR_RETURN(std::string name, s_.Name("a module name"));
  module.set_name(name);
  absl::flat_hash_set<std::string> seen;
  while (s_.TryConsume(",")) {
    size_t at = 0;
    SEAM_ASSIGN_OR_RETURN(std::string key, AttributeKey("a module attribute", at));
    if (!seen.insert(key).second) {
      return s_.ErrorAtOffset(at, absl::StrCat("module attribute '", key, "' given twice"));
    }
    if (key == "entry_computation_layout") {
      // `{(f32[4]{0}, ...)->f32[4]{0}}`: read as a signature, kept verbatim.
      size_t value_at = (s_.SkipTrivia(), s_.pos());
      SEAM_RETURN_IF_ERROR(s_.Expect("{"));
      SEAM_ASSIGN_OR_RETURN(Signature layout, ParseSignature());
      SEAM_RETURN_IF_ERROR(s_.Expect("}"));
      layout.offset = value_at;
      entry_layout_ = std::move(layout);
      s_.set_pos(value_at);
    }
    SEAM_ASSIGN_OR_RETURN(std::string value, s_.VerbatimValue());
    module.mutable_attributes().push_back({std::move(key), std::move(value)});
  }
  return absl::OkStatus();
}

// `key=` after an attribute's `,`, setting `at` to the key's offset. A `,`
// may end its line with the attribute on the next, but when no `key=`
// follows there (`HloModule m,` then `ENTRY e {`), the comma is at fault.
absl::StatusOr<std::string> Parser::AttributeKey(absl::string_view what, size_t& at) {
  size_t comma = s_.pos() - 1;
  bool comma_ends_line = s_.AtLineEnd();
  at = (s_.SkipTrivia(), s_.pos());
  absl::StatusOr<std::string> key = s_.Name(what);
  size_t after_key = s_.pos();
  if (key.ok() && s_.TryConsume("=")) return key;
  if (comma_ends_line) {
    return s_.ErrorAtOffset(comma, absl::StrCat("expected ", what, " after ','"));
  }
  if (!key.ok()) return key.status();
  s_.set_pos(after_key);
  s_.AtLineEnd();  // a missing `=` is reported on the key's line
  return s_.Unexpected("'='");
}

absl::Status Parser::ParseDebugTables(Module& module) {
  static constexpr absl::string_view kTables[] = {"FileNames", "FunctionNames",
                                                  "FileLocations", "StackFrames"};
  while (true) {
    std::string word = s_.PeekWord();
    bool is_table = false;
    for (absl::string_view table : kTables) is_table = is_table || word == table;
    if (!is_table) return absl::OkStatus();
    s_.Advance(word.size());
    DebugTable table{word, {}};
    while (absl::ascii_isdigit(static_cast<unsigned char>(s_.Peek()))) {
      SEAM_ASSIGN_OR_RETURN(int64_t id, s_.Integer("a table row id"));
      s_.SkipTrivia();
      SEAM_ASSIGN_OR_RETURN(std::string value, s_.VerbatimValue());
      table.rows.push_back({id, std::move(value)});
    }
    module.mutable_debug_tables().push_back(std::move(table));
  }
}

absl::Status Parser::ParseComputation(Module& module) {
  bool is_entry = false;
  if (s_.PeekWord() == "ENTRY") {
    s_.Advance(5);
    is_entry = true;
  }
  size_t at = (s_.SkipTrivia(), s_.pos());
  SEAM_ASSIGN_OR_RETURN(std::string name, s_.Name("a computation name"));
  if (auto [it, inserted] = computation_offsets_.emplace(name, at); !inserted) {
    SourceLocation first = s_.LocationAt(it->second);
    return s_.ErrorAtOffset(at, absl::StrCat("computation '", name,
                                             "' is already defined at ", first.line,
                                             ":", first.column));
  }
  auto computation = std::make_unique<Computation>(name);
  computation->set_location(s_.LocationAt(at));
  std::optional<Signature> signature;
  if (s_.Peek() == '(') {
    size_t signature_at = s_.pos();
    SEAM_ASSIGN_OR_RETURN(signature, ParseSignature());
    signature->offset = signature_at;
    computation->set_has_signature(true);
  }
  SEAM_RETURN_IF_ERROR(s_.Expect("{"));
  ComputationScope scope;
  while (!s_.TryConsume("}")) {
    if (s_.AtEnd()) {
      return s_.Error(absl::StrCat("unexpected end of input, expected '}' to close computation '",
                                   name, "'"));
    }
    SEAM_RETURN_IF_ERROR(ParseInstruction(scope));
  }
  if (scope.instructions.empty()) {
    return s_.ErrorAtOffset(at, absl::StrCat("computation '", name, "' has no instructions"));
  }
  SEAM_RETURN_IF_ERROR(CheckParameterNumbers(scope, name));
  for (auto& instruction : scope.instructions) computation->AddInstruction(std::move(instruction));
  SEAM_RETURN_IF_ERROR(ResolveUses(scope));
  computation->set_root(scope.root != nullptr
                            ? scope.root
                            : computation->instructions().back().get());
  if (signature.has_value()) {
    SEAM_RETURN_IF_ERROR(CheckSignature(*computation, *signature, "the signature"));
  }
  Computation* added = module.AddComputation(std::move(computation));
  if (is_entry) {
    if (module.entry() != nullptr) {
      return s_.ErrorAtOffset(at, absl::StrCat("second ENTRY computation '", name,
                                               "'; '", module.entry()->name(),
                                               "' is already the entry"));
    }
    module.set_entry(added);
  }
  return absl::OkStatus();
}

// `(p0: f32[], p1: s32[2]) -> f32[]`, or without the names (an
// entry_computation_layout).
absl::StatusOr<Signature> Parser::ParseSignature() {
  Signature signature;
  SEAM_RETURN_IF_ERROR(s_.Expect("("));
  if (!s_.TryConsume(")")) {
    do {
      if (s_.Peek() != '(' && !ShapeStartsHere(s_)) {
        SEAM_RETURN_IF_ERROR(s_.Name("a parameter name").status());
        SEAM_RETURN_IF_ERROR(s_.Expect(":"));
      }
      SEAM_ASSIGN_OR_RETURN(Shape shape, ParseShape(s_));
      signature.parameters.push_back(std::move(shape));
    } while (s_.TryConsume(","));
    SEAM_RETURN_IF_ERROR(s_.Expect(")"));
  }
  SEAM_RETURN_IF_ERROR(s_.Expect("->"));
  SEAM_ASSIGN_OR_RETURN(signature.result, ParseShape(s_));
  return signature;
}

// What a signature says must be what the parameters and root are (layouts
// aside): a module whose declared interface contradicts its body is not
// run on either reading.
absl::Status Parser::CheckSignature(const Computation& computation, const Signature& signature,
                                    absl::string_view what) {
  const std::string of = absl::StrCat(what, " of '", computation.name(), "'");
  if (static_cast<int>(signature.parameters.size()) != computation.parameter_count()) {
    return s_.ErrorAtOffset(
        signature.offset,
        absl::StrCat(of, " has ", signature.parameters.size(),
                     " parameter(s) where the computation has ", computation.parameter_count()));
  }
  for (int k = 0; k < computation.parameter_count(); ++k) {
    const Instruction& p = *computation.parameter(k);
    if (!signature.parameters[k].Compatible(p.shape())) {
      return s_.ErrorAtOffset(
          signature.offset,
          absl::StrCat(of, " gives parameter ", k, " as ", signature.parameters[k].ToString(false),
                       ", but '", p.name(), "' is ", p.shape().ToString(false)));
    }
  }
  if (!signature.result.Compatible(computation.root()->shape())) {
    return s_.ErrorAtOffset(
        signature.offset,
        absl::StrCat(of, " gives the result as ", signature.result.ToString(false), ", but root '",
                     computation.root()->name(), "' is ",
                     computation.root()->shape().ToString(false)));
  }
  return absl::OkStatus();
}

// Parameters are numbered 0..n-1 for n parameters, each number once:
// checked before the computation's parameter table is built, which a
// number like 2^63 - 1 would otherwise size.
absl::Status Parser::CheckParameterNumbers(const ComputationScope& scope, const std::string& name) {
  std::map<int64_t, const Instruction*> by_number;
  for (const auto& i : scope.instructions) {
    if (i->opcode() != Opcode::kParameter) continue;
    auto [it, fresh] = by_number.emplace(i->parameter_number(), i.get());
    if (!fresh) {
      return ErrorAt(i->location(), absl::StrCat("'", i->name(), "': parameter number ", it->first,
                                                 " is already used by '", it->second->name(), "'"));
    }
  }
  // Numbers past the count leave a gap; the first parameter past it is
  // reported, wherever it is written.
  int64_t missing = 0;
  for (const auto& [number, parameter] : by_number) {
    if (number != missing) {
      return ErrorAt(parameter->location(),
                     absl::StrCat("'", parameter->name(), "': parameter number ", number,
                                  " leaves a gap: computation '", name, "' has no parameter(",
                                  missing, "); parameters must be numbered 0..n-1"));
    }
    ++missing;
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseInstruction(ComputationScope& scope) {
  bool is_root = false;
  if (s_.PeekWord() == "ROOT") {
    size_t save = s_.pos();
    s_.Advance(4);
    // `ROOT = ...` would be an instruction named ROOT.
    if (s_.Peek() == '=') {
      s_.set_pos(save);
    } else {
      is_root = true;
    }
  }
  size_t name_at = (s_.SkipTrivia(), s_.pos());
  SEAM_ASSIGN_OR_RETURN(std::string name, s_.Name("an instruction name"));
  SEAM_RETURN_IF_ERROR(s_.Expect("="));
  SEAM_ASSIGN_OR_RETURN(Shape shape, ParseShape(s_));
  size_t opcode_at = (s_.SkipTrivia(), s_.pos());
  SEAM_ASSIGN_OR_RETURN(std::string opcode_name, s_.Name("an opcode"));
  std::optional<Opcode> opcode = OpcodeFromName(opcode_name);
  if (!opcode.has_value()) {
    return s_.ErrorAtOffset(opcode_at, absl::StrCat("unknown opcode '", opcode_name, "'"));
  }
  auto owned = std::make_unique<Instruction>(name, *opcode, std::move(shape));
  owned->set_location(s_.LocationAt(name_at));
  Instruction& instruction = *owned;
  if (auto [it, inserted] = scope.by_name.emplace(name, &instruction); !inserted) {
    SourceLocation first = it->second->location();
    return s_.ErrorAtOffset(name_at, absl::StrCat("'", name, "' is already defined at ",
                                                  first.line, ":", first.column));
  }
  if (is_root) {
    if (scope.root != nullptr) {
      return s_.ErrorAtOffset(name_at, absl::StrCat("second ROOT '", name, "'; '",
                                                    scope.root->name(),
                                                    "' is already the root"));
    }
    scope.root = &instruction;
  }
  SEAM_RETURN_IF_ERROR(ParseOperands(instruction, scope));
  SEAM_RETURN_IF_ERROR(ParseAttributes(instruction, scope));
  scope.instructions.push_back(std::move(owned));
  return absl::OkStatus();
}

absl::Status Parser::ParseOperands(Instruction& instruction, ComputationScope& scope) {
  SEAM_RETURN_IF_ERROR(s_.Expect("("));
  size_t list_at = s_.pos();
  switch (instruction.opcode()) {
    case Opcode::kParameter: {
      size_t at = (s_.SkipTrivia(), s_.pos());
      SEAM_ASSIGN_OR_RETURN(int64_t number, s_.Integer("a parameter number"));
      if (number < 0) return s_.ErrorAtOffset(at, "parameter number is negative");
      instruction.set_parameter_number(number);
      return s_.Expect(")");
    }
    case Opcode::kConstant: {
      SEAM_ASSIGN_OR_RETURN(Literal literal, ParseLiteral(s_, instruction.shape()));
      instruction.set_literal(std::move(literal));
      return s_.Expect(")");
    }
    default:
      break;
  }
  int count = 0;
  if (!s_.TryConsume(")")) {
    do {
      PendingUse use{&instruction, "", 0, std::nullopt};
      if (ShapeStartsHere(s_)) {
        SEAM_ASSIGN_OR_RETURN(use.declared_shape, ParseShape(s_));
      }
      use.offset = (s_.SkipTrivia(), s_.pos());
      SEAM_ASSIGN_OR_RETURN(use.name, s_.Name("an operand name"));
      scope.uses.push_back(std::move(use));
      ++count;
    } while (s_.TryConsume(","));
    SEAM_RETURN_IF_ERROR(s_.Expect(")"));
  }
  int arity = OpcodeArity(instruction.opcode());
  if (arity != kVariadic && arity != count) {
    return s_.ErrorAtOffset(list_at - 1,
                            absl::StrCat("'", OpcodeName(instruction.opcode()), "' takes ",
                                         arity, " operand", arity == 1 ? "" : "s",
                                         ", got ", count));
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseAttributes(Instruction& instruction, ComputationScope& scope) {
  absl::flat_hash_set<std::string> seen;
  Attributes& attrs = instruction.mutable_attrs();
  while (true) {
    // An instruction ends at its line end unless a `,` attribute follows
    // (possibly on the next line), or at a `}` closing a one-line
    // computation; a stray word would read as the next instruction's name.
    bool at_line_end = s_.AtLineEnd();
    if (!s_.TryConsume(",")) {
      if (at_line_end || s_.PeekRaw() == '}') break;
      return s_.Unexpected(absl::StrCat("',' or the end of the line after instruction '",
                                        instruction.name(), "'"));
    }
    size_t at = 0;
    SEAM_ASSIGN_OR_RETURN(std::string key, AttributeKey("an attribute name", at));
    if (!seen.insert(key).second) {
      return s_.ErrorAtOffset(at, absl::StrCat("attribute '", key, "' given twice"));
    }
    if (key == "control-predecessors") {
      SEAM_RETURN_IF_ERROR(ParseControlPredecessors(instruction, scope));
      continue;
    }
    SEAM_ASSIGN_OR_RETURN(bool typed,
                          ParseTypedAttribute(s_, key, attrs, pending_calls_));
    if (typed) continue;
    SEAM_ASSIGN_OR_RETURN(std::string value, s_.VerbatimValue());
    attrs.verbatim.push_back({std::move(key), std::move(value)});
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseControlPredecessors(Instruction& instruction,
                                              ComputationScope& scope) {
  SEAM_RETURN_IF_ERROR(s_.Expect("{"));
  if (s_.TryConsume("}")) return absl::OkStatus();
  do {
    PendingUse use{&instruction, "", (s_.SkipTrivia(), s_.pos()), std::nullopt, true};
    SEAM_ASSIGN_OR_RETURN(use.name, s_.Name("an instruction name"));
    scope.uses.push_back(std::move(use));
  } while (s_.TryConsume(","));
  return s_.Expect("}");
}

absl::Status Parser::ResolveUses(ComputationScope& scope) {
  for (PendingUse& use : scope.uses) {
    auto it = scope.by_name.find(use.name);
    if (it == scope.by_name.end()) {
      return s_.ErrorAtOffset(use.offset,
                              absl::StrCat("use of undefined value '", use.name, "'"));
    }
    Instruction* definition = it->second;
    if (use.is_control) {
      use.user->AddControlPredecessor(definition);
      continue;
    }
    if (use.declared_shape.has_value() &&
        !use.declared_shape->Compatible(definition->shape())) {
      return s_.ErrorAtOffset(
          use.offset, absl::StrCat("operand '", use.name, "' is written as ",
                                   use.declared_shape->ToString(), " but defined as ",
                                   definition->shape().ToString()));
    }
    use.user->AppendOperand(definition);
  }
  return absl::OkStatus();
}

absl::Status Parser::ResolveCalls(Module& module) {
  for (const PendingComputationRef& ref : pending_calls_) {
    Computation* callee = module.FindComputation(ref.name);
    if (callee == nullptr) {
      return s_.ErrorAtOffset(ref.offset,
                              absl::StrCat("use of undefined computation '", ref.name, "'"));
    }
    *ref.slot = callee;
  }
  return absl::OkStatus();
}

bool IsSeparatorLine(absl::string_view line) {
  return absl::StripAsciiWhitespace(line) == kModuleSeparator;
}

// True when [begin, end) holds only blanks and comments.
bool IsBlank(const SourceFile& file, size_t begin, size_t end) {
  Scanner scanner(file, begin, end);
  return scanner.AtEnd() && !scanner.unterminated_comment();
}

}  // namespace

std::vector<std::pair<size_t, size_t>> SplitModuleRanges(absl::string_view text) {
  std::vector<std::pair<size_t, size_t>> ranges;
  size_t begin = 0;
  size_t line_start = 0;
  while (line_start <= text.size()) {
    size_t line_end = text.find('\n', line_start);
    if (line_end == absl::string_view::npos) line_end = text.size();
    if (IsSeparatorLine(text.substr(line_start, line_end - line_start))) {
      ranges.push_back({begin, line_start});
      begin = line_end;
    }
    line_start = line_end + 1;
  }
  ranges.push_back({begin, text.size()});
  return ranges;
}

absl::StatusOr<std::unique_ptr<Module>> ParseModuleRange(const SourceFile& file,
                                                         size_t begin, size_t end) {
  Parser parser(file, begin, end);
  return parser.Parse();
}

absl::StatusOr<std::vector<std::unique_ptr<Module>>> ParseSourceFile(
    const SourceFile& file) {
  std::vector<std::unique_ptr<Module>> modules;
  for (auto [begin, end] : SplitModuleRanges(file.text())) {
    if (IsBlank(file, begin, end)) continue;
    SEAM_ASSIGN_OR_RETURN(std::unique_ptr<Module> module,
                          ParseModuleRange(file, begin, end));
    modules.push_back(std::move(module));
  }
  if (modules.empty()) {
    return ErrorAt(file.LocationOf(file.text().size()),
                   "no HLO module in input, expected 'HloModule' or a computation");
  }
  return modules;
}

}  // namespace seam
