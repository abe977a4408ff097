#include "seam/codegen/render_common.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "seam/codegen/c_types.h"
#include "seam/util/status_macros.h"

namespace seam::codegen {

std::string HalfResult(const KernelIr& ir, const Instruction* r, const std::string& acc) {
  return ir.excess_precision ? acc : RoundExpr(r->shape().dtype(), acc);
}

std::string ReducerName(const KernelIr& ir, const Instruction* r) {
  int n = 0;
  for (const Stage& s : ir.stages) {
    for (const Instruction* x : s.reductions) {
      if (x == r) return absl::StrCat("reducer", n);
      ++n;
    }
  }
  return "reducer";
}

std::string TileName(const KernelIr& ir, const Instruction* v) {
  int stage = ir.tile_stage.at(v);
  const std::vector<const Instruction*>& roots = ir.stages[stage].roots;
  return absl::StrCat("tile_", stage, "_",
                      std::find(roots.begin(), roots.end(), v) - roots.begin());
}

int64_t TileElementsPerRow(const KernelIr& ir, const Instruction* v) {
  const Stage& s = ir.stages[ir.tile_stage.at(v)];
  return v->shape().ElementCount().value_or(0) / std::max<int64_t>(1, s.Rows());
}

MemoryNames RenderedNames(const KernelIr& ir) {
  MemoryNames names;
  names.buffer = [](int k) { return absl::StrCat("b", k); };
  names.tile = [&ir](const Instruction* v) { return TileName(ir, v); };
  names.tile_base = [&ir](const Instruction* v) {
    return absl::StrCat("r0 * ", TileElementsPerRow(ir, v));
  };
  return names;
}

absl::flat_hash_set<const Instruction*> Computed(const Stage& s) {
  return absl::flat_hash_set<const Instruction*>(s.members.begin(), s.members.end());
}

int64_t PhaseBlocksPerRow(const KernelIr& ir, int phase) {
  for (const Stage& s : ir.stages) {
    // A column reduction in row tiles counts tiles there, not splits.
    if (s.phase == phase && !s.mapping.row_tiled)
      return std::max<int64_t>(1, s.mapping.blocks_per_row);
  }
  return 1;
}

TileTasks TileTasksOf(const KernelIr& ir, const Stage& first) {
  TileTasks t;
  t.rows = first.Rows();
  t.rows_per_block = std::max<int64_t>(1, first.mapping.rows_per_block);
  t.blocks_per_row = PhaseBlocksPerRow(ir, first.phase);
  t.tasks = CeilDiv(t.rows, t.rows_per_block) * t.blocks_per_row;
  return t;
}

FoldSplit SplitFolded(const Stage& s) {
  FoldSplit split;
  for (size_t d = 0; d < s.dims.size(); ++d) {
    (s.folded[d] ? split.folded_dims : split.kept_dims).push_back(s.dims[d]);
  }
  for (int64_t d : split.folded_dims) split.folded *= d;
  for (int64_t d : split.kept_dims) split.kept *= d;
  return split;
}

std::vector<IndexPart> RowParts(const Stage& s) {
  IndexPart row{{}, "r"}, column{{}, "c"};
  for (int d = 0; d < static_cast<int>(s.dims.size()); ++d) {
    (d < s.row_dims ? row : column).dims.push_back(d);
  }
  return {row, column};
}

std::vector<IndexPart> FoldParts(const Stage& s, const std::string& q, const std::string& p) {
  IndexPart folded{{}, q}, kept{{}, p};
  for (int d = 0; d < static_cast<int>(s.dims.size()); ++d) {
    (s.folded[d] ? folded : kept).dims.push_back(d);
  }
  return {kept, folded};
}

namespace {

// `index` (of an array of `dims`) as the index of the same element of an
// array of `other` dimensions that are `dims` with size-1 ones added or
// dropped; none if they are not. A root reshaped so (PyTorch's views)
// then reads its operand at the stage's own index, where the values are
// computed already, instead of at a delinearized one that computes them
// again.
std::optional<Index> IndexAlike(const std::vector<int64_t>& dims, const Index& index,
                                const std::vector<int64_t>& other) {
  Index at;
  size_t d = 0;
  for (int64_t extent : other) {
    if (extent == 1) {
      at.push_back("0");
      continue;
    }
    while (d < dims.size() && dims[d] == 1) ++d;
    if (d == dims.size() || dims[d] != extent) return std::nullopt;
    at.push_back(index[d++]);
  }
  while (d < dims.size() && dims[d] == 1) ++d;
  if (d != dims.size()) return std::nullopt;
  return at;
}

}  // namespace

absl::Status EmitElementwiseRoots(ElementalEmitter& e, const Stage& s,
                                  const std::vector<const Instruction*>& roots, const Index& index,
                                  const std::string& linear, const StoreRoot& store) {
  for (const Instruction* root : roots) {
    if (root->opcode() == Opcode::kReduce) continue;
    const std::vector<int64_t>& dims = root->shape().dims();
    std::optional<Index> alike = IndexAlike(s.dims, index, dims);
    Index at = alike ? *std::move(alike) : e.Delinearize(dims, linear);
    SEAM_ASSIGN_OR_RETURN(std::string value, e.Value(root, at));
    store(e, root, e.Linear(root->shape().dims(), at), value);
  }
  return absl::OkStatus();
}

std::vector<bool> BarrierBeforePhase(const KernelIr& ir) {
  std::vector<bool> barrier(std::max(ir.phases, 1), false);
  absl::flat_hash_set<const Instruction*> unsynced;  // written since the last barrier
  for (int q = 0; q < ir.phases; ++q) {
    bool reads_unsynced = false, combines = false;
    for (const Stage& s : ir.stages) {
      if (s.kind == LoopKind::kPartialReduce && s.phase + 1 == q) combines = true;
      if (s.phase != q) continue;
      absl::flat_hash_set<const Instruction*> members = Computed(s);
      for (const Instruction* m : s.members) {
        for (const Instruction* o : m->operands()) {
          reads_unsynced |= !members.contains(o) && unsynced.contains(o);
        }
      }
    }
    if (q > 0 && (reads_unsynced || combines)) {
      barrier[q] = true;
      unsynced.clear();
    }
    for (const Stage& s : ir.stages) {
      // A partial reduction's results are written by its combining phase.
      int writes = s.kind == LoopKind::kPartialReduce ? s.phase + 1 : s.phase;
      if (writes == q) unsynced.insert(s.roots.begin(), s.roots.end());
    }
  }
  return barrier;
}

absl::Status EmitPartialCombine(const KernelIr& ir, const Stage& s, int64_t units,
                                int64_t per_chunk, int64_t kept, CombinePartials::Part part,
                                ElementalEmitter& e, const StoreRoot& store) {
  using Part = CombinePartials::Part;
  for (size_t j = 0; j < s.reductions.size(); ++j) {
    const Instruction* r = s.reductions[j];
    const std::string partial = absl::StrCat("b", ir.PartialsIndex(r), "[chunk * ", kept, " + p]");
    if (part == Part::kWhole) {
      SEAM_ASSIGN_OR_RETURN(std::string init, e.Value(r->operand(1), {}));
      std::string acc = absl::StrCat("acc", j);
      e.Emit(absl::StrCat(ComputeType(r->shape().dtype()), " ", acc, " = ", init, ";"));
      e.Emit(absl::StrCat("for (int64_t chunk = 0; chunk * ", per_chunk, " < ", units,
                          "; ++chunk) ", acc, " = ", ReducerName(ir, r), "(", acc, ", ", partial,
                          ");"));
      store(e, r, "p", HalfResult(ir, r, acc));
      continue;
    }
    const std::string acc = absl::StrCat("combined", j, "[p - p0]");
    if (part == Part::kInit) {
      SEAM_ASSIGN_OR_RETURN(std::string init, e.Value(r->operand(1), {}));
      e.Emit(absl::StrCat(acc, " = ", init, ";"));
    } else if (part == Part::kChunk) {
      e.Emit(absl::StrCat(acc, " = ", ReducerName(ir, r), "(", acc, ", ", partial, ");"));
    } else {
      store(e, r, "p", HalfResult(ir, r, acc));
    }
  }
  return absl::OkStatus();
}

absl::Status EmitDeviationsCombine(const KernelIr& ir, const Stage& s, int64_t units,
                                   int64_t per_chunk, int64_t kept, int64_t run,
                                   ElementalEmitter& e, const StoreRoot& store) {
  const Instruction* r = s.reductions[0];
  // The centre is constant along the folded dimensions: read it at the
  // first folded position of kept element p.
  Index at(s.dims.size(), "0");
  std::vector<int> kept_dims;
  std::vector<int64_t> kept_extents;
  for (int d = 0; d < static_cast<int>(s.dims.size()); ++d) {
    if (!s.folded[d]) kept_dims.push_back(d), kept_extents.push_back(s.dims[d]);
  }
  const Index p = e.Delinearize(kept_extents, "p");
  for (size_t k = 0; k < kept_dims.size(); ++k) at[kept_dims[k]] = p[k];
  SEAM_ASSIGN_OR_RETURN(std::string center, e.Value(s.one_pass->center, at));
  SEAM_ASSIGN_OR_RETURN(std::string init, e.Value(r->operand(1), {}));
  const std::string partials = absl::StrCat("b", ir.PartialsIndex(r));
  const int64_t chunks = CeilDiv(units, per_chunk);
  e.Emit("double squares = 0;");
  e.Emit(absl::StrCat("for (int64_t chunk = 0; chunk < ", chunks, "; ++chunk) {"));
  e.Emit(absl::StrCat("  const double n = double(std::min<int64_t>(", units, ", (chunk + 1) * ",
                      per_chunk, ") - chunk * ", per_chunk, ") * ", run, ";"));
  e.Emit(absl::StrCat("  const double d = ", partials, "[chunk * ", kept, " + p] - double(", center,
                      ");"));
  e.Emit(absl::StrCat("  squares += ", partials, "[", chunks * kept, " + chunk * ", kept,
                      " + p] + n * d * d;"));
  e.Emit("}");
  const std::string type = ComputeType(r->shape().dtype());
  e.Emit(absl::StrCat(type, " acc0 = ", ReducerName(ir, r), "(", init, ", ", type, "(squares));"));
  store(e, r, "p", HalfResult(ir, r, "acc0"));
  return absl::OkStatus();
}

std::string KernelDeduplicator::Add(const std::string& name, const std::string& source,
                                    bool* fresh) {
  auto [it, inserted] =
      symbol_of_text_.try_emplace(absl::StrReplaceAll(source, {{name, "@kernel@"}}), name);
  *fresh = inserted;
  return it->second;
}

}  // namespace seam::codegen
