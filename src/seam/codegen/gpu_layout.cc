// Laying a GPU kernel out on a block's threads (the mapping decisions of
// lowering, which the GPU schedule turns into loops).
#include <algorithm>
#include <functional>
#include <numeric>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "seam/codegen/kernel_ir.h"
#include "seam/codegen/render_common.h"

namespace seam::codegen {
namespace {

// An elementwise stage touching many buffers runs as several loops over
// its rows, each storing some of its roots: a horizontal fusion of
// independent chains (an optimizer updating hundreds of tensors) would
// otherwise keep every buffer's pointer live through one loop body and
// spill thousands of bytes. Roots that share a computed value or read a
// same full-size input stay in one loop, so nothing is computed or read
// twice; loops are packed up to kBuffersPerLoop buffers.
constexpr int64_t kBuffersPerLoop = 16;

struct PackedLoop {
  std::vector<const Instruction*> roots;
  int64_t buffers = 0;
};

std::vector<PackedLoop> PackRoots(const KernelIr& ir, const Stage& s) {
  const absl::flat_hash_set<const Instruction*> computed = Computed(s);
  const int64_t elements =
      std::accumulate(s.dims.begin(), s.dims.end(), int64_t{1}, std::multiplies<int64_t>());
  const size_t n = s.roots.size();
  std::vector<size_t> parent(n);
  for (size_t k = 0; k < n; ++k) parent[k] = k;
  auto find = [&](size_t k) {
    while (parent[k] != k) k = parent[k] = parent[parent[k]];
    return k;
  };
  auto full_size_buffer = [&](const Instruction* v) {
    auto storage = ir.storage.find(v);
    return storage != ir.storage.end() && storage->second != Storage::kTile &&
           v->shape().ElementCount().value_or(0) == elements;
  };
  // Computed values that read a full-size buffer: worth sharing. (Others,
  // broadcasts of scalars, are recomputed in each loop for free.)
  absl::flat_hash_set<const Instruction*> heavy;
  for (const Instruction* m : s.members) {  // post order
    for (const Instruction* o : m->operands()) {
      if (heavy.contains(o) || (!computed.contains(o) && full_size_buffer(o))) heavy.insert(m);
    }
  }
  absl::flat_hash_map<const Instruction*, size_t> first_root;  // shared nodes
  std::vector<absl::flat_hash_set<const Instruction*>> buffers(n);
  for (size_t k = 0; k < n; ++k) {
    std::vector<const Instruction*> stack = {s.roots[k]};
    absl::flat_hash_set<const Instruction*> seen;
    while (!stack.empty()) {
      const Instruction* v = stack.back();
      stack.pop_back();
      if (!seen.insert(v).second) continue;
      const bool inside = computed.contains(v);
      auto storage = ir.storage.find(v);
      const bool buffer = storage != ir.storage.end() && storage->second != Storage::kTile;
      if (buffer && (!inside || v == s.roots[k])) buffers[k].insert(v);
      if (inside ? heavy.contains(v) : full_size_buffer(v)) {
        auto [it, fresh] = first_root.try_emplace(v, k);
        if (!fresh) parent[find(k)] = find(it->second);
      }
      if (inside) {
        for (const Instruction* o : v->operands()) stack.push_back(o);
      }
    }
  }
  absl::flat_hash_set<const Instruction*> all;
  for (const auto& b : buffers) all.insert(b.begin(), b.end());
  const auto count = [](const absl::flat_hash_set<const Instruction*>& b) {
    return static_cast<int64_t>(b.size());
  };
  if (count(all) <= kBuffersPerLoop) return {PackedLoop{s.roots, count(all)}};
  // Components in the order of their first root, packed into loops.
  std::vector<std::vector<size_t>> components;
  absl::flat_hash_map<size_t, size_t> component_of;
  for (size_t k = 0; k < n; ++k) {
    auto [it, fresh] = component_of.try_emplace(find(k), components.size());
    if (fresh) components.emplace_back();
    components[it->second].push_back(k);
  }
  std::vector<PackedLoop> loops;
  absl::flat_hash_set<const Instruction*> in_loop;
  for (const std::vector<size_t>& component : components) {
    absl::flat_hash_set<const Instruction*> mine;
    for (size_t k : component) mine.insert(buffers[k].begin(), buffers[k].end());
    if (loops.empty() || count(in_loop) + count(mine) > kBuffersPerLoop) {
      loops.emplace_back();
      in_loop.clear();
    }
    for (size_t k : component) loops.back().roots.push_back(s.roots[k]);
    in_loop.insert(mine.begin(), mine.end());
    loops.back().buffers = count(in_loop);
  }
  return loops;
}

}  // namespace

void MapGpuThreads(KernelIr& ir, const target::DeviceSpec& device, int64_t max_threads) {
  constexpr int64_t kWarp = 32;
  int64_t widest = kWarp;
  for (const Stage& s : ir.stages) widest = std::max(widest, s.mapping.threads_per_block);
  int64_t limit = device.max_threads_per_block > 0 ? device.max_threads_per_block : 1024;
  if (max_threads > 0) limit = std::min(limit, std::max(kWarp, max_threads));
  ir.block_threads = std::min(limit, NextPowerOfTwo(widest));
  for (size_t k = 0; k < ir.stages.size();) {
    // A tile phase's stages share its first stage's rows per block.
    size_t end = k + 1;
    while (end < ir.stages.size() && ir.stages[end].phase == ir.stages[k].phase) ++end;
    ThreadLayout tile;
    if (ir.stages[k].kind == LoopKind::kPartialReduce) {
      tile.lanes =
          ir.block_threads;  // a block folds one chunk (when the innermost dimension folds)
    } else {
      tile.group =
          std::min(NextPowerOfTwo(TileTasksOf(ir, ir.stages[k]).rows_per_block), ir.block_threads);
      tile.lanes = ir.block_threads / tile.group;
    }
    for (; k < end; ++k) {
      Stage& s = ir.stages[k];
      s.layout = tile;
      const int64_t vector = std::max<int64_t>(1, s.mapping.vector_width);
      s.layout.vector = s.RowLength() % vector == 0 ? vector : 1;
      if (s.kind != LoopKind::kElementwise) continue;
      for (PackedLoop& loop : PackRoots(ir, s)) {
        // One chain over more buffers than a loop should hold (a select
        // over dozens of cache slices) takes one element at a time:
        // unrolled by a vector it would keep a vector of each live and
        // spill.
        const int64_t loop_vector = loop.buffers > kBuffersPerLoop ? 1 : s.layout.vector;
        s.layout.loops.push_back({std::move(loop.roots), loop_vector});
      }
    }
  }
}

}  // namespace seam::codegen
