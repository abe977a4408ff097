#include "seam/codegen/channel_strips.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "seam/codegen/render_common.h"
#include "seam/ir/computation.h"
#include "seam/ir/dtype.h"
#include "seam/ir/opcode.h"

namespace seam::codegen {
namespace {

// A channel's runs of the inputs take at most this share (in eighths) of a
// core's L2: the output pass finds them there beside the lines it streams
// (an NCHW batch norm's 1.6 MB channel in a 2 MB L2).
constexpr int64_t kL2EighthsOfChannel = 7;

// The split of `s`'s space into outer, kept and inner blocks of
// dimensions, if its folded dimensions are exactly the first and the last
// block (each at least one dimension).
std::optional<ChannelStrips> SplitBlocks(const Stage& s) {
  const int rank = static_cast<int>(s.dims.size());
  int first_kept = 0;
  while (first_kept < rank && s.folded[first_kept]) ++first_kept;
  int inner = first_kept;
  while (inner < rank && !s.folded[inner]) ++inner;
  if (first_kept == 0 || inner == first_kept || inner == rank) return std::nullopt;
  ChannelStrips strips;
  for (int d = 0; d < rank; ++d) {
    if (d < first_kept) {
      strips.outer_part.dims.push_back(d);
      strips.outer *= s.dims[d];
    } else if (d < inner) {
      strips.kept_part.dims.push_back(d);
      strips.kept *= s.dims[d];
    } else {
      if (!s.folded[d]) return std::nullopt;
      strips.inner_dims.push_back(d);
      strips.run *= s.dims[d];
    }
  }
  return strips;
}

bool Sums(const Stage& s) {
  return std::all_of(s.reductions.begin(), s.reductions.end(), [](const Instruction* r) {
    return AsBinaryReducer(**r->attrs().to_apply) == Opcode::kAdd &&
           r->shape().dtype() != DType::kPred;
  });
}

// Where a value is read, relative to a task's kept position: at one of
// the space's positions with that kept position (kSpace), at the kept
// position itself (kKept), or anywhere (kAny).
enum class At : uint8_t { kSpace, kKept, kAny };

// Walks what a stage computes from where it is evaluated down to the
// values it loads (as the column strips' walk does): a value another stage
// writes must be loaded at the task's kept position, where that task
// wrote it.
class ChannelReads {
 public:
  ChannelReads(const KernelIr& ir, const Stage& s, const std::vector<int64_t>& space,
               const ChannelStrips& strips)
      : ir_(ir), members_(Computed(s)), space_(space), strips_(strips) {}

  bool Check(const Instruction* v, At at) {
    if (!visited_.insert({v, at}).second) return true;
    if (!members_.contains(v)) {
      auto storage = ir_.storage.find(v);
      if (storage == ir_.storage.end() || storage->second == Storage::kInput) return true;
      return at != At::kAny && at == Shaped(*v);
    }
    for (int k = 0; k < static_cast<int>(v->operands().size()); ++k) {
      if (!Check(v->operand(k), Carried(*v, k, at))) return false;
    }
    return true;
  }

  // kSpace for a value of the space's shape, kKept for one of the kept
  // elements' (the kept dimensions, with any dimensions of 1 between).
  At Shaped(const Instruction& v) const {
    if (!v.shape().IsArray()) return At::kAny;
    if (v.shape().dims() == space_) return At::kSpace;
    return NonUnitDims(v.shape().dims()) == KeptExtents() ? At::kKept : At::kAny;
  }

 private:
  static std::vector<int64_t> NonUnitDims(const std::vector<int64_t>& dims) {
    std::vector<int64_t> out;
    for (int64_t d : dims) {
      if (d != 1) out.push_back(d);
    }
    return out;
  }

  std::vector<int64_t> KeptExtents() const {
    std::vector<int64_t> out;
    for (int d : strips_.kept_part.dims) out.push_back(space_[d]);
    return NonUnitDims(out);
  }

