#include "seam/codegen/elemental.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "seam/codegen/c_types.h"
#include "seam/codegen/identifiers.h"
#include "seam/codegen/scalar_expr.h"
#include "seam/util/status_macros.h"

namespace seam::codegen {
namespace {

bool IsZero(const std::string& e) { return e == "0" || e == "int64_t(0)"; }

std::string Mul(const std::string& e, int64_t k) {
  if (k == 0 || IsZero(e)) return "0";
  if (k == 1) return e;
  return absl::StrCat("(", e, ") * ", k);
}

std::string Add(const std::string& a, const std::string& b) {
  if (IsZero(a)) return b;
  if (IsZero(b)) return a;
  return absl::StrCat(a, " + ", b);
}

std::string MemoKey(const Instruction* v, const Index& index) {
  return absl::StrCat(reinterpret_cast<uintptr_t>(v), "@", absl::StrJoin(index, ","));
}

std::string Clamp(const std::string& e, int64_t hi) {
  return absl::StrCat("std::min<int64_t>(std::max<int64_t>(", e, ", 0), ", hi, ")");
}

}  // namespace

ElementalEmitter::ElementalEmitter(const KernelIr& ir, MemoryNames names,
                                   absl::flat_hash_set<const Instruction*> computed,
                                   std::vector<std::string>* lines, int indent)
    : ir_(ir),
      names_(std::move(names)),
      computed_(std::move(computed)),
      lines_(lines),
      indent_(indent, ' ') {}

void ElementalEmitter::Emit(const std::string& line) {
  lines_->push_back(indent_ + line);
  if (!hoist_) return;
  ForEachIdentifier(line, [&](absl::string_view name, absl::string_view after) {
    if (Assigns(after)) in_loop_.insert(std::string(name));
  });
}

void ElementalEmitter::HoistInvariants(const std::vector<std::string>& varying,
                                       InvariantHoist hoist) {
  hoist_ = std::move(hoist);
  in_loop_.insert(varying.begin(), varying.end());
}

std::string ElementalEmitter::Declare(const std::string& type, const std::string& name,
                                      const std::string& expr, const Instruction* loaded) {
  if (hoist_) {
    bool invariant = true;
    ForEachIdentifier(expr, [&](absl::string_view word, absl::string_view) {
      invariant &= !in_loop_.contains(word);
    });
    if (invariant) {
      if (std::optional<std::string> hoisted = hoist_(loaded, type, expr)) return *hoisted;
    }
  }
  Emit(absl::StrCat("const ", type, " ", name, " = ", expr, ";"));
  return name;
}

void ElementalEmitter::Bind(const Instruction* v, const Index& index, const std::string& name) {
  memo_[MemoKey(v, index)] = name;
  in_loop_.insert(name);
}

std::string ElementalEmitter::Storable(const std::string& name) const {
  auto it = unrounded_.find(name);
  return it == unrounded_.end() ? name : it->second;
}

std::string ElementalEmitter::Fresh(const std::string& prefix) {
  return absl::StrCat(prefix, next_++);
}

std::string ElementalEmitter::IndexVar(const std::string& expr) {
  if (expr.find_first_of("+-*/%(") == std::string::npos) return expr;  // already simple
  auto it = memo_.find("#" + expr);
  if (it != memo_.end()) return it->second;
  const size_t lines = lines_->size();
  std::string name = Declare("int64_t", Fresh("x"), expr);
  if (lines_->size() > lines) indices_.push_back({name, lines});
  memo_["#" + expr] = name;
  return name;
}

void ElementalEmitter::DropUnusedIndices() {
  for (auto it = indices_.rbegin(); it != indices_.rend(); ++it) {
    const auto& [name, line] = *it;
    bool read = false;
    for (size_t k = line + 1; k < lines_->size() && !read; ++k) read = Reads((*lines_)[k], name);
    if (!read) lines_->erase(lines_->begin() + static_cast<std::ptrdiff_t>(line));
  }
  indices_.clear();
}

std::string ElementalEmitter::Linear(const std::vector<int64_t>& dims, const Index& index) const {
  std::string linear = "0";
  int64_t stride = 1;
  for (int d = static_cast<int>(dims.size()) - 1; d >= 0;) {
    // A split ending at d whose extents and indices these dims have.
    auto whole = std::find_if(splits_.begin(), splits_.end(), [&](const Split& split) {
      const int n = static_cast<int>(split.dims.size());
      return n > 1 && n <= d + 1 &&
             std::equal(split.dims.begin(), split.dims.end(), dims.begin() + (d + 1 - n)) &&
             std::equal(split.index.begin(), split.index.end(), index.begin() + (d + 1 - n));
    });
    if (whole != splits_.end()) {
      linear = Add(Mul(whole->linear, stride), linear);
      for (int64_t extent : whole->dims) stride *= extent;
      d -= static_cast<int>(whole->dims.size());
      continue;
    }
    if (dims[d] != 1) linear = Add(Mul(index[d], stride), linear);
    stride *= dims[d];
    --d;
  }
  return linear;
}

Index ElementalEmitter::Delinearize(const std::vector<int64_t>& dims, const std::string& linear) {
  Index index(dims.size(), "0");
  int64_t stride = 1;
  for (int d = static_cast<int>(dims.size()) - 1; d >= 0; --d) {
    if (dims[d] != 1) {
      std::string q = stride == 1 ? linear : absl::StrCat("(", linear, ") / ", stride);
      // The outermost non-trivial dimension needs no modulo.
      bool outermost = true;
      for (int e = d - 1; e >= 0; --e) outermost &= dims[e] == 1;
      index[d] = IndexVar(outermost ? q : absl::StrCat("(", q, ") % ", dims[d]));
    }
    stride *= dims[d];
  }
  splits_.push_back({linear, dims, index});
  return index;
}

absl::StatusOr<std::string> ElementalEmitter::Value(const Instruction* v, const Index& index) {
  std::string key = MemoKey(v, index);
  auto it = memo_.find(key);
  if (it != memo_.end()) return it->second;
  std::string name;
  if (computed_.contains(v)) {
    SEAM_ASSIGN_OR_RETURN(name, Compute(v, index));
  } else {
    SEAM_ASSIGN_OR_RETURN(name, Load(v, index));
  }
  memo_[key] = name;
  return name;
}

absl::StatusOr<std::string> ElementalEmitter::Load(const Instruction* v, const Index& index) {
  DType t = v->shape().dtype();
  std::string name = Fresh("v");
  if (v->opcode() == Opcode::kConstant && v->literal() != nullptr && !v->literal()->is_elided() &&
      !v->literal()->is_opaque() && v->literal()->element_count() == 1) {
    Note(LiteralForm(t));
    return Declare(ComputeType(t), name, ElementLiteral(*v->literal(), 0));
  }
  auto storage = ir_.storage.find(v);
  if (storage == ir_.storage.end()) {
    return absl::InternalError(absl::StrCat("kernel ", ir_.name, " reads '", v->name(),
                                            "', which it neither computes nor receives"));
  }
  std::string linear = Linear(v->shape().dims(), index);
  std::string value;
  if (storage->second == Storage::kTile) {  // tiles hold compute values
    value = absl::StrCat(names_.tile(v), "[", linear, " - ", names_.tile_base(v), "]");
  } else {
    value = LoadExpr(t, absl::StrCat(names_.buffer(ir_.BufferIndex(v)), "[", linear, "]"));
    Note(ConversionForm(t));
  }
  return Declare(ComputeType(t), name, value, v);
}

// Reshape (and row-major bitcast): dimensions equal at the end of both
// shapes keep their index; the rest goes through the linear index.
absl::StatusOr<Index> ElementalEmitter::ReshapeIndex(const Instruction* v, const Index& index) {
  const std::vector<int64_t>& out = v->shape().dims();
  const std::vector<int64_t>& in = v->operand(0)->shape().dims();
  size_t common = 0;
  while (common < out.size() && common < in.size() &&
         out[out.size() - 1 - common] == in[in.size() - 1 - common]) {
    ++common;
  }
  std::vector<int64_t> out_prefix(out.begin(), out.end() - common);
  std::vector<int64_t> in_prefix(in.begin(), in.end() - common);
  Index out_prefix_index(index.begin(), index.begin() + out_prefix.size());
  Index result = Delinearize(in_prefix, IndexVar(Linear(out_prefix, out_prefix_index)));
  result.insert(result.end(), index.end() - common, index.end());
  return result;
}

std::string ElementalEmitter::Define(const Instruction* v, const std::string& name,
                                     const std::string& expr) {
  return Declare(ComputeType(v->shape().dtype()), name, expr);
}

absl::StatusOr<std::string> ElementalEmitter::Compute(const Instruction* v, const Index& index) {
  std::string name = Fresh("v");  // before the operands' names
  if (v->opcode() == Opcode::kReduce) {
    return absl::InternalError(absl::StrCat("reduce '", v->name(), "' read as a member"));
  }
  if (IsElementwise(v->opcode())) return ComputeElementwise(v, index, name);
  return ComputeMovement(v, index, name);
}

absl::StatusOr<std::string> ElementalEmitter::ComputeMovement(const Instruction* v,
                                                              const Index& index,
                                                              const std::string& name) {
  const DType t = v->shape().dtype();
  const std::string type = ComputeType(t);
  const Shape& shape = v->shape();
  switch (v->opcode()) {
    case Opcode::kBroadcast: {
      const IntList& dims = v->attrs().dimensions.value_or(IntList{});
      Index in;
      for (int64_t d : dims) in.push_back(index[d]);
      return Value(v->operand(0), in);
    }
    case Opcode::kReshape:
    case Opcode::kBitcast: {
      SEAM_ASSIGN_OR_RETURN(Index in, ReshapeIndex(v, index));
      return Value(v->operand(0), in);
    }
    case Opcode::kCopy:
      return Value(v->operand(0), index);
    case Opcode::kTranspose: {
      const IntList& permutation = *v->attrs().dimensions;
      Index in(index.size());
      for (size_t i = 0; i < permutation.size(); ++i) in[permutation[i]] = index[i];
      return Value(v->operand(0), in);
    }
    case Opcode::kSlice: {
      const SliceRanges& ranges = *v->attrs().slice;
      Index in;
      for (size_t d = 0; d < index.size(); ++d) {
        in.push_back(IndexVar(Add(Mul(index[d], ranges[d].stride), std::to_string(ranges[d].start))));
      }
      return Value(v->operand(0), in);
    }
    case Opcode::kReverse: {
      Index in = index;
      for (int64_t d : v->attrs().dimensions.value_or(IntList{})) {
        in[d] = IndexVar(absl::StrCat(shape.dim(static_cast<int>(d)) - 1, " - ", index[d]));
      }
      return Value(v->operand(0), in);
    }
    case Opcode::kIota: {
      // An iota's values are the type's (bf16 counts 256, 256, 258...).
      int64_t d = v->attrs().iota_dimension.value_or(0);
      Note(ConversionForm(t));
      return Define(v, name, RoundExpr(t, absl::StrCat("static_cast<", type, ">(", index[d], ")")));
    }
    case Opcode::kDynamicSlice: {
      Note(VectorForm::kBranchy);  // clamped starts
      const Shape& operand = v->operand(0)->shape();
      Index in;
      for (int d = 0; d < shape.rank(); ++d) {
        SEAM_ASSIGN_OR_RETURN(std::string start, Value(v->operand(1 + d), {}));
        std::string clamped = IndexVar(Clamp(absl::StrCat("int64_t(", start, ")"),
                                             operand.dim(d) - shape.dim(d)));
        in.push_back(IndexVar(Add(clamped, index[d])));
      }
      return Value(v->operand(0), in);
    }
    case Opcode::kPad: {
      Note(VectorForm::kBranchy);  // a select between the operand and the padding
      const Shape& operand = v->operand(0)->shape();
      const PaddingConfig& padding = *v->attrs().padding;
      std::vector<std::string> conditions;
      Index in;
      for (int d = 0; d < shape.rank(); ++d) {
        const PadDim& p = padding[d];
        std::string shifted = IndexVar(absl::StrCat(index[d], " - (", p.low, ")"));
        int64_t step = p.interior + 1;
        std::string source = step == 1 ? shifted : IndexVar(absl::StrCat(shifted, " / ", step));
        conditions.push_back(absl::StrCat("(", shifted, " >= 0 && ", source, " < ",
                                          operand.dim(d)));
        if (step != 1) absl::StrAppend(&conditions.back(), " && ", shifted, " % ", step, " == 0");
        absl::StrAppend(&conditions.back(), ")");
        in.push_back(IndexVar(Clamp(source, operand.dim(d) - 1)));
      }
      SEAM_ASSIGN_OR_RETURN(std::string inside, Value(v->operand(0), in));
      SEAM_ASSIGN_OR_RETURN(std::string pad, Value(v->operand(1), {}));
      return Define(
          v, name,
          absl::StrCat("(", absl::StrJoin(conditions, " && "), ") ? ", inside, " : ", pad));
    }
    case Opcode::kConcatenate: {
      Note(VectorForm::kBranchy);  // a select among the parts
      int64_t dim = (*v->attrs().dimensions)[0];
      std::string expr;
      int64_t offset = 0;
      std::vector<std::string> pieces;
      for (int k = 0; k < v->operand_count(); ++k) {
        const Instruction* part = v->operand(k);
        int64_t size = part->shape().dim(static_cast<int>(dim));
        Index in = index;
        in[dim] = IndexVar(Clamp(absl::StrCat(index[dim], " - ", offset), size - 1));
        SEAM_ASSIGN_OR_RETURN(std::string value, Value(part, in));
        offset += size;
        pieces.push_back(k + 1 == v->operand_count()
                             ? value
                             : absl::StrCat(index[dim], " < ", offset, " ? ", value, " : "));
      }
      return Define(v, name, absl::StrJoin(pieces, ""));
    }
    default:
      return absl::UnimplementedError(
          absl::StrCat("generated code does not compute '", OpcodeName(v->opcode()), "'"));
  }
}

absl::StatusOr<std::string> ElementalEmitter::ComputeElementwise(const Instruction* v,
                                                                 const Index& index,
                                                                 const std::string& name) {
  const DType t = v->shape().dtype();
  std::vector<std::string> args;
  for (const Instruction* operand : v->operands()) {
    // Rank-0 operands of shaped ops (clamp bounds, select's predicate) are
    // the same for every element.
    Index operand_index = operand->shape().rank() == 0 ? Index{} : index;
    SEAM_ASSIGN_OR_RETURN(std::string value, Value(operand, operand_index));
    args.push_back(value);
  }
  // A half value holding excess precision rounds before it becomes an
  // integer or a predicate (without excess precision it is rounded already):
  // a comparison then decides on the values the interpreter compares
  // wherever the rounded operands agree (a bf16 dropout mask's threshold).
  const bool convert = v->opcode() == Opcode::kConvert;
  const DType from = convert ? v->operand(0)->shape().dtype() : t;
  if (ir_.excess_precision && !IsFloatType(t)) {
    for (int k = 0; k < v->operand_count(); ++k) {
      const DType operand_type = v->operand(k)->shape().dtype();
      if (!IsHalfType(operand_type)) continue;
      args[k] = RoundExpr(operand_type, args[k]);
      Note(ConversionForm(operand_type));
    }
  }
  if (ir_.reciprocal_divisions.contains(v) && (!IsHalfType(t) || ir_.excess_precision)) {
    return Define(v, name,
                  absl::StrCat("(", args[0], " * (", ComputeType(t), "(1) / ", args[1], "))"));
  }
  SEAM_ASSIGN_OR_RETURN(ScalarCode code, ScalarCodeOf(*v, args, twins_));
  Note(code.form);
  const std::string& expr = code.text;
  if (!IsHalfType(t)) return Define(v, name, expr);
  // With excess precision only an explicit convert to a half type rounds
  // (the program asked for that precision there).
  if (ir_.excess_precision && !(convert && from != t)) return Define(v, name, expr);
  Note(keep_half_ ? VectorForm::kPlain : ConversionForm(t));
  const std::string defined =
      Define(v, name, keep_half_ ? absl::StrCat("seam_keep(", expr, ")") : RoundExpr(t, expr));
  unrounded_[defined] = expr;
  return defined;
}

absl::StatusOr<std::string> ReducerLambda(const Instruction& reduce, const std::string& name,
                                          VectorForm* form) {
  return ScalarLambda(**reduce.attrs().to_apply, reduce.shape().dtype(), name, form);
}

absl::StatusOr<std::string> ScalarFunctionBody(const Computation& fn,
                                               const std::vector<std::string>& parameters,
                                               std::vector<std::string>* lines, int indent,
                                               bool keep_half_precision, VectorForm* form) {
  if (static_cast<size_t>(fn.parameter_count()) != parameters.size() ||
      !fn.root()->shape().IsArray() || fn.root()->shape().rank() != 0) {
    return absl::UnimplementedError("generated code calls computations of scalars into a scalar");
  }
  absl::flat_hash_set<const Instruction*> computed;
  for (const auto& i : fn.instructions()) {
    if (i->opcode() != Opcode::kParameter) computed.insert(i.get());
  }
  KernelIr none;
  ElementalEmitter emitter(none, MemoryNames{}, computed, lines, indent);
  if (keep_half_precision) emitter.KeepHalfPrecision();
  for (size_t k = 0; k < parameters.size(); ++k) {
    emitter.Bind(fn.parameter(static_cast<int>(k)), {}, parameters[k]);
  }
  absl::StatusOr<std::string> result = emitter.Value(fn.root(), {});
  if (form != nullptr) *form = emitter.form();
  return result;
}

absl::StatusOr<std::string> ScalarLambda(const Computation& fn, DType t, const std::string& name,
                                         VectorForm* form) {
  std::string type = ComputeType(t);
  std::vector<std::string> body;
  // Half types accumulate in float: no rounding between steps.
  SEAM_ASSIGN_OR_RETURN(std::string result, ScalarFunctionBody(fn, {"a", "b"}, &body, 4,
                                                               /*keep_half_precision=*/true, form));
  std::string text = absl::StrJoin(body, "\n");
  return absl::StrCat("  auto ", name, " = [](", type, " a, ", type, " b) -> ", type, " {\n",
                      text, body.empty() ? "" : "\n", "    return ", result, ";\n  };\n");
}

}  // namespace seam::codegen
