// channels-last: activations that convolutions write channel-major (NCHW:
// batch, feature, spatial...) are kept [batch, spatial..., feature] from one
// convolution to the next, the layout direct convolution kernels read and
// write without copies (oneDNN's brgemm kernels, cuDNN's tensor-core ones).
// After XLA's CPU convolution canonicalization, which puts every
// convolution in this form for its library, and its layout assignment,
// which keeps the values around them in it.
//
// The region: every such convolution (its result's batch outermost, its
// feature not innermost: forward and data-gradient convolutions; a weight
// gradient writes a kernel, whose layout the parameters fix) and the
// elementwise ops that read, transitively, what they write. Each is
// rewritten on transposed values:
//
//   c = f32[N,C,H,W] convolution(x, k), dim_labels=bf01_oi01->bf01
//   r = f32[N,C,H,W] multiply(c, broadcast(scale)), dimensions={1}
//     -> c' = f32[N,H,W,C] convolution(x, k), dim_labels=bf01_oi01->b01f
//        r' = f32[N,H,W,C] multiply(c', broadcast(scale)), dimensions={3}
//
// Broadcasts into the region, and elementwise ops of broadcasts alone, are
// rebuilt in its layout; other operands enter through a transpose. A
// reader outside the region gets a transpose back, which transpose-folding
// folds into the next convolution's labels and algsimp into reductions
// (batch-norm statistics), so in a CNN only the module's boundaries keep
// one. A region that would keep as many transposes as it has convolutions
// (a lone convolution) is left alone.
#include <functional>
#include <map>
#include <numeric>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "seam/passes/mover_util.h"
#include "seam/passes/pass.h"

