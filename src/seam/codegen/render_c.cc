#include "seam/codegen/render_c.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "seam/codegen/c_types.h"
#include "seam/codegen/elemental.h"
#include "seam/codegen/identifiers.h"
#include "seam/codegen/render_common.h"
#include "seam/util/status_macros.h"

namespace seam::codegen {

void CodeWriter::Line(const std::string& s) {
  absl::StrAppend(&text_, std::string(indent_, ' '), s, "\n");
}

void CodeWriter::Insert(size_t at, int indent, const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) {
    absl::StrAppend(&text, std::string(indent, ' '), line, "\n");
  }
  text_.insert(at, text);
}

std::string TargetTraits::SerialFor(const Loop& l) const {
  return absl::StrCat(
      "for (int64_t ", l.var, " = ", Spell(l.begin), "; ", l.var, " < ", Spell(l.end), "; ",
      l.step.empty() ? absl::StrCat("++", l.var) : absl::StrCat(l.var, " += ", l.step), ") {");
}

absl::Status NotOnTarget(const std::string& target, const std::string& what) {
  return absl::UnimplementedError(absl::StrCat(target, " kernels have no ", what));
}

namespace {

class Renderer {
 public:
  Renderer(const KernelIr& ir, const TargetTraits& traits) : ir_(ir), traits_(traits) {}

  absl::StatusOr<std::string> Render() {
    traits_.OpenKernel(ir_, out_);
    for (const Stage& s : ir_.stages) {
      for (const Instruction* r : s.reductions) {
        VectorForm form = VectorForm::kPlain;
        SEAM_ASSIGN_OR_RETURN(std::string lambda, ReducerLambda(*r, ReducerName(ir_, r), &form));
        out_.Append(lambda);
        // A reducer inlined beside a twin must not bring a twinned
        // function's inline body (and its selects) along.
        reducer_forms_[r] = form == VectorForm::kPlain ? form : VectorForm::kBranchy;
      }
    }
    traits_.DeclareKernelState(ir_, out_);
    SEAM_RETURN_IF_ERROR(Walk(ir_.nest));
    out_.Indent(-out_.indent());
    out_.Line("}");
    return out_.Take();
  }

 private:
  absl::Status Walk(const Body& body) {
    for (const Node& node : body) {
      SEAM_RETURN_IF_ERROR(std::visit([this](const auto& n) { return Write(n); }, node.node));
    }
    return absl::OkStatus();
  }

  absl::Status Nested(const std::string& open, const Body& body) {
    out_.Line(open);
    out_.Indent(2);
    SEAM_RETURN_IF_ERROR(Walk(body));
    out_.Indent(-2);
    return absl::OkStatus();
  }

  // What stays the same along a vectorized loop (see LoopInvariants) goes
  // before it.
  absl::Status Write(const Loop& loop) {
    const size_t at = out_.size();
    const int indent = out_.indent();
    std::vector<Hoisted> outer_hoisted = std::exchange(hoisted_, {});
    SEAM_RETURN_IF_ERROR(traits_.OpenLoop(ir_, loop, out_));
    loops_.push_back({&loop, out_.size()});
    SEAM_RETURN_IF_ERROR(Walk(loop.body));
    loops_.pop_back();
    traits_.CloseLoop(loop, out_);
    std::vector<std::string> read = ReadHoisted(out_.Since(at));
    if (!read.empty()) out_.Insert(at, indent, read);
    hoisted_ = std::move(outer_hoisted);
    return absl::OkStatus();
  }

  // The hoisted declarations the loop's text or a later one reads (index
  // arithmetic that Linear took whole goes), in order.
  std::vector<std::string> ReadHoisted(absl::string_view loop_text) const {
    std::vector<std::string> kept;
    for (auto it = hoisted_.rbegin(); it != hoisted_.rend(); ++it) {
      const bool read = Reads(loop_text, it->name) ||
                        std::any_of(kept.begin(), kept.end(), [&](const std::string& later) {
                          return Reads(later, it->name);
                        });
      if (read) kept.push_back(it->line);
    }
    std::reverse(kept.begin(), kept.end());
    return kept;
  }

