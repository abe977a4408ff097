// layout-normalization: gives every shape in the module the row-major layout
// {rank-1,...,0} and turns every bitcast into the logical ops it stands for.
//
// Layouts only say how a value sits in memory; the values an op computes do
// not depend on them, except through bitcast, which reinterprets memory. So
// a bitcast between layouts is rewritten first, as
//
//   transpose(x) into x's memory order -> reshape to the result's memory
//   order -> transpose into the result's dimension order
//
// (transposes that are identities are left out, so a bitcast between
// row-major shapes becomes a plain reshape), and then every layout is
// dropped. The fusion planner and the code generators index every array in
// row-major order and rely on this form; after it, physical and logical
// order agree everywhere and a copy is a no-op that algsimp removes.
//
// Tiling and memory-space suffixes go with the layouts: they describe where
// an accelerator keeps a value, not what it is. The module's
// `entry_computation_layout` is dropped too: the entry's parameters and root
// say the same, row-major, now.
//
// Left alone: bitcasts whose two sides differ in element size or count
// (invalid HLO the verifier does not see) and dynamic shapes. Such a
// bitcast still reads memory in its operand's layout and writes in its
// result's; where either is not row-major, dropping layouts would change
// its value, so a module holding one keeps every layout as written.
#include "seam/passes/mover_util.h"
#include "seam/passes/pass.h"

namespace seam {
namespace {

// Whether `shape` or any element of it carries a layout.
bool HasLayout(const Shape& shape) {
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes()) {
      if (HasLayout(element)) return true;
    }
    return false;
  }
  return shape.layout().has_value();
}

void DropLayouts(Shape& shape) {
  for (Shape& element : shape.mutable_tuple_shapes()) DropLayouts(element);
  shape.set_layout(std::nullopt);
}

// The dimensions of `shape` from major to minor in memory.
IntList MajorToMinor(const Shape& shape) {
  IntList order;
  if (shape.layout().has_value() &&
      shape.layout()->minor_to_major.size() == static_cast<size_t>(shape.rank())) {
    order.assign(shape.layout()->minor_to_major.rbegin(), shape.layout()->minor_to_major.rend());
  } else {
    for (int64_t d = 0; d < shape.rank(); ++d) order.push_back(d);
  }
  return order;
}

bool IsRewritableBitcast(const Instruction* i) {
  if (i->opcode() != Opcode::kBitcast || i->operand_count() != 1 ||
      movers::HasControlEdges(*i)) {
    return false;
  }
  const Shape& to = i->shape();
  const Shape& from = i->operand(0)->shape();
  return movers::IsStaticArray(to) && movers::IsStaticArray(from) &&
         to.dtype() == from.dtype() && to.ElementCount() == from.ElementCount();
}

bool IsRowMajor(const Shape& shape) {
  return shape.IsArray() ? movers::IsIdentityPermutation(MajorToMinor(shape)) : !HasLayout(shape);
}

// A bitcast that stays as written and whose value depends on layouts.
bool ReadsThroughLayouts(const Instruction* i) {
  if (i->opcode() != Opcode::kBitcast || IsRewritableBitcast(i)) return false;
  if (!IsRowMajor(i->shape())) return true;
  for (const Instruction* operand : i->operands()) {
    if (!IsRowMajor(operand->shape())) return true;
  }
  return false;
}

// The logical ops computing `bitcast`'s value from its operand (see above).
Instruction* LowerBitcast(HloBuilder& b, Instruction* bitcast) {
  const Shape& to = bitcast->shape();
  Instruction* x = bitcast->operand(0);
  IntList from_order = MajorToMinor(x->shape());
  if (!movers::IsIdentityPermutation(from_order)) x = b.Transpose(x, from_order);
  IntList to_order = MajorToMinor(to);
  std::vector<int64_t> to_memory_dims = movers::Permute(to.dims(), to_order);
  if (x->shape().dims() != to_memory_dims) x = b.Reshape(x, to_memory_dims);
  if (!movers::IsIdentityPermutation(to_order)) {
    x = b.Transpose(x, movers::InversePermutation(to_order));
  }
  return x;
}

class LayoutNormalizationPass : public Pass {
 public:
  absl::StatusOr<bool> Run(Module& module) override {
    for (const auto& computation : module.computations()) {
      for (const auto& i : computation->instructions()) {
        if (ReadsThroughLayouts(i.get())) return false;
      }
    }
    bool changed = DropEntryLayout(module);
    movers::Editor editor(module);
    for (const auto& computation : module.computations()) {
      if (!movers::HasOpcode(*computation, Opcode::kBitcast)) continue;
      editor.Begin(*computation);
      for (Instruction* i : movers::InstructionList(*computation)) {
        if (!IsRewritableBitcast(i)) continue;
        Instruction* lowered = LowerBitcast(editor.b(), i);
        if (lowered == i->operand(0)) {
          editor.ReplaceWithExisting(i, lowered);
        } else {
          editor.ReplaceWithNew(i, lowered);
        }
        changed = true;
      }
      editor.Finish();
    }
    for (const auto& computation : module.computations()) {
      for (const auto& i : computation->instructions()) {
        if (!HasLayout(i->shape())) continue;
        DropLayouts(i->mutable_shape());
        changed = true;
      }
    }
    return changed;
  }

 private:
  static bool DropEntryLayout(Module& module) {
    std::vector<VerbatimAttribute>& attributes = module.mutable_attributes();
    auto it = std::remove_if(attributes.begin(), attributes.end(), [](const auto& a) {
      return a.name == "entry_computation_layout";
    });
    if (it == attributes.end()) return false;
    attributes.erase(it, attributes.end());
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeLayoutNormalizationPass() {
  return std::make_unique<LayoutNormalizationPass>();
}

}  // namespace seam