namespace seam {
namespace {

// Where each result dimension of `conv` goes in [batch, spatial..., feature];
// none when that is already its order or its result is not an activation.
std::optional<IntList> ChannelsLastPositions(const Instruction& conv) {
  if (conv.opcode() != Opcode::kConvolution || !conv.attrs().dim_labels.has_value() ||
      !movers::IsPlainArrayOp(conv)) {
    return std::nullopt;
  }
  const ConvDimLabels& l = *conv.attrs().dim_labels;
  const int64_t rank = conv.shape().rank();
  if (rank < 3 || l.output_batch != 0 || l.output_feature == rank - 1) return std::nullopt;
  IntList position(static_cast<size_t>(rank));
  position[0] = 0;
  for (size_t s = 0; s < l.output_spatial.size(); ++s) {
    position[static_cast<size_t>(l.output_spatial[s])] = static_cast<int64_t>(s) + 1;
  }
  position[static_cast<size_t>(l.output_feature)] = rank - 1;
  return position;
}

bool IsBroadcast(const Instruction* i) {
  return i->opcode() == Opcode::kBroadcast && !movers::HasControlEdges(*i) &&
         movers::IsStaticArray(i->shape()) && i->attrs().dimensions.has_value();
}

// An elementwise op of the region's dimensions that may run on transposed
// operands.
bool CanJoin(const Instruction* op, const std::vector<int64_t>& dims) {
  if (!IsElementwise(op->opcode()) || op->opcode() == Opcode::kMap ||
      !movers::IsPlainArrayOp(*op) || !IsRemovableWhenDead(*op) || op->shape().dims() != dims) {
    return false;
  }
  for (const Instruction* operand : op->operands()) {
    if (operand->shape().dims() != dims && !movers::IsImplicitScalar(op, operand)) return false;
  }
  return true;
}

// Whether `i` is computed from broadcasts alone (a broadcast, or an
// elementwise op of them, as in the gradient of an average pool): it is
// then rebuilt in any layout for the same cost.
bool FromBroadcasts(const Instruction* i, const std::vector<int64_t>& dims, int depth = 0) {
  if (IsBroadcast(i)) return true;
  if (depth >= 8 || !CanJoin(i, dims)) return false;
  for (const Instruction* operand : i->operands()) {
    if (!movers::IsImplicitScalar(i, operand) && !FromBroadcasts(operand, dims, depth + 1)) return false;
  }
  return true;
}

// One region: the values to keep transposed, with the permutation from
// channel-major to channels-last their convolutions share.
struct Region {
  IntList position;                   // result dimension d is the transposed value's position[d]
  std::vector<Instruction*> members;  // in post order
};

// The regions of a computation (one per distinct permutation and shape of
// the convolutions' results), each grown from its convolutions through
// their elementwise readers; an op joins one region at most.
std::vector<Region> FindRegions(const std::vector<Instruction*>& post_order) {
  std::map<std::pair<IntList, std::vector<int64_t>>, absl::flat_hash_set<Instruction*>> grown;
  for (Instruction* i : post_order) {
    std::optional<IntList> position = ChannelsLastPositions(*i);
    if (position) grown[{*position, i->shape().dims()}].insert(i);
  }
  absl::flat_hash_set<Instruction*> claimed;
  for (const auto& [key, members] : grown) claimed.insert(members.begin(), members.end());
  std::vector<Region> regions;
  for (auto& [key, members] : grown) {
    std::vector<Instruction*> stack(members.begin(), members.end());
    while (!stack.empty()) {
      Instruction* x = stack.back();
      stack.pop_back();
      for (Instruction* user : x->users()) {
        if (claimed.contains(user) || !CanJoin(user, key.second)) continue;
        claimed.insert(user);
        members.insert(user);
        stack.push_back(user);
      }
    }
    Region region{key.first, {}};
    for (Instruction* i : post_order) {
      if (members.contains(i)) region.members.push_back(i);
    }
    regions.push_back(std::move(region));
  }
  return regions;
}

// Transposes a region would keep: operands entering it other than
// broadcasts and scalars, and members read outside it by anything but a
// convolution or a reduction (which absorb the transpose).
int64_t KeptTransposes(const Region& region) {
  absl::flat_hash_set<const Instruction*> members(region.members.begin(), region.members.end());
  absl::flat_hash_set<const Instruction*> entering;
  int64_t kept = 0;
  for (const Instruction* i : region.members) {
    if (i->opcode() != Opcode::kConvolution) {
      for (const Instruction* operand : i->operands()) {
        if (!members.contains(operand) && !movers::IsImplicitScalar(i, operand) &&
            !FromBroadcasts(operand, i->shape().dims())) {
          entering.insert(operand);
        }
      }
    }
    bool read_outside = i->IsRoot();
    for (const Instruction* user : i->users()) {
      if (!members.contains(user) && user->opcode() != Opcode::kConvolution &&
          user->opcode() != Opcode::kReduce) {
        read_outside = true;
      }
    }
    kept += read_outside ? 1 : 0;
  }
  return kept + static_cast<int64_t>(entering.size());
}

// Rewrites the region's members on transposed values; every old member is
// replaced by a transpose back of its new one (dead once only members read
// it).
void Rewrite(const Region& region, movers::Editor& editor) {
  HloBuilder& b = editor.b();
  const IntList to_channels_last = movers::InversePermutation(region.position);
  absl::flat_hash_map<Instruction*, Instruction*> transposed;  // member -> new
  absl::flat_hash_map<Instruction*, Instruction*> rebuilt;     // entering operand -> transposed
  std::function<Instruction*(Instruction*, Instruction*)> enter = [&](Instruction* op,
                                                                      Instruction* operand) {
    if (auto it = transposed.find(operand); it != transposed.end()) return it->second;
    if (movers::IsImplicitScalar(op, operand)) return operand;
    if (auto it = rebuilt.find(operand); it != rebuilt.end()) return it->second;
    Instruction* built;
    if (IsBroadcast(operand)) {
      IntList dimensions;
      for (int64_t d : *operand->attrs().dimensions) dimensions.push_back(region.position[d]);
      built = b.Broadcast(operand->operand(0),
                          movers::Permute(operand->shape().dims(), to_channels_last),
                          std::move(dimensions));
    } else if (FromBroadcasts(operand, operand->shape().dims())) {
      std::vector<Instruction*> operands;
      for (Instruction* o : operand->operands()) operands.push_back(enter(operand, o));
      built = b.Clone(*operand, std::move(operands));
      built->mutable_shape() = Shape::Array(
          operand->shape().dtype(), movers::Permute(operand->shape().dims(), to_channels_last));
    } else {
      built = b.Transpose(operand, to_channels_last);
    }
    rebuilt.emplace(operand, built);
    return built;
  };
  for (Instruction* i : region.members) {
    Instruction* fresh;
    if (i->opcode() == Opcode::kConvolution) {
      fresh = b.Clone(*i, i->operands());
      ConvDimLabels& labels = *fresh->mutable_attrs().dim_labels;
      labels.output_batch = 0;
      labels.output_feature = i->shape().rank() - 1;
      std::iota(labels.output_spatial.begin(), labels.output_spatial.end(), 1);
    } else {
      std::vector<Instruction*> operands;
      for (Instruction* operand : i->operands()) operands.push_back(enter(i, operand));
      fresh = b.Clone(*i, std::move(operands));
    }
    fresh->mutable_shape() =
        Shape::Array(i->shape().dtype(), movers::Permute(i->shape().dims(), to_channels_last));
    transposed.emplace(i, fresh);
  }
  // Replaced last: until then members read the old values by pointer.
  for (Instruction* i : region.members) {
    editor.ReplaceWithNew(i, b.Transpose(transposed.at(i), region.position));
  }
}

class ChannelsLastPass : public ComputationPass {
  std::vector<Opcode> Triggers() const override { return {Opcode::kConvolution}; }
  void Prepare(Module& module) override { editor_.emplace(module); }
  absl::StatusOr<bool> RunOnComputation(Computation& computation) override {
    const std::vector<Instruction*> post_order = computation.MakePostOrder();
    std::vector<Region> regions = FindRegions(post_order);
    editor_->Begin(computation);
    bool changed = false;
    for (const Region& region : regions) {
      int64_t convolutions = 0;
      for (const Instruction* i : region.members)
        convolutions += i->opcode() == Opcode::kConvolution;
      if (KeptTransposes(region) >= convolutions) continue;
      Rewrite(region, *editor_);
      changed = true;
    }
    editor_->Finish();
    return changed;
  }

  std::optional<movers::Editor> editor_;
};

}  // namespace

std::unique_ptr<Pass> MakeChannelsLastPass() { return std::make_unique<ChannelsLastPass>(); }

}  // namespace seam
