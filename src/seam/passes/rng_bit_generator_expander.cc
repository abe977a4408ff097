// rng-bit-generator-expander: rng-bit-generator becomes plain integer HLO
// (iota, add, xor, shifts, multiplies on u64) computing exactly the bits and
// new state the interpreter produces, so backends without a random-bits
// kernel can run it and the fusion planner can fuse it with its consumers.
//
// The interpreter's algorithm, whatever `algorithm` says:
//   word i = SplitMix64(key ^ SplitMix64(counter + i)), i the row-major index,
//   truncated to the element width (the low bits of the word);
//   key = state[0], counter = state[1] (0 for a one-word state);
//   new state = state with state[1] (state[0] for one word) advanced by the
//   number of words drawn.
// State words are read as their raw bits, zero-extended to 64.
//
// Skipped, since no exact expansion exists with the element types HLO
// arithmetic has: pred, complex, sub-byte and opaque (f8) output types, and
// states that are not integer vectors; bounded dynamic shapes.
#include <map>

#include "seam/passes/expander_util.h"
#include "seam/passes/pass.h"

namespace seam {
namespace {

// The unsigned type of the same width, for integer and float types of 8 to
// 64 bits with a byte per 8 bits; nullopt otherwise.
std::optional<DType> UnsignedOfWidth(DType type) {
  if ((!IsInteger(type) && !IsFloat(type)) || DTypeBits(type) != 8 * DTypeByteSize(type)) {
    return std::nullopt;
  }
  switch (DTypeBits(type)) {
    case 8: return DType::kU8;
    case 16: return DType::kU16;
    case 32: return DType::kU32;
    case 64: return DType::kU64;
    default: return std::nullopt;
  }
}

class Expansion {
 public:
  Expansion(HloBuilder& b, std::vector<int64_t> dims) : b_(b), dims_(std::move(dims)) {}

  // A u64 splat, built once per value.
  Instruction* K(uint64_t bits) {
    Instruction*& k = constants_[bits];
    if (k == nullptr) k = expand::SplatBits(b_, DType::kU64, dims_, bits);
    return k;
  }
  Instruction* Op(Opcode op, Instruction* a, Instruction* c) { return b_.Binary(op, a, c); }
  // x ^ (x >> s)
  Instruction* XorShift(Instruction* x, int s) {
    return Op(Opcode::kXor, x, Op(Opcode::kShiftRightLogical, x, K(s)));
  }
  // The interpreter's SplitMix64 finaliser, on u64 arrays of dims_. Each
  // constant is made before the shift it multiplies: the order of creation
  // names the instructions, and a call's arguments may be evaluated in any
  // order.
  Instruction* SplitMix64(Instruction* x) {
    x = Op(Opcode::kAdd, x, K(0x9e3779b97f4a7c15ull));
    Instruction* mix = K(0xbf58476d1ce4e5b9ull);
    x = Op(Opcode::kMultiply, XorShift(x, 30), mix);
    mix = K(0x94d049bb133111ebull);
    x = Op(Opcode::kMultiply, XorShift(x, 27), mix);
    return XorShift(x, 31);
  }