  // What stays the same along a vector loop, declared before it (see
  // ElementalEmitter::HoistInvariants): a value loaded at an index the loop
  // does not move, and what is computed from such values alone. Not the
  // stage's own values (the loop may write them), nor a tile an earlier
  // stage does not write.
  ElementalEmitter::InvariantHoist LoopInvariants(int stage) {
    return [this, stage, members = Computed(ir_.stages[stage])](
               const Instruction* loaded, const std::string& type,
               const std::string& expr) -> std::optional<std::string> {
      if (loaded != nullptr) {
        if (members.contains(loaded)) return std::nullopt;
        auto producer = ir_.tile_stage.find(loaded);
        if (ir_.storage.at(loaded) == Storage::kTile &&
            (producer == ir_.tile_stage.end() || producer->second >= stage)) {
          return std::nullopt;
        }
      }
      std::string name = absl::StrCat("inv", next_hoisted_++);
      hoisted_.push_back({name, absl::StrCat("const ", type, " ", name, " = ", expr, ";")});
      return name;
    };
  }

  // What varies along the vector loop the code being written is in, if it
  // is (else nothing): its variable, and the names its text so far
  // declares or assigns (a raw statement's `const int64_t p = ...`).
  std::optional<std::vector<std::string>> VectorLoopVarying() const {
    if (loops_.empty() || loops_.back().loop->role != LoopRole::kSimd) return std::nullopt;
    std::vector<std::string> varying{loops_.back().loop->var};
    ForEachIdentifier(out_.Since(loops_.back().text_at),
                      [&](absl::string_view word, absl::string_view after) {
                        if (Assigns(after)) varying.emplace_back(word);
                      });
    return varying;
  }

  absl::Status Write(const Let& let) {
    std::vector<std::string> names;
    for (const auto& [name, value] : let.names)
      names.push_back(absl::StrCat(name, " = ", traits_.Spell(value)));
    out_.Line(absl::StrCat("const ", let.type, " ", absl::StrJoin(names, ", "), ";"));
    return absl::OkStatus();
  }

  absl::Status Write(const Statement& s) {
    out_.Line(s.text);
    return absl::OkStatus();
  }

  absl::Status Write(const If& s) {
    SEAM_RETURN_IF_ERROR(Nested(absl::StrCat("if (", s.condition, ") {"), s.body));
    out_.Line("}");
    return absl::OkStatus();
  }

  absl::Status Write(const BreakIf& s) {
    out_.Line(absl::StrCat("if (", s.condition, ") break;"));
    return absl::OkStatus();
  }

  absl::Status Write(const Branches& s) {
    for (size_t k = 0; k < s.arms.size(); ++k) {
      const auto& [condition, body] = s.arms[k];
      std::string open =
          absl::StrCat(k == 0 ? "" : "} else ",
                       condition.empty() ? "" : absl::StrCat("if (", condition, ") "), "{");
      SEAM_RETURN_IF_ERROR(Nested(open, body));
    }
    out_.Line("}");
    return absl::OkStatus();
  }

  absl::Status Write(const Scope& s) {
    SEAM_RETURN_IF_ERROR(Nested("{", s.body));
    out_.Line("}");
    return absl::OkStatus();
  }

  absl::Status Write(const Barrier& b) { return traits_.WriteBarrier(b.kind, out_); }
  absl::Status Write(const CombineLanes& c) { return traits_.WriteCombineLanes(ir_, c, out_); }
  absl::Status Write(const StreamOut& s) { return traits_.WriteStreamOut(s, out_); }
  absl::Status Write(const StreamFence&) { return traits_.WriteStreamFence(out_); }
  absl::Status Write(const Prefetch& p) { return traits_.WritePrefetch(p, out_); }

  // A computation's lines; in a vectorized loop whose code is otherwise
  // plain, calling the vector twins where the target has them and the
  // loop wants them.
  absl::Status Write(const Compute& c) {
    std::vector<std::string> lines;
    const size_t hoisted = hoisted_.size();
    SEAM_ASSIGN_OR_RETURN(VectorForm form, Lines(c, /*twins=*/false, lines));
    const Loop* inner = loops_.empty() ? nullptr : loops_.back().loop;
    const bool twins = inner != nullptr && inner->role == LoopRole::kSimd && !inner->twinless;
    if (twins && form == VectorForm::kTwinned && traits_.VectorTwins()) {
      lines.clear();
      hoisted_.resize(hoisted);
      SEAM_RETURN_IF_ERROR(Lines(c, /*twins=*/true, lines).status());
    }
    for (const std::string& line : lines) out_.Append(absl::StrCat(line, "\n"));
    return absl::OkStatus();
  }

