#include "seam/passes/expander_util.h"

#include <cmath>
#include <limits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "seam/passes/call_graph_util.h"
#include "seam/util/status_macros.h"

namespace seam::expand {
namespace {

std::unique_ptr<Instruction> NewParameter(NameUniquer& names, absl::string_view base, int64_t n,
                                          Shape shape) {
  auto p = std::make_unique<Instruction>(names.Make(base), Opcode::kParameter, std::move(shape));
  p->set_parameter_number(n);
  return p;
}

// `value`, or copies of its arrays laid out as `want`.
Instruction* LaidOutAs(HloBuilder& b, Instruction* value, const Shape& want) {
  if (!want.IsTuple()) return b.Add(Opcode::kCopy, want, {value});
  std::vector<Instruction*> elements;
  for (size_t k = 0; k < want.tuple_shapes().size(); ++k) {
    Instruction* element = b.GetTupleElement(value, static_cast<int64_t>(k));
    const Shape& w = want.tuple_shapes()[k];
    elements.push_back(InterchangeableShapes(element->shape(), w) ? element : LaidOutAs(b, element, w));
  }
  return b.Tuple(std::move(elements));
}

}  // namespace

Rewriter::Rewriter(Module& module) : module_(module) {
  for (const auto& c : module.computations()) computation_names_.insert(c->name());
}

NameUniquer& Rewriter::names() {
  if (names_ == nullptr) names_ = std::make_unique<NameUniquer>(module_);
  return *names_;
}

std::vector<Instruction*> Rewriter::Instructions(std::optional<Opcode> op) const {
  std::vector<Instruction*> found;
  for (const auto& c : module_.computations()) {
    for (const auto& i : c->instructions()) {
      if (!op.has_value() || i->opcode() == *op) found.push_back(i.get());
    }
  }
  return found;
}

void Rewriter::ReplaceWithNew(Instruction* old, Instruction* fresh) {
  // The new value takes the old one's shape, bounds (`<=N`) included.
  SEAM_CHECK(old != fresh && old->shape().CompatibleIgnoringDynamism(fresh->shape()));
  fresh->mutable_shape() = old->shape();
  old->ReplaceAllUsesWith(fresh);
  CopyControlEdges(old, fresh);
  old->DetachControlEdges();
  old->DetachOperands();
  removed_[old->parent()].insert(old);
}

void Rewriter::ReplaceWithExisting(Instruction* old, Instruction* existing) {
  if (InterchangeableShapes(old->shape(), existing->shape())) {
    SEAM_CHECK(old != existing && old->shape().Compatible(existing->shape()));
    old->ReplaceAllUsesWith(existing);
    CopyControlEdges(old, existing);
    old->DetachControlEdges();
    old->DetachOperands();
    removed_[old->parent()].insert(old);
    return;
  }
  HloBuilder b = Builder(*old->parent());
  ReplaceWithNew(old, LaidOutAs(b, existing, old->shape()));
}

void Rewriter::Remove(Instruction* dead) {
  SEAM_CHECK(dead->users().empty() && !dead->IsRoot());
  dead->DetachControlEdges();
  dead->DetachOperands();
  removed_[dead->parent()].insert(dead);
}

void Rewriter::Flush() {
  for (auto& [computation, dead] : removed_) computation->RemoveInstructions(dead);
  removed_.clear();
}

std::string Rewriter::UniqueComputationName(absl::string_view base) {
  if (computation_names_.insert(std::string(base)).second) return std::string(base);
  for (int64_t n = 1;; ++n) {
    std::string name = absl::StrCat(base, ".", n);
    if (computation_names_.insert(name).second) return name;
  }
}

Computation* Rewriter::ScalarReducer(Opcode op, DType type) {
  Computation*& cached = reducers_[{op, type}];
  if (cached != nullptr) return cached;
  std::string base = absl::StrCat(OpcodeName(op), "_", DTypeName(type));
  auto owned = std::make_unique<Computation>(UniqueComputationName(base));
  Computation* c = module_.AddComputation(std::move(owned));
  Instruction* lhs = c->AddInstruction(NewParameter(names(), "lhs", 0, Shape::Scalar(type)));
  Instruction* rhs = c->AddInstruction(NewParameter(names(), "rhs", 1, Shape::Scalar(type)));
  HloBuilder b(*c, names());
  c->set_root(b.Binary(op, lhs, rhs));
  cached = c;
  return c;
}

Computation* Rewriter::CloneWithParameters(const Computation& source, const Instruction& root,
                                           const std::vector<int64_t>& params, std::string name) {
  // What `root` depends on, operands before users.
  std::vector<const Instruction*> order;
  absl::flat_hash_set<const Instruction*> seen;
  std::vector<std::pair<const Instruction*, size_t>> stack{{&root, 0}};
  seen.insert(&root);
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    if (!node->control_predecessors().empty()) return nullptr;
    if (next < node->operands().size()) {
      const Instruction* operand = node->operand(static_cast<int>(next++));
      if (seen.insert(operand).second) stack.push_back({operand, 0});
      continue;
    }
    order.push_back(node);
    stack.pop_back();
  }
  absl::flat_hash_map<int64_t, int64_t> new_number;
  for (size_t k = 0; k < params.size(); ++k) {
    if (params[k] < 0 || params[k] >= source.parameter_count() ||
        source.parameter(static_cast<int>(params[k])) == nullptr) {
      return nullptr;
    }
    new_number[params[k]] = static_cast<int64_t>(k);
  }
  for (const Instruction* i : order) {
    if (i->opcode() == Opcode::kParameter && !new_number.contains(i->parameter_number())) {
      return nullptr;
    }
  }
  auto owned = std::make_unique<Computation>(UniqueComputationName(name));
  owned->set_has_signature(source.has_signature());
  owned->set_location(source.location());
  Computation* copy = module_.AddComputation(std::move(owned));
  absl::flat_hash_map<const Instruction*, Instruction*> map;
  for (size_t k = 0; k < params.size(); ++k) {
    const Instruction* p = source.parameter(static_cast<int>(params[k]));
    Instruction* clone = copy->AddInstruction(
        NewParameter(names(), p->name(), static_cast<int64_t>(k), p->shape()));
    clone->mutable_attrs() = p->attrs();
    clone->set_location(p->location());
    map[p] = clone;
  }
  HloBuilder b(*copy, names());
  for (const Instruction* i : order) {
    if (i->opcode() == Opcode::kParameter) continue;
    std::vector<Instruction*> operands;
    for (const Instruction* operand : i->operands()) operands.push_back(map.at(operand));
    map[i] = b.Clone(*i, std::move(operands));
  }
  copy->set_root(map.at(&root));
  return copy;
}