 private:
  HloBuilder& b_;
  std::vector<int64_t> dims_;
  std::map<uint64_t, Instruction*> constants_;
};

// Raw bits of an integer scalar as u64, zero-extended.
Instruction* ToU64(HloBuilder& b, Instruction* x) {
  DType t = x->shape().dtype();
  if (t == DType::kU64) return x;
  DType u = *UnsignedOfWidth(t);
  if (u != t) x = b.Add(Opcode::kBitcastConvert, Shape::Array(u, x->shape().dims()), {x});
  return b.Convert(x, DType::kU64);
}

// The low bits of a u64 array, as `type`.
Instruction* FromU64(HloBuilder& b, Instruction* x, DType type) {
  DType u = *UnsignedOfWidth(type);
  if (u != DType::kU64) x = b.Convert(x, u);
  if (u == type) return x;
  return b.Add(Opcode::kBitcastConvert, Shape::Array(type, x->shape().dims()), {x});
}

bool Expandable(const Instruction& i) {
  if (i.opcode() != Opcode::kRngBitGenerator || !i.shape().IsTuple() ||
      i.shape().tuple_shapes().size() != 2) {
    return false;
  }
  const Shape& state = i.operand(0)->shape();
  const Shape& bits = i.shape().tuple_shapes()[1];
  return expand::IsStaticArray(state) && state.rank() == 1 && state.dim(0) >= 1 &&
         IsInteger(state.dtype()) && UnsignedOfWidth(state.dtype()).has_value() &&
         expand::IsStaticArray(bits) && UnsignedOfWidth(bits.dtype()).has_value();
}

Instruction* Expand(HloBuilder& b, Instruction* rng) {
  Instruction* state = rng->operand(0);
  const Shape& bits_shape = rng->shape().tuple_shapes()[1];
  int64_t words = state->shape().dim(0);
  int64_t count = *bits_shape.ElementCount();
  auto word = [&](int64_t k) {
    return ToU64(b, b.Reshape(b.Slice(state, {{k, k + 1, 1}}), {}));
  };
  Instruction* key = word(0);
  Instruction* counter = words > 1 ? word(1) : nullptr;  // null: 0

  // Row-major element index, then the two SplitMix64 rounds.
  Instruction* index = b.Add(Opcode::kIota, Shape::Array(DType::kU64, {count}), {});
  index->mutable_attrs().iota_dimension = 0;
  const std::vector<int64_t>& dims = bits_shape.dims();
  if (dims != std::vector<int64_t>{count}) index = b.Reshape(index, dims);
  Expansion e(b, dims);
  auto spread = [&](Instruction* scalar) {
    return dims.empty() ? scalar : b.Broadcast(scalar, dims, {});
  };
  Instruction* inner =
      e.SplitMix64(counter == nullptr ? index : e.Op(Opcode::kAdd, spread(counter), index));
  Instruction* bits = e.SplitMix64(e.Op(Opcode::kXor, spread(key), inner));
  bits = FromU64(b, bits, bits_shape.dtype());

  // The advanced word replaces state[1] (state[0] for a one-word state).
  int64_t advanced = words > 1 ? 1 : 0;
  Instruction* moved = b.Binary(Opcode::kAdd, words > 1 ? counter : key,
                                expand::BitsConstant(b, DType::kU64, static_cast<uint64_t>(count)));
  moved = b.Reshape(FromU64(b, moved, state->shape().dtype()), {1});
  std::vector<Instruction*> parts;
  if (advanced > 0) parts.push_back(b.Slice(state, {{0, advanced, 1}}));
  parts.push_back(moved);
  if (advanced + 1 < words) parts.push_back(b.Slice(state, {{advanced + 1, words, 1}}));
  Instruction* new_state = parts.size() == 1 ? parts[0] : b.Concatenate(parts, 0);
  new_state->mutable_shape() = rng->shape().tuple_shapes()[0];
  bits->mutable_shape() = bits_shape;
  return b.Tuple({new_state, bits});
}

class RngBitGeneratorExpanderPass : public Pass {
 public:
  absl::StatusOr<bool> Run(Module& module) override {
    expand::Rewriter rewriter(module);
    bool changed = false;
    for (Instruction* i : rewriter.Instructions(Opcode::kRngBitGenerator)) {
      if (!Expandable(*i)) continue;
      HloBuilder b = rewriter.Builder(*i->parent());
      rewriter.ReplaceWithNew(i, Expand(b, i));
      changed = true;
    }
    rewriter.Flush();
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeRngBitGeneratorExpanderPass() {
  return std::make_unique<RngBitGeneratorExpanderPass>();
}

}  // namespace seam
