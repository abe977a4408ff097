// algsimp's rule table: each row names one local rewrite (an algebraic
// identity, a shape simplification, a fold of a small constant), the opcodes
// it applies to, and the function that rewrites an instruction. The algsimp
// pass applies the rows to a fixpoint. The families: elementwise arithmetic
// and bitwise ops (algsimp_arithmetic.cc); compare, select, convert, reduce,
// dot and constant folding (algsimp_reductions.cc); data movement
// (algsimp_shapes.cc); indexing ops (algsimp_indexing.cc); and the matchers
// they share (algsimp_match.cc).
//
// Every rule preserves the exact value of its instruction under the
// interpreter's semantics (IEEE 754 for floats: NaN, signed zeros and
// infinities; wrap-around for integers), never reads an elided constant's
// values, and checks everything before it builds anything.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "seam/eval/evaluator.h"
#include "seam/ir/hlo_builder.h"

namespace seam::algsimp {

// What a rule sees besides its instruction: a builder for the instruction's
// computation and a way to replace it.
class RewriteContext {
 public:
  explicit RewriteContext(Module& module) : names_(module) {}

  // Called by the driver before rules run on instructions of `computation`.
  void BeginComputation(Computation& computation);
  // Called by the driver before each rule attempt.
  void BeginRule() { first_new_index_ = computation_->instruction_count(); }

  HloBuilder& b() { return *builder_; }
  Evaluator& evaluator() { return evaluator_; }

  // Makes every user of `old` use `replacement` and schedules `old` for
  // removal. `replacement` must hold the same values; a layout difference is
  // only accepted when `replacement` was built by this rule (it then takes
  // `old`'s layout). Returns false, changing nothing, otherwise.
  bool Replace(Instruction* old, Instruction* replacement);
  // Shorthand for rules that replace `old` with a clone of it on new operands.
  bool ReplaceWithClone(Instruction* old, std::vector<Instruction*> operands);

  // Whether `i` was built during the current rule attempt.
  bool IsNew(const Instruction* i) const;

  // Driver bookkeeping.
  Instruction* last_replacement() const { return last_replacement_; }
  bool IsRemoved(const Instruction* i) const;
  // Removes instructions built by a rule that then declined to fire.
  void DiscardNewInstructions();
  // Removes the replaced instructions of the current computation.
  void FlushRemoved();

 private:
  NameUniquer names_;
  Evaluator evaluator_;
  Computation* computation_ = nullptr;
  std::unique_ptr<HloBuilder> builder_;
  int first_new_index_ = 0;
  Instruction* last_replacement_ = nullptr;
  absl::flat_hash_set<Instruction*> removed_;
};

using RuleFn = bool (*)(Instruction*, RewriteContext&);

struct RewriteRule {
  absl::string_view name;
  std::vector<Opcode> opcodes;
  absl::string_view description;
  RuleFn apply;
};

void AppendArithmeticRules(std::vector<RewriteRule>& rules);
void AppendShapeRules(std::vector<RewriteRule>& rules);
void AppendIndexingRules(std::vector<RewriteRule>& rules);
void AppendReductionRules(std::vector<RewriteRule>& rules);

// Every rule, in the order the driver tries them on an instruction.
const std::vector<RewriteRule>& AlgsimpRules();

// Runs algsimp on `module`; when `fired` is set, adds one per rule firing.
absl::StatusOr<bool> RunAlgsimp(Module& module, std::map<std::string, int64_t>* fired);

// ---- Matchers shared by the families ----

// The value of a constant the text spelled out (not elided or opaque).
const Literal* KnownLiteral(const Instruction* i);

// A value every element of an array equals: from a constant whose elements
// are all the same, or a broadcast of one. Integers and pred by bits
// (sign-extended for signed types), floats as a double (exact, sign of zero
// and NaN kept).
struct Splat {
  DType dtype;
  int64_t bits = 0;
  double value = 0;
};
std::optional<Splat> GetSplat(const Instruction* i);

// Integer and pred types, where the usual ring identities are exact.
bool IsIntegral(DType t);
bool IsIntegralOrFloat(DType t);

bool IsSplatZero(const Instruction* i);          // 0; any sign for floats
bool IsSplatNegativeZero(const Instruction* i);  // floats: -0.0 only; integers: 0
bool IsSplatPositiveZero(const Instruction* i);  // floats: +0.0 only; integers: 0
bool IsSplatOne(const Instruction* i);
bool IsSplatMinusOne(const Instruction* i);  // signed integers and floats
bool IsSplatAllOnes(const Instruction* i);   // integers: every bit set; pred: true
bool IsSplatValue(const Instruction* i, double v);
// The smallest / largest value of the type: -inf / +inf for floats.
bool IsSplatLowest(const Instruction* i);
bool IsSplatHighest(const Instruction* i);

// A constant, or a broadcast of one: what canonical forms move to the right.
bool IsConstantLike(const Instruction* i);

// Arrays of statically known size: the shapes rules rewrite.
bool IsStaticArray(const Shape& shape);
int64_t ElementCount(const Shape& shape);

// Whether every value of type `from` converts to `to` exactly.
bool ConvertsExactly(DType from, DType to);

// A splat constant of `shape` holding bits / a double value.
Instruction* SplatBits(HloBuilder& b, const Shape& shape, uint64_t bits);
Instruction* SplatDouble(HloBuilder& b, const Shape& shape, double value);
// 0 (+0.0 for floats) and 1 of the shape's type.
Instruction* SplatZero(HloBuilder& b, const Shape& shape);
Instruction* SplatOne(HloBuilder& b, const Shape& shape);

// The binary op of a reduce's `to_apply` when it is `op(p0, p1)` (either
// order) on scalars of the reduce's element type, op one of add, multiply,
// maximum, minimum, and, or; nullopt otherwise or for a variadic reduce.
std::optional<Opcode> ReducerOp(const Instruction& reduce);
// Whether `init` is the exact identity of `op` on type `t` (-0.0 for float
// add, -inf for float max...).
bool IsReducerIdentity(Opcode op, const Instruction* init);

// A broadcast's `dimensions`, which a scalar broadcast may leave out.
const IntList& BroadcastDims(const Instruction* broadcast);

// {0, 1, ..., n-1}.
bool IsIdentityPermutation(const IntList& permutation);

}  // namespace seam::algsimp
