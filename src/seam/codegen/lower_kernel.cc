#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "seam/codegen/c_types.h"
#include "seam/codegen/kernel_ir.h"
#include "seam/codegen/scalar_expr.h"
#include "seam/fusion/cost_model.h"
#include "seam/fusion/one_pass_statistics.h"
#include "seam/fusion/op_class.h"
#include "seam/fusion/row_space.h"
#include "seam/util/status_macros.h"

namespace seam::codegen {
namespace {

using fusion::ClassifyOp;
using fusion::OpClass;

absl::Status Unsupported(const Instruction& i, absl::string_view why) {
  return absl::UnimplementedError(absl::StrCat("'", i.name(), "' (", OpcodeName(i.opcode()),
                                               "): ", why));
}

bool AllCodegenTypes(const Instruction& i) {
  if (!i.shape().IsArray() || !IsKernelType(i.shape().dtype())) return false;
  for (const Instruction* o : i.operands()) {
    if (!o->shape().IsArray() || !IsKernelType(o->shape().dtype())) return false;
  }
  return true;
}

// Whether the reducer is a computation of two scalars of generated-code
// types: its body becomes a C++ lambda.
bool SimpleReducer(const Instruction& reduce) {
  const Computation* fn = reduce.attrs().to_apply.value_or(nullptr);
  if (fn == nullptr || fn->parameter_count() != 2) return false;
  for (const auto& i : fn->instructions()) {
    if (!i->shape().IsArray() || i->shape().rank() != 0) return false;
    if (i->opcode() != Opcode::kParameter && i->opcode() != Opcode::kConstant &&
        !IsElementwise(i->opcode())) {
      return false;
    }
  }
  return true;
}

absl::Status CheckSupported(const fusion::Kernel& kernel) {
  for (const Instruction* i : kernel.instructions) SEAM_RETURN_IF_ERROR(CheckGenerated(*i));
  return absl::OkStatus();
}

std::vector<const Instruction*> Roots(const fusion::Group& g) {
  std::vector<const Instruction*> roots{g.dominant};
  roots.insert(roots.end(), g.sub_dominants.begin(), g.sub_dominants.end());
  return roots;
}

Stage MakeStage(const fusion::Group& g) {
  Stage s;
  s.group = g.id;
  s.roots = Roots(g);
  s.members = g.members;
  s.mapping = g.mapping;
  for (const Instruction* r : s.roots) {
    if (r->opcode() == Opcode::kReduce) s.reductions.push_back(r);
  }
  const Instruction* d = g.dominant;
  OpClass c = ClassifyOp(*d);
  if (fusion::IsReduction(c)) {
    s.dims = d->operand(0)->shape().dims();
    if (!fusion::FoldsIntoPartials(g)) {
      s.kind = LoopKind::kRowReduce;
      s.row_dims = fusion::SplitFor(d->operand(0)->shape(), g.mapping.rows).value_or(0);
    } else {
      s.kind = LoopKind::kPartialReduce;
      s.folded.assign(s.dims.size(), false);
      for (int64_t dim : d->attrs().dimensions.value_or(IntList{})) s.folded[dim] = true;
      s.chunks = std::max<int64_t>(1, g.mapping.blocks_per_row);
      // In row tiles: the folded leading dimensions are the rows, one
      // chunk a tile of the row phase.
      if (g.mapping.row_tiled) {
        s.row_dims = fusion::SplitFor(d->operand(0)->shape(), g.mapping.rows).value_or(0);
      }
    }
  } else {
    s.kind = LoopKind::kElementwise;
    s.dims = d->shape().dims();
    std::optional<int> split = fusion::SplitFor(d->shape(), g.mapping.rows);
    s.row_dims = split.value_or(std::max(0, d->shape().rank() - 1));
  }
  return s;
}

// Sums of squared deviations the plan folds in an earlier reduction's pass
// (fusion::OnePassStatistic), where both stages fold the same elements.
void AttachOnePass(const fusion::Kernel& kernel, KernelIr& ir) {
  for (const fusion::OnePassStatistic& o : kernel.one_pass) {
    Stage& rider = ir.stages[o.group];
    const Stage& host = ir.stages[o.host];
    if (rider.kind != LoopKind::kPartialReduce || host.kind != LoopKind::kPartialReduce ||
        rider.roots.size() != 1 || rider.reductions.size() != 1 || rider.dims != host.dims ||
        rider.folded != host.folded) {
      continue;
    }
    // The plan folded a half-typed chain only where it computes in float.
    std::optional<fusion::CenteredSquares> centered =
        fusion::MatchCenteredSquares(*rider.reductions[0], /*half_chains=*/true);
    if (centered) rider.one_pass = Stage::OnePass{centered->value, centered->center, o.host};
  }
}

// Softmax sums the plan folds in their max's pass (fusion::OnlineSoftmax),
// where both stages are whole-row reductions of one reduction each.
void AttachOnlineSoftmax(const fusion::Kernel& kernel, KernelIr& ir) {
  for (const fusion::OnlineSoftmax& o : kernel.online_softmax) {
    Stage& sum = ir.stages[o.group];
    const Stage& max = ir.stages[o.host];
    if (sum.kind == LoopKind::kRowReduce && max.kind == LoopKind::kRowReduce &&
        sum.roots.size() == 1 && sum.reductions.size() == 1 && max.roots.size() == 1 &&
        max.reductions.size() == 1 && sum.dims == max.dims && sum.row_dims == max.row_dims) {
      sum.online_host = o.host;
    }
  }
}

// Float divisions of a CPU stage looping along its rows whose divisor is
// broadcast from the row dimensions alone (KernelIr::reciprocal_divisions).
void FindReciprocalDivisions(KernelIr& ir) {
  for (const Stage& s : ir.stages) {
    if (s.kind == LoopKind::kPartialReduce) continue;
    for (const Instruction* m : s.members) {
      const DType t = m->shape().dtype();
      if (m->opcode() != Opcode::kDivide || !IsFloatType(t) ||
          m->shape().dims() != s.dims || m->operand(1)->opcode() != Opcode::kBroadcast) {
        continue;
      }
      const IntList& into = m->operand(1)->attrs().dimensions.value_or(IntList{});
      if (std::all_of(into.begin(), into.end(), [&](int64_t d) { return d < s.row_dims; })) {
        ir.reciprocal_divisions.insert(m);
      }
    }
  }
}

// Whether a stage's chunks are tiles of whole rows a tile loop runs: a row
// or elementwise stage, or a column reduction in row tiles.
bool InRowTiles(const Stage& s) {
  return s.kind != LoopKind::kPartialReduce || s.mapping.row_tiled;
}

bool SameTiling(const Stage& a, const Stage& b) {
  // A column reduction in row tiles has a chunk a tile, not split rows.
  auto split = [](const Stage& s) { return s.mapping.row_tiled ? 1 : s.mapping.blocks_per_row; };
  return InRowTiles(a) == InRowTiles(b) && (InRowTiles(a) || a.mapping.kind == b.mapping.kind) &&
         a.Rows() == b.Rows() && a.mapping.rows_per_block == b.mapping.rows_per_block &&
         split(a) == split(b);
}

// Phases: a stage shares its predecessor's tile loop when it iterates the
// same tiles and everything it reads from that phase is regional. A column
// reduction in row tiles folds in that loop; its partials meet in the
// phase after.
void AssignPhases(const fusion::Kernel& kernel, KernelIr& ir) {
  absl::flat_hash_map<const Instruction*, int> stage_of_root;
  int phase = -1;
  int phase_start = 0;
  for (size_t k = 0; k < ir.stages.size(); ++k) {
    Stage& s = ir.stages[k];
    // Split rows share no tile loop: a task holds part of a row only.
    bool joins = phase >= 0 && InRowTiles(s) && InRowTiles(ir.stages[phase_start]) &&
                 (s.mapping.row_tiled || s.mapping.blocks_per_row == 1) &&
                 SameTiling(ir.stages[phase_start], s);
    if (joins) {
      absl::flat_hash_set<const Instruction*> members(s.members.begin(), s.members.end());
      for (const fusion::Edge& e : kernel.edges) {
        if (!members.contains(e.consumer)) continue;
        auto producer = stage_of_root.find(e.producer);
        if (producer == stage_of_root.end() || producer->second == static_cast<int>(k)) continue;
        if (producer->second >= phase_start && e.scheme != fusion::Scheme::kRegional) joins = false;
      }
    }
    if (!joins) {
      phase = ir.phases;
      phase_start = static_cast<int>(k);
      ir.phases += s.kind == LoopKind::kPartialReduce ? 2 : 1;
    } else if (s.kind == LoopKind::kPartialReduce) {
      ir.phases = std::max(ir.phases, phase + 2);  // the phase after combines
    }
    s.phase = phase;
    for (const Instruction* r : s.roots) stage_of_root[r] = static_cast<int>(k);
  }
}

// Where each value read or written lives, and the buffer list.
void AssignStorage(const fusion::Kernel& kernel, const target::DeviceSpec& device, KernelIr& ir) {
  for (const Instruction* in : kernel.inputs) {
    ir.storage[in] = Storage::kInput;
    ir.buffers.push_back({in, Storage::kInput, in->shape().dtype(),
                          in->shape().ElementCount().value_or(0), nullptr});
  }
  absl::flat_hash_set<const Instruction*> outputs(kernel.outputs.begin(), kernel.outputs.end());
  auto bytes = [](const Instruction* v) { return fusion::ValueBytes(v->shape()); };
  int64_t traffic = 0;  // what the kernel reads and writes in memory
  for (const Instruction* v : kernel.inputs) traffic += bytes(v);
  for (const Instruction* v : kernel.outputs) traffic += bytes(v);
  const int64_t cache = device.last_level_cache_bytes;
  auto past_cache = [&](const Instruction* v) {
    const DType type = v->shape().dtype();
    const bool evicted = bytes(v) > cache || (traffic > cache && bytes(v) >= cache / 8);
    return cache > 0 && type != DType::kPred && DTypeByteSize(type) >= 4 && evicted;
  };
  for (const Instruction* out : kernel.outputs) {
    ir.storage[out] = Storage::kOutput;
    int64_t elements = out->shape().ElementCount().value_or(0);
    // Streamed when the last-level cache will not hold it for its readers:
    // larger than the cache, or an eighth of it or more in a kernel moving
    // more than the cache holds (what the kernel reads and writes after it
    // evicts most of it; seam bench, 4 rounds: layer norm backward's 25 MB
    // dx, 75 MB moved, 32 MB of L3: 2.93-3.41 -> 2.80-3.06 ms). Only with
    // 4-byte or wider elements: the read-for-ownership it saves is per
    // byte, the staging pass it costs per element, and 2-byte outputs come
    // out behind (RMSNorm bf16 [8192,4096]: 5.6-6.1 ms streamed, 5.2-5.6 ms
    // not).
    ir.buffers.push_back(
        {out, Storage::kOutput, out->shape().dtype(), elements, nullptr, past_cache(out)});
  }
  for (size_t k = 0; k < ir.stages.size(); ++k) {
    const Stage& s = ir.stages[k];
    for (const Instruction* root : s.roots) {
      if (outputs.contains(root)) continue;
      bool read_elsewhere = false, same_phase_only = s.kind != LoopKind::kPartialReduce;
      for (size_t j = k + 1; j < ir.stages.size(); ++j) {
        const Stage& reader = ir.stages[j];
        bool reads = std::any_of(reader.members.begin(), reader.members.end(), [&](auto* m) {
          return std::find(m->operands().begin(), m->operands().end(), root) != m->operands().end();
        });
        if (!reads) continue;
        read_elsewhere = true;
        same_phase_only &= reader.phase == s.phase;
      }
      if (!read_elsewhere) continue;
      if (same_phase_only) {
        ir.storage[root] = Storage::kTile;
        ir.tile_stage[root] = static_cast<int>(k);
      } else {
        ir.storage[root] = Storage::kScratch;
        // Streamed as outputs are: read in a later phase, after what the
        // kernel moves meanwhile (LAMB's update, read for the new weights
        // after the other tensors' passes).
        ir.buffers.push_back({root, Storage::kScratch, root->shape().dtype(),
                              root->shape().ElementCount().value_or(0), nullptr,
                              past_cache(root)});
      }
    }
  }
  for (const Stage& s : ir.stages) {
    if (s.kind != LoopKind::kPartialReduce) continue;
    for (const Instruction* r : s.reductions) {
      int64_t kept = r->shape().ElementCount().value_or(1);
      if (s.one_pass) {
        const int64_t chunks = ir.stages[s.one_pass->host].chunks;
        ir.buffers.push_back({nullptr, Storage::kScratch, DType::kF64, 2 * kept * chunks, r});
        continue;
      }
      // Partials hold compute values: float for bf16 and f16.
      DType t = IsHalfType(r->shape().dtype()) ? DType::kF32 : r->shape().dtype();
      ir.buffers.push_back({nullptr, Storage::kScratch, t, kept * s.chunks, r});
    }
  }
}

}  // namespace

absl::Status ScheduleKernel(KernelIr& ir, const target::DeviceSpec& device, int64_t max_threads) {
  if (!device.is_gpu()) return ScheduleForCpu(ir, device);
  MapGpuThreads(ir, device, max_threads);
  return ScheduleForGpu(ir, device);
}

int64_t Stage::Rows() const {
  int64_t rows = 1;
  for (int d = 0; d < row_dims; ++d) rows *= dims[d];
  return rows;
}

int64_t Stage::RowLength() const {
  int64_t n = 1;
  for (size_t d = row_dims; d < dims.size(); ++d) n *= dims[d];
  return n;
}

int KernelIr::BufferIndex(const Instruction* value) const {
  for (size_t k = 0; k < buffers.size(); ++k) {
    if (buffers[k].value == value) return static_cast<int>(k);
  }
  return -1;
}

int KernelIr::PartialsIndex(const Instruction* reduction) const {
  for (size_t k = 0; k < buffers.size(); ++k) {
    if (buffers[k].partials_of == reduction) return static_cast<int>(k);
  }
  return -1;
}

absl::Status CheckGenerated(const Instruction& i) {
  if (!AllCodegenTypes(i)) return Unsupported(i, "element type generated code does not handle");
  switch (i.opcode()) {
    case Opcode::kMap:
    case Opcode::kStochasticConvert:
    case Opcode::kRng:
    case Opcode::kRngBitGenerator:
      return Unsupported(i, "op generated code does not compute");
    case Opcode::kReduce:
      if (i.operand_count() != 2 || !SimpleReducer(i)) {
        return Unsupported(i, "only single-output reduces with scalar reducers are generated");
      }
      return absl::OkStatus();
    default:
      break;
  }
  if (!IsElementwise(i.opcode())) return absl::OkStatus();
  std::vector<std::string> operands(i.operand_count(), "x");
  return ScalarExpr(i, operands).status();
}

absl::StatusOr<KernelIr> LowerKernel(const fusion::Kernel& kernel, const target::DeviceSpec& device,
                                     std::string name) {
  absl::Status supported = CheckSupported(kernel);
  if (!supported.ok()) return supported;
  KernelIr ir;
  ir.name = std::move(name);
  for (const fusion::Group& g : kernel.groups) ir.stages.push_back(MakeStage(g));
  if (!device.is_gpu()) {
    AttachOnePass(kernel, ir);
    AttachOnlineSoftmax(kernel, ir);
    FindReciprocalDivisions(ir);
  }
  AssignPhases(kernel, ir);
  AssignStorage(kernel, device, ir);
  SEAM_RETURN_IF_ERROR(ScheduleKernel(ir, device));
  return ir;
}

}  // namespace seam::codegen
