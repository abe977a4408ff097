#include "seam/fusion/cost_model.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "seam/fusion/op_class.h"

namespace seam::fusion {
namespace {

// Libraries (BLAS, cuBLAS) run dense arithmetic this many times faster than
// the simple-op rate: vector units or tensor cores kept busy.
constexpr double kLibraryFlopsFactor = 8;

// The interpreter, measured on a 2-core Xeon: 54M elements of placement
// custom-calls copied in 250 ms (2.3 ns per element read or written), a
// select-and-scatter calling its select and scatter 16K times in 4.3 ms.
constexpr double kInterpretedNsPerElement = 2.3;
constexpr double kInterpretedNsPerApplication = 260;

// Elements of an array value, a tuple's summed.
double Elements(const Shape& shape) {
  if (!shape.IsTuple()) return static_cast<double>(shape.ArrayElementCount());
  double total = 0;
  for (const Shape& element : shape.tuple_shapes()) total += Elements(element);
  return total;
}

double Utilization(const ThreadMapping& m, const target::DeviceSpec& device,
                   const CompiledLaunch* launch) {
  double blocks = static_cast<double>(m.blocks * m.tasks_per_block);
  double units = static_cast<double>(device.units);
  double threads_per_block = static_cast<double>(m.threads_per_block);
  if (launch != nullptr) {
    // The compiled kernel's blocks each do a task at a time.
    blocks = std::min(blocks, static_cast<double>(launch->resident_blocks_per_unit) * units);
    threads_per_block = static_cast<double>(launch->threads_per_block);
  }
  double u = std::min(1.0, blocks / units);
  if (device.is_gpu()) {
    // Memory-bound code needs about half the SM's threads in flight.
    double threads = blocks * threads_per_block;
    u *= std::min(1.0, threads / (units * static_cast<double>(device.max_threads_per_unit) / 2));
  }
  return std::max(u, 1.0 / units);
}

double MemberFlops(const Instruction& m, const target::DeviceSpec& device) {
  OpClass c = ClassifyOp(m);
  if (c == OpClass::kLightElementwise) return static_cast<double>(m.shape().ArrayElementCount());
  if (c == OpClass::kExpensiveElementwise) {
    // Division and square roots have vector instructions; exp, log, tanh
    // and friends are polynomial evaluations.
    return static_cast<double>(m.shape().ArrayElementCount()) *
           (IsDivision(m.opcode()) ? device.division_cost : device.transcendental_cost);
  }
  if (IsReduction(c)) return static_cast<double>(m.operand(0)->shape().ArrayElementCount());
  return 0;
}

// Whether a group's tile of `input` stays on chip for later stages of the
// same block: AStitch's hierarchical reuse.
bool TileStaysOnChip(const Instruction* input, const ThreadMapping& m,
                     const target::DeviceSpec& device) {
  int64_t tiles = std::max<int64_t>(1, m.blocks * m.tasks_per_block);
  return ValueBytes(input->shape()) / tiles <= device.onchip_bytes_per_block / 2;
}

// How a group's blocks take its elements: in rows, or (a column
// reduction not in row tiles) in columns.
MappingKind TiledAs(const ThreadMapping& m) { return m.row_tiled ? MappingKind::kRow : m.kind; }

// The bytes `reader` reads of its operand k: a slice reads only what it
// keeps.
double ReadBytes(const Instruction& reader, int k) {
  const Instruction* operand = reader.operand(k);
  if (k == 0 && (reader.opcode() == Opcode::kSlice || reader.opcode() == Opcode::kDynamicSlice)) {
    return static_cast<double>(ValueBytes(reader.shape()));
  }
  return static_cast<double>(ValueBytes(operand->shape()));
}

}  // namespace

int64_t ValueBytes(const Shape& shape) {
  if (shape.IsTuple()) {
    int64_t total = 0;
    for (const Shape& element : shape.tuple_shapes()) total += ValueBytes(element);
    return total;
  }
  if (!shape.IsArray()) return 0;
  return shape.ArrayElementCount() * std::max(1, DTypeByteSize(shape.dtype()));
}

Cost& Cost::operator+=(const Cost& other) {
  dram_read_bytes += other.dram_read_bytes;
  dram_write_bytes += other.dram_write_bytes;
  scratch_bytes += other.scratch_bytes;
  flops += other.flops;
  launches += other.launches;
  grid_barriers += other.grid_barriers;
  onchip_bytes = std::max(onchip_bytes, other.onchip_bytes);
  time_us += other.time_us;
  return *this;
}

double EstimateTimeUs(const Cost& cost, const target::DeviceSpec& device) {
  double memory_ns = cost.dram_bytes() / device.dram_gbps + cost.scratch_bytes / device.cache_gbps;
  double compute_ns = cost.flops / device.flops_per_ns;
  double busy_us = std::max(memory_ns, compute_ns) / 1000 / std::max(cost.parallelism, 1e-6);
  return busy_us + static_cast<double>(cost.launches) * device.launch_us +
         static_cast<double>(cost.grid_barriers) * device.grid_barrier_us;
}

Cost EstimateKernelCost(const Kernel& kernel, const target::DeviceSpec& device,
                        const CompiledLaunch* launch) {
  Cost cost;
  cost.grid_barriers = kernel.grid_barriers;
  cost.onchip_bytes = kernel.onchip_bytes;
  if (kernel.alias_only) return cost;
  cost.launches = 1;
  for (const Instruction* o : kernel.outputs) cost.dram_write_bytes += ValueBytes(o->shape());

  // Inputs: read once by the first group that needs them; a later group
  // with another mapping, past a grid barrier, or whose tile did not stay
  // on chip, reads again.
  absl::flat_hash_set<const Instruction*> inputs(kernel.inputs.begin(), kernel.inputs.end());
  absl::flat_hash_map<const Instruction*, const Group*> first_reader;
  // A group folding in another's pass (one-pass statistics) reads nothing
  // that pass read.
  absl::flat_hash_set<const Group*> riders;
  for (const OnePassStatistic& s : kernel.one_pass) riders.insert(&kernel.groups[s.group]);
  for (const OnlineSoftmax& s : kernel.online_softmax) riders.insert(&kernel.groups[s.group]);
  double work = 0, weighted_utilization = 0;
  for (const Group& g : kernel.groups) {
    // What this group reads of each input: all of it, or what its slices keep.
    absl::flat_hash_map<const Instruction*, double> read;
    double group_work = 0;
    for (const Instruction* m : g.members) {
      cost.flops += MemberFlops(*m, device);
      group_work += static_cast<double>(m->shape().ArrayElementCount());
      for (int k = 0; k < m->operand_count(); ++k) {
        const Instruction* o = m->operand(k);
        if (!inputs.contains(o)) continue;
        double& bytes = read[o];
        bytes = std::min(static_cast<double>(ValueBytes(o->shape())), bytes + ReadBytes(*m, k));
      }
    }
    for (const auto& [input, bytes] : read) {
      auto [it, first] = first_reader.try_emplace(input, &g);
      const ThreadMapping& earlier = it->second->mapping;
      if (first) {
        cost.dram_read_bytes += bytes;
      } else if (riders.contains(&g)) {
        continue;
      } else if (TiledAs(earlier) != TiledAs(g.mapping) || earlier.rows != g.mapping.rows ||
                 it->second->barriers_before != g.barriers_before ||
                 !TileStaysOnChip(input, g.mapping, device)) {
        (bytes <= static_cast<double>(device.last_level_cache_bytes) ? cost.scratch_bytes
                                                                     : cost.dram_read_bytes) += bytes;
      }
    }
    work += group_work;
    weighted_utilization += group_work * Utilization(g.mapping, device, launch);
    if (g.mapping.reduces &&
        g.mapping.blocks_per_row > 1) {  // partial results, written and read back
      // One a block for each of the results: rows, or a column
      // reduction's kept columns.
      const int64_t results =
          g.mapping.kind == MappingKind::kColumn ? g.mapping.row_length : g.mapping.rows;
      cost.scratch_bytes += 2.0 * 4 * static_cast<double>(results * g.mapping.blocks_per_row);
    }
  }
  cost.parallelism = work > 0 ? weighted_utilization / work : 1;

  // Global-scheme values go through global memory once each way.
  absl::flat_hash_set<const Instruction*> global_values;
  for (const Edge& e : kernel.edges) {
    if (e.scheme == Scheme::kGlobal) global_values.insert(e.producer);
  }
  for (const Instruction* v : global_values) cost.scratch_bytes += 2.0 * ValueBytes(v->shape());
  if (cost.scratch_bytes > static_cast<double>(device.last_level_cache_bytes)) {
    cost.dram_read_bytes += cost.scratch_bytes / 2;
    cost.dram_write_bytes += cost.scratch_bytes / 2;
    cost.scratch_bytes = 0;
  }
  cost.time_us = EstimateTimeUs(cost, device);
  return cost;
}

Cost EstimateStandaloneCost(const Instruction& op, const target::DeviceSpec& device) {
  Cost cost;
  cost.launches = 1;
  for (int k = 0; k < op.operand_count(); ++k) cost.dram_read_bytes += ReadBytes(op, k);
  cost.dram_write_bytes = static_cast<double>(ValueBytes(op.shape()));
  double library_flops = LibraryFlops(op);
  cost.flops = library_flops > 0 ? library_flops / kLibraryFlopsFactor
                                 : static_cast<double>(op.shape().ArrayElementCount());
  cost.time_us = EstimateTimeUs(cost, device);
  return cost;
}

double EstimateInterpretedTimeUs(const Instruction& op) {
  double elements = Elements(op.shape());
  double widest_operand = 0;
  for (const Instruction* o : op.operands()) {
    const double n = Elements(o->shape());
    elements += n;
    widest_operand = std::max(widest_operand, n);
  }
  // About one application per element of the widest operand (a reduce's
  // input, a window's elements, a scatter's operand).
  const double applications = op.CalledComputations().empty() ? 0 : widest_operand;
  return (elements * kInterpretedNsPerElement + applications * kInterpretedNsPerApplication) / 1000;
}

double LibraryFlops(const Instruction& op) {
  double out = static_cast<double>(op.shape().ArrayElementCount());
  if (op.opcode() == Opcode::kDot) {
    double contracted = 1;
    const Shape& lhs = op.operand(0)->shape();
    for (int64_t d : op.attrs().lhs_contracting_dims.value_or(IntList{})) {
      contracted *= static_cast<double>(lhs.dim(static_cast<int>(d)));
    }
    return 2 * out * contracted;
  }
  if (op.opcode() == Opcode::kConvolution) {
    // Each output element sums the kernel's window over its input features.
    double kernel_elements = static_cast<double>(op.operand(1)->shape().ArrayElementCount());
    double output_features = 1;
    if (op.attrs().dim_labels.has_value()) {
      const Shape& k = op.operand(1)->shape();
      output_features = static_cast<double>(k.dim(static_cast<int>(op.attrs().dim_labels->kernel_output_feature)));
    }
    return 2 * out * kernel_elements / std::max(1.0, output_features);
  }
  return 0;
}

}  // namespace seam::fusion
