// algsimp: algebraic simplification, after XLA's AlgebraicSimplifier. A
// table of local rewrites (x+(-0) -> x, reshape(reshape(x)) -> reshape(x),
// slice(concat) -> slice of one operand, reduce over size-1 dimensions ->
// reshape, ...) applied in post order, sweep after sweep, until none fires.
// Front ends and other passes leave many such no-ops and chains behind; they
// hide the real structure from fusion and cost memory traffic when run.
//
// The rules are exact: no float reassociation, no rewrites that change NaN,
// signed-zero or infinity results, none that read elided constants. What a
// rule rewrites and why it is exact is said next to it (algsimp_*.cc).
//
// SEAM_ALGSIMP_TRACE=1 prints every firing (rule, instruction, computation)
// to stderr and, at the end of each run, how often each rule fired;
// SEAM_ALGSIMP_TRACE=counts prints only the counts, SEAM_ALGSIMP_TRACE=rules
// the rule table.
#include <cstdlib>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "seam/passes/algsimp_rules.h"
#include "seam/passes/pass.h"

namespace seam::algsimp {

void RewriteContext::BeginComputation(Computation& computation) {
  computation_ = &computation;
  builder_ = std::make_unique<HloBuilder>(computation, names_);
  removed_.clear();
}

bool RewriteContext::IsNew(const Instruction* i) const {
  const auto& all = computation_->instructions();
  for (size_t k = first_new_index_; k < all.size(); ++k) {
    if (all[k].get() == i) return true;
  }
  return false;
}

bool RewriteContext::IsRemoved(const Instruction* i) const {
  return removed_.contains(const_cast<Instruction*>(i));
}

bool RewriteContext::Replace(Instruction* old, Instruction* replacement) {
  if (old == replacement || !old->shape().Compatible(replacement->shape())) return false;
  if (!SameLayouts(old->shape(), replacement->shape())) {
    if (!IsNew(replacement)) return false;
    replacement->mutable_shape() = old->shape();
  }
  old->ReplaceAllUsesWith(replacement);
  old->DetachOperands();
  removed_.insert(old);
  last_replacement_ = replacement;
  return true;
}

bool RewriteContext::ReplaceWithClone(Instruction* old, std::vector<Instruction*> operands) {
  Instruction* clone = b().Clone(*old, std::move(operands));
  return Replace(old, clone);
}

void RewriteContext::DiscardNewInstructions() {
  const auto& all = computation_->instructions();
  if (static_cast<int>(all.size()) == first_new_index_) return;
  absl::flat_hash_set<Instruction*> fresh;
  for (size_t k = first_new_index_; k < all.size(); ++k) fresh.insert(all[k].get());
  computation_->RemoveInstructions(fresh);
}

void RewriteContext::FlushRemoved() {
  if (removed_.empty()) return;
  computation_->RemoveInstructions(removed_);
  removed_.clear();
}

const std::vector<RewriteRule>& AlgsimpRules() {
  static const auto* rules = [] {
    auto* all = new std::vector<RewriteRule>();
    AppendArithmeticRules(*all);
    AppendReductionRules(*all);
    AppendShapeRules(*all);
    AppendIndexingRules(*all);
    return all;
  }();
  return *rules;
}

namespace {

// Sweeps over the module before giving up on a fixpoint; real modules settle
// in two or three.
constexpr int kMaxSweeps = 16;
// Rewrites of one instruction's fresh replacement within a sweep.
constexpr int kMaxChain = 8;

enum class TraceMode { kOff, kCounts, kAll, kRules };

TraceMode TraceFromEnvironment() {
  const char* value = std::getenv("SEAM_ALGSIMP_TRACE");
  if (value == nullptr || *value == '\0' || std::string(value) == "0") return TraceMode::kOff;
  if (std::string(value) == "rules") return TraceMode::kRules;
  return std::string(value) == "counts" ? TraceMode::kCounts : TraceMode::kAll;
}

void PrintRules() {
  for (const RewriteRule& rule : AlgsimpRules()) {
    std::string opcodes;
    for (Opcode op : rule.opcodes) absl::StrAppend(&opcodes, opcodes.empty() ? "" : ",", OpcodeName(op));
    if (opcodes.size() > 40) opcodes = opcodes.substr(0, 37) + "...";
    std::cerr << absl::StrFormat("%-32s %-40s %s\n", rule.name, opcodes, rule.description);
  }
}

// Rules see only instructions they can reason about: live, without control
// edges (a replacement would have to inherit them), static shapes.
bool Eligible(const Instruction& i) {
  if (i.users().empty() && !i.IsRoot()) return false;
  if (!i.control_predecessors().empty() || !i.control_successors().empty()) return false;
  if (i.shape().IsArray() && i.shape().HasDynamicDims()) return false;
  for (const Instruction* operand : i.operands()) {
    if (operand->shape().IsArray() && operand->shape().HasDynamicDims()) return false;
  }
  return true;
}

class Driver {
 public:
  Driver(Module& module, std::map<std::string, int64_t>* fired)
      : module_(module), context_(module), fired_(fired), trace_(TraceFromEnvironment()) {
    by_opcode_.resize(kOpcodeCount);
    for (const RewriteRule& rule : AlgsimpRules()) {
      for (Opcode op : rule.opcodes) by_opcode_[static_cast<int>(op)].push_back(&rule);
    }
  }

