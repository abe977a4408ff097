#include "seam/fusion/fusion_plan.h"

#include "absl/strings/str_cat.h"
#include "seam/fusion/op_class.h"

namespace seam::fusion {

absl::string_view StrategyName(Strategy s) {
  switch (s) {
    case Strategy::kNone: return "none";
    case Strategy::kXla: return "xla";
    case Strategy::kStitch: return "stitch";
  }
  return "?";
}

absl::string_view SchemeName(Scheme s) {
  switch (s) {
    case Scheme::kLocal: return "local";
    case Scheme::kRegional: return "regional";
    case Scheme::kGlobal: return "global";
  }
  return "?";
}

bool FoldsIntoPartials(const Group& g) {
  const OpClass c = ClassifyOp(*g.dominant);
  if (!IsReduction(c)) return false;
  return c != OpClass::kRowReduction || g.mapping.kind != MappingKind::kRow ||
         g.mapping.blocks_per_row > 1;
}

const Instruction* Kernel::Dominant() const {
  if (!groups.empty()) return groups.back().dominant;
  return instructions.empty() ? nullptr : instructions.back();
}

std::string Kernel::Name() const {
  const Instruction* d = Dominant();
  return absl::StrCat("kernel.", id, d != nullptr ? absl::StrCat(".", d->name()) : "");
}

PlanTotals FusionPlan::Totals() const {
  PlanTotals t;
  for (const ComputationPlan& c : computations) {
    for (const Kernel& k : c.kernels) {
      if (k.alias_only) {
        ++t.aliases;
        continue;
      }
      ++t.kernels;
      t.cost += k.cost;
    }
    for (const StandaloneOp& s : c.standalone) {
      ++t.standalone_kernels;
      t.cost += s.cost;
    }
    for (const StandaloneOp& l : c.library_calls) {
      ++t.library_calls;
      t.library_cost += l.cost;
      if (!l.epilogue.empty()) {
        ++t.epilogues;
        t.epilogue_bytes_saved += l.epilogue.bytes_saved;
      }
    }
  }
  return t;
}

}  // namespace seam::fusion