  absl::StatusOr<VectorForm> Lines(const Compute& c, bool twins, std::vector<std::string>& lines) {
    const Stage& s = ir_.stages[c.stage];
    ElementalEmitter e(ir_, RenderedNames(ir_),
                       c.loads_only ? absl::flat_hash_set<const Instruction*>{} : Computed(s),
                       &lines, out_.indent());
    if (twins) e.UseVectorTwins();
    if (std::optional<std::vector<std::string>> varying = VectorLoopVarying()) {
      e.HoistInvariants(*varying, LoopInvariants(c.stage));
    }
    Index index;
    if (!c.index.empty()) index.assign(s.dims.size(), "0");
    for (const IndexPart& part : c.index) {
      if (part.direct) {
        index[part.dims[0]] = part.var;
        continue;
      }
      std::vector<int64_t> dims;
      for (int d : part.dims) dims.push_back(s.dims[d]);
      Index at = e.Delinearize(dims, part.var);
      for (size_t k = 0; k < part.dims.size(); ++k) index[part.dims[k]] = at[k];
    }
    const std::string linear =
        c.linear.empty() && !index.empty() ? e.Linear(s.dims, index) : c.linear;
    for (const ComputeStep& step : c.steps) {
      SEAM_RETURN_IF_ERROR(
          std::visit([&](const auto& st) { return Step(e, s, index, linear, st); }, step));
    }
    e.DropUnusedIndices();
    return e.form();
  }

  absl::Status Step(ElementalEmitter& e, const Stage& s, const Index&, const std::string&,
                    const InitAccumulator& init) {
    const Instruction* r = s.reductions[init.reduction];
    SEAM_ASSIGN_OR_RETURN(std::string value, e.Value(r->operand(1), {}));
    const std::string j = absl::StrCat(init.reduction), acc = "acc" + j;
    e.Emit(absl::StrCat(ComputeType(r->shape().dtype()), " ", acc, " = ", value, ";"));
    if (init.how == Accumulation::kOrderKeys) {
      e.Emit(absl::StrCat("auto key", j, " = seam_order_key(", acc, ");"));
      e.Emit(absl::StrCat("int nan", j, " = ", acc, " != ", acc, ";"));
    }
    return absl::OkStatus();
  }

  absl::Status Step(ElementalEmitter& e, const Stage& s, const Index& index, const std::string&,
                    const Accumulate& a) {
    const Instruction* r = s.reductions[a.reduction];
    SEAM_ASSIGN_OR_RETURN(std::string x, e.Value(r->operand(0), index));
    const std::string j = absl::StrCat(a.reduction), reducer = ReducerName(ir_, r);
    e.Note(a.how == Accumulation::kSum        ? VectorForm::kPlain
           : a.how == Accumulation::kFromInit ? reducer_forms_.at(r)
                                              : VectorForm::kBranchy);
    switch (a.how) {
      case Accumulation::kGuarded:
        e.Emit(absl::StrCat(a.into, " = has", j, " ? ", reducer, "(", a.into, ", ", x, ") : ", x,
                            ";"));
        e.Emit(absl::StrCat("has", j, " = true;"));
        break;
      case Accumulation::kFromInit:
        e.Emit(absl::StrCat(a.into, " = ", reducer, "(", a.into, ", ", x, ");"));
        break;
      case Accumulation::kOrderKeys: {
        const std::string key = "key" + j, in = "in" + j;
        const bool max = AsBinaryReducer(**r->attrs().to_apply) == Opcode::kMaximum;
        e.Emit(absl::StrCat("const ", ComputeType(r->shape().dtype()), " ", in, " = ", x, ";"));
        e.Emit(absl::StrCat("const auto new_", key, " = seam_order_key(", in, ");"));
        e.Emit(absl::StrCat(key, " = new_", key, max ? " > " : " < ", key, " ? new_", key, " : ",
                            key, ";"));
        e.Emit(absl::StrCat("nan", j, " |= ", in, " != ", in, ";"));
        break;
      }
      case Accumulation::kSum:
        e.Emit(absl::StrCat(a.into, " += ", x, ";"));
        break;
      case Accumulation::kFirstOfChunk:
        e.Emit(absl::StrCat(a.into, " = ", a.first, " ? ", x, " : ", reducer, "(", a.into, ", ", x,
                            ");"));
        break;
    }
    return absl::OkStatus();
  }

  absl::Status Step(ElementalEmitter& e, const Stage& s, const Index& index,
                    const std::string& linear, const StoreRoots& store) {
    return EmitElementwiseRoots(e, s, store.roots, index, linear, Storer(store.staged));
  }