  bool Run() {
    if (trace_ == TraceMode::kRules) PrintRules();
    bool changed = false;
    int sweeps = 0;
    bool converged = false;
    while (sweeps < kMaxSweeps && !converged) {
      ++sweeps;
      bool swept_change = false;
      for (const auto& computation : module_.computations()) {
        swept_change |= Sweep(*computation);
      }
      converged = !swept_change;
      changed |= swept_change;
    }
    if (trace_ == TraceMode::kCounts || trace_ == TraceMode::kAll) {
      std::cerr << "algsimp: " << firings_ << " rewrites in " << sweeps << " sweeps"
                << (converged ? "" : " (not converged)") << ":";
      for (const auto& [name, count] : counts_) std::cerr << " " << name << "=" << count;
      std::cerr << "\n";
    }
    return changed;
  }

 private:
  bool Sweep(Computation& computation) {
    context_.BeginComputation(computation);
    bool changed = false;
    for (Instruction* i : computation.MakePostOrder()) {
      if (context_.IsRemoved(i)) continue;
      // A fresh replacement may simplify further at once: its operands are
      // already simplified, and its users come later in this order.
      Instruction* current = i;
      for (int k = 0; k < kMaxChain && current != nullptr; ++k) {
        if (!Eligible(*current) || !TryRules(current)) break;
        changed = true;
        Instruction* next = context_.last_replacement();
        current = context_.IsNew(next) ? next : nullptr;
      }
    }
    context_.FlushRemoved();
    return changed;
  }

  bool TryRules(Instruction* i) {
    for (const RewriteRule* rule : by_opcode_[static_cast<int>(i->opcode())]) {
      context_.BeginRule();
      if (rule->apply(i, context_)) {
        Record(*rule, *i);
        return true;
      }
      context_.DiscardNewInstructions();
    }
    return false;
  }

  void Record(const RewriteRule& rule, const Instruction& i) {
    ++firings_;
    std::string name(rule.name);
    if (fired_ != nullptr) ++(*fired_)[name];
    if (trace_ == TraceMode::kOff) return;
    ++counts_[name];
    if (trace_ == TraceMode::kAll) {
      std::cerr << "algsimp: " << name << " on " << i.name() << " in "
                << i.parent()->name() << "\n";
    }
  }

  Module& module_;
  RewriteContext context_;
  std::map<std::string, int64_t>* fired_;
  TraceMode trace_;
  std::vector<std::vector<const RewriteRule*>> by_opcode_;
  int64_t firings_ = 0;
  std::map<std::string, int64_t> counts_;
};

class AlgsimpPass : public Pass {
 public:
  absl::StatusOr<bool> Run(Module& module) override { return RunAlgsimp(module, nullptr); }
};

}  // namespace

absl::StatusOr<bool> RunAlgsimp(Module& module, std::map<std::string, int64_t>* fired) {
  return Driver(module, fired).Run();
}

}  // namespace seam::algsimp

namespace seam {

std::unique_ptr<Pass> MakeAlgsimpPass() { return std::make_unique<algsimp::AlgsimpPass>(); }

}  // namespace seam
