// Helpers shared by the expander and canonical-form passes (batchnorm-
// expander, dot-decomposer, tree-reduction-rewriter...): replacing an
// instruction by a freshly built expansion without losing its layout or
// control edges, removing the replaced ones in one sweep, scalar reducer
// computations, constants given by their bits, and copying part of a
// computation under new parameter numbers.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "seam/ir/hlo_builder.h"
#include "seam/ir/module.h"

namespace seam::expand {

// One pass run over a module: names, builders and deferred removal.
class Rewriter {
 public:
  explicit Rewriter(Module& module);
  Module& module() { return module_; }
  // Built on first use: most runs of an expander find nothing to expand.
  NameUniquer& names();
  HloBuilder Builder(Computation& computation) { return HloBuilder(computation, names()); }

  // The module's instructions with opcode `op` (every instruction when
  // `op` is nullopt) as they are now, computation by computation: passes
  // iterate over this snapshot while they add instructions and computations.
  std::vector<Instruction*> Instructions(std::optional<Opcode> op) const;

  // Makes every use of `old` use `fresh`, an instruction built by this pass
  // holding the same values; `fresh` takes `old`'s shape (so its layout) and
  // control edges. `old` loses its operands now and is removed by Flush().
  void ReplaceWithNew(Instruction* old, Instruction* fresh);
  // The same for an instruction that existed before: when its layout
  // differs from `old`'s, a copy laid out as `old` stands in between.
  void ReplaceWithExisting(Instruction* old, Instruction* existing);
  // Schedules `dead`, which nothing uses any more, for removal.
  void Remove(Instruction* dead);
  // Removes every replaced instruction (one sweep per computation).
  void Flush();

  // `ROOT r = op(p0, p1)` on scalars of `type`, built once per run.
  Computation* ScalarReducer(Opcode op, DType type);
  // A computation name not yet used in the module, from `base`.
  std::string UniqueComputationName(absl::string_view base);

  // A new computation named `name` whose parameter k is a copy of `source`'s
  // parameter params[k], and whose root is a copy of `root` (an instruction
  // of `source`) with what it depends on. Null, adding nothing, when `root`
  // reads a parameter not in `params` or depends on control edges.
  Computation* CloneWithParameters(const Computation& source, const Instruction& root,
                                   const std::vector<int64_t>& params, std::string name);

 private:
  Module& module_;
  std::unique_ptr<NameUniquer> names_;
  absl::flat_hash_set<std::string> computation_names_;
  std::map<std::pair<Opcode, DType>, Computation*> reducers_;
  absl::flat_hash_map<Computation*, absl::flat_hash_set<Instruction*>> removed_;
};

// An array shape with static dimensions (no `<=N`, no `?`) and no tuple or
// token: what the expanders rewrite.
bool IsStaticArray(const Shape& shape);

// A scalar constant whose elements hold `bits` (two's complement, truncated
// to the type's width).
Instruction* BitsConstant(HloBuilder& b, DType type, uint64_t bits);
// `value` broadcast to `dims` (a scalar when dims is empty); complex types
// get value + 0i.
Instruction* SplatValue(HloBuilder& b, DType type, const std::vector<int64_t>& dims, double value);
// `bits` broadcast to `dims`.
Instruction* SplatBits(HloBuilder& b, DType type, const std::vector<int64_t>& dims, uint64_t bits);

// The value e with op(e, x) == x for every x of `type` (exactly, IEEE
// specials included: -0 for float add), for add, multiply, maximum, minimum,
// and, or; nullopt where there is none Seam uses (pred add/multiply,
// complex max/min, opaque types).
std::optional<Literal> IdentityOf(Opcode op, DType type);

// Whether `list` is 0, 1, ..., n-1.
bool IsIota(const std::vector<int64_t>& list);

}  // namespace seam::expand