  absl::Status Step(ElementalEmitter& e, const Stage& s, const Index&, const std::string&,
                    const FinishRow& finish) {
    const Instruction* r = s.reductions[finish.reduction];
    const std::string acc = absl::StrCat("acc", finish.reduction);
    if (finish.with_init) {
      SEAM_ASSIGN_OR_RETURN(std::string init, e.Value(r->operand(1), {}));
      e.Emit(absl::StrCat(acc, " = has", finish.reduction, " ? ", ReducerName(ir_, r), "(", init,
                          ", ", acc, ") : ", init, ";"));
    }
    Store(e, r, "r", HalfResult(ir_, r, acc), {});
    return absl::OkStatus();
  }

  absl::Status Step(ElementalEmitter& e, const Stage& s, const Index&, const std::string&,
                    const CombinePartials& c) {
    return EmitPartialCombine(ir_, s, c.units, c.per_chunk, c.kept, c.part, e, Storer({}));
  }

  absl::Status Step(ElementalEmitter& e, const Stage&, const Index& index, const std::string&,
                    const AccumulateDeviations& a) {
    SEAM_ASSIGN_OR_RETURN(std::string x, e.Value(a.value, index));
    if (a.center.empty()) {
      e.Emit(absl::StrCat(a.sum, " += ", x, ";"));
      return absl::OkStatus();
    }
    const std::string d = absl::StrCat("d_", a.sum);
    e.Emit(absl::StrCat("const ", ComputeType(a.value->shape().dtype()), " ", d, " = ", x, " - ",
                        a.center, ";"));
    e.Emit(absl::StrCat(a.sum, " += ", d, ";"));
    if (!a.squares.empty()) e.Emit(absl::StrCat(a.squares, " += ", d, " * ", d, ";"));
    return absl::OkStatus();
  }

  absl::Status Step(ElementalEmitter& e, const Stage& s, const Index&, const std::string&,
                    const CombineDeviations& c) {
    return EmitDeviationsCombine(ir_, s, c.units, c.per_chunk, c.kept, c.run, e, Storer({}));
  }

  // Stores root `v` (computed as `value`) at linear index `linear` where it
  // lives: a staging row, a tile buffer or a kernel buffer.
  void Store(ElementalEmitter& e, const Instruction* v, const std::string& linear,
             const std::string& value, const std::vector<const Instruction*>& staged) const {
    auto storage = ir_.storage.find(v);
    if (storage == ir_.storage.end() || storage->second == Storage::kInput) return;
    if (storage->second != Storage::kTile) e.Note(ConversionForm(v->shape().dtype()));
    if (std::find(staged.begin(), staged.end(), v) != staged.end()) {
      e.Emit(absl::StrCat("stage_", ir_.BufferIndex(v),
                          "[c - s0] = ", StoreExpr(v->shape().dtype(), e.Storable(value)), ";"));
    } else if (storage->second == Storage::kTile) {
      e.Emit(absl::StrCat(TileName(ir_, v), "[", linear, " - ", RenderedNames(ir_).tile_base(v),
                          "] = ", value, ";"));
    } else {
      e.Emit(absl::StrCat("b", ir_.BufferIndex(v), "[", linear,
                          "] = ", StoreExpr(v->shape().dtype(), e.Storable(value)), ";"));
    }
  }

  StoreRoot Storer(std::vector<const Instruction*> staged) const {
    return [this, staged = std::move(staged)](ElementalEmitter& e, const Instruction* v,
                                              const std::string& at, const std::string& value) {
      Store(e, v, at, value, staged);
    };
  }

  const KernelIr& ir_;
  const TargetTraits& traits_;
  // How a call of each reducer meets the vectorizer: plain or branchy.
  absl::flat_hash_map<const Instruction*, VectorForm> reducer_forms_;
  CodeWriter out_;
  // The loops enclosing the node being written, each with where its text
  // begins.
  struct OpenLoop {
    const Loop* loop;
    size_t text_at;
  };
  std::vector<OpenLoop> loops_;
  // Declarations for before the innermost loop.
  struct Hoisted {
    std::string name, line;
  };
  std::vector<Hoisted> hoisted_;
  int next_hoisted_ = 0;
};

}  // namespace

absl::StatusOr<std::string> RenderKernel(const KernelIr& ir, const TargetTraits& traits) {
  return Renderer(ir, traits).Render();
}

}  // namespace seam::codegen