  // Where operand k of `v` is read when `v` is read `at`.
  At Carried(const Instruction& v, int k, At at) const {
    const Instruction& operand = *v.operand(k);
    if (at == At::kAny || Shaped(v) != at) return At::kAny;
    const At shaped = Shaped(operand);
    switch (v.opcode()) {
      case Opcode::kReshape:
      case Opcode::kBitcast:
        // Between shapes of the kept elements (dimensions of 1 added or
        // dropped) the linear index, and so the kept position, stays.
        return at == At::kKept && shaped == At::kKept ? At::kKept : At::kAny;
      case Opcode::kBroadcast: {
        if (shaped != At::kKept) return At::kAny;
        // The operand's dimensions other than 1 go to the result's kept ones.
        const IntList& into = v.attrs().dimensions.value_or(IntList{});
        std::vector<int64_t> kept_into;
        for (size_t d = 0; d < into.size(); ++d) {
          if (operand.shape().dims()[d] != 1) kept_into.push_back(into[d]);
        }
        std::vector<int64_t> result_kept;
        if (at == At::kSpace) {
          for (int d : strips_.kept_part.dims) {
            if (space_[d] != 1) result_kept.push_back(d);
          }
        } else {
          for (size_t d = 0; d < v.shape().dims().size(); ++d) {
            if (v.shape().dims()[d] != 1) result_kept.push_back(static_cast<int64_t>(d));
          }
        }
        return kept_into == result_kept ? At::kKept : At::kAny;
      }
      case Opcode::kReduce:
        return k == 0 && at == At::kKept ? At::kSpace : At::kAny;
      default:
        return IsElementwise(v.opcode()) && operand.shape().dims() == v.shape().dims() ? at
                                                                                       : At::kAny;
    }
  }

  const KernelIr& ir_;
  absl::flat_hash_set<const Instruction*> members_;
  const std::vector<int64_t>& space_;
  const ChannelStrips& strips_;
  absl::flat_hash_set<std::pair<const Instruction*, At>> visited_;
};

}  // namespace

std::optional<ChannelStrips> ChannelStripsOf(const KernelIr& ir, const target::DeviceSpec& device) {
  if (!ir.tile_stage.empty()) return std::nullopt;  // tiles of rows
  auto first = std::find_if(ir.stages.begin(), ir.stages.end(),
                            [](const Stage& s) { return s.kind == LoopKind::kPartialReduce; });
  if (first == ir.stages.end()) return std::nullopt;
  std::optional<ChannelStrips> strips = SplitBlocks(*first);
  if (!strips || strips->kept < 2 * std::max<int64_t>(1, device.units)) return std::nullopt;
  const std::vector<int64_t>& space = first->dims;
  bool pass_after_fold = false;
  for (auto s = ir.stages.begin(); s != ir.stages.end(); ++s) {
    ChannelReads reads(ir, *s, space, *strips);
    if (s->kind == LoopKind::kPartialReduce) {
      if (s->dims != space || s->folded != first->folded || !Sums(*s)) return std::nullopt;
      if (s->one_pass && !reads.Check(s->one_pass->center, At::kSpace)) return std::nullopt;
      for (const Instruction* r : s->reductions) {
        if (!reads.Check(r, At::kKept)) return std::nullopt;
      }
      continue;
    }
    if (s->kind != LoopKind::kElementwise) return std::nullopt;
    const At at = s->Rows() == 1 && s->RowLength() == strips->kept ? At::kKept
                  : s->dims == space                               ? At::kSpace
                                                                   : At::kAny;
    if (at == At::kAny) return std::nullopt;
    for (const Instruction* root : s->roots) {
      if (reads.Shaped(*root) != at || !reads.Check(root, at)) return std::nullopt;
    }
    pass_after_fold |= at == At::kSpace;
  }
  if (!pass_after_fold) return std::nullopt;
  // A channel's runs of the inputs the passes read.
  int64_t channel_bytes = 0, input_bytes = 0;
  const int64_t positions = strips->outer * strips->kept * strips->run;
  for (const KernelBuffer& b : ir.buffers) {
    if (b.storage == Storage::kInput && b.elements == positions) {
      channel_bytes += strips->outer * strips->run * DTypeByteSize(b.dtype);
      input_bytes += positions * DTypeByteSize(b.dtype);
    }
  }
  if (channel_bytes == 0) return std::nullopt;  // no input read again
  if (input_bytes <= device.last_level_cache_bytes / 2) return std::nullopt;
  if (8 * channel_bytes > kL2EighthsOfChannel * device.onchip_bytes_per_unit) return std::nullopt;
  return strips;
}

}  // namespace seam::codegen