bool IsStaticArray(const Shape& shape) {
  if (!shape.IsArray() || shape.HasDynamicDims()) return false;
  for (int64_t d : shape.dims()) {
    if (d < 0) return false;
  }
  return shape.ElementCount().has_value();
}

Instruction* BitsConstant(HloBuilder& b, DType type, uint64_t bits) {
  Literal literal(Shape::Scalar(type));
  literal.SetBits(0, bits);
  return b.Constant(std::move(literal));
}

Instruction* SplatValue(HloBuilder& b, DType type, const std::vector<int64_t>& dims,
                        double value) {
  Literal literal(Shape::Scalar(type));
  if (IsComplex(type)) {
    literal.SetComplex(0, {value, 0.0});
  } else {
    literal.SetDouble(0, value);
  }
  Instruction* scalar = b.Constant(std::move(literal));
  return dims.empty() ? scalar : b.Broadcast(scalar, dims, {});
}

Instruction* SplatBits(HloBuilder& b, DType type, const std::vector<int64_t>& dims,
                       uint64_t bits) {
  Instruction* scalar = BitsConstant(b, type, bits);
  return dims.empty() ? scalar : b.Broadcast(scalar, dims, {});
}

std::optional<Literal> IdentityOf(Opcode op, DType type) {
  Literal e(Shape::Scalar(type));
  int bits = DTypeBits(type);
  uint64_t ones = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  if (IsPred(type)) {
    switch (op) {
      case Opcode::kAnd:
      case Opcode::kMinimum: e.SetBits(0, 1); return e;
      case Opcode::kOr:
      case Opcode::kMaximum: e.SetBits(0, 0); return e;
      default: return std::nullopt;
    }
  }
  if (IsFloat(type)) {
    switch (op) {
      case Opcode::kAdd: e.SetDouble(0, -0.0); return e;
      case Opcode::kMultiply: e.SetDouble(0, 1.0); return e;
      case Opcode::kMaximum: e.SetDouble(0, -std::numeric_limits<double>::infinity()); return e;
      case Opcode::kMinimum: e.SetDouble(0, std::numeric_limits<double>::infinity()); return e;
      default: return std::nullopt;
    }
  }
  if (IsInteger(type) && DTypeByteSize(type) * 8 == bits) {
    uint64_t sign = uint64_t{1} << (bits - 1);
    switch (op) {
      case Opcode::kAdd:
      case Opcode::kOr: e.SetBits(0, 0); return e;
      case Opcode::kMultiply: e.SetBits(0, 1); return e;
      case Opcode::kAnd: e.SetBits(0, ones); return e;
      case Opcode::kMaximum: e.SetBits(0, IsSigned(type) ? sign : 0); return e;
      case Opcode::kMinimum: e.SetBits(0, IsSigned(type) ? ones ^ sign : ones); return e;
      default: return std::nullopt;
    }
  }
  return std::nullopt;
}

bool IsIota(const std::vector<int64_t>& list) {
  for (size_t k = 0; k < list.size(); ++k) {
    if (list[k] != static_cast<int64_t>(k)) return false;
  }
  return true;
}

}  // namespace seam::expand
