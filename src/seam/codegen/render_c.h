// The one renderer of scheduled kernel IR: C-style text for every target.
// It walks a scheduled kernel's loop nest and spells what all targets write
// alike (declarations, conditions, scopes, the elemental computations and
// their stores); a target's traits spell the rest: its kernel signature,
// each kind of loop, barriers, the memory a kernel declares, a reduction
// across a row's threads, min, and whether vectorized loops may call the
// vector twins of exp and tanh.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "seam/codegen/kernel_ir.h"

namespace seam::codegen {

// Rendered lines at an indent.
class CodeWriter {
 public:
  void Line(const std::string& s);
  void Indent(int by) { indent_ += by; }
  int indent() const { return indent_; }
  void Append(const std::string& text) { text_ += text; }
  size_t size() const { return text_.size(); }
  // The text from offset `at` on.
  absl::string_view Since(size_t at) const { return absl::string_view(text_).substr(at); }
  // Inserts `lines` at offset `at` of the text, at `indent`.
  void Insert(size_t at, int indent, const std::vector<std::string>& lines);
  std::string Take() { return std::move(text_); }

 private:
  std::string text_;
  int indent_ = 0;
};

// How one target spells what differs between targets.
class TargetTraits {
 public:
  virtual ~TargetTraits() = default;

  virtual std::string Min(const std::string& a, const std::string& b) const = 0;
  // `e` as this target writes it.
  std::string Spell(const Expr& e) const {
    return e.min.empty() ? e.text : Min(e.min[0], e.min[1]);
  }
  // A serial loop's `for` line, which every target writes alike.
  std::string SerialFor(const Loop& loop) const;
  // The function's first line and what is declared before the reducers;
  // leaves the writer at the body's indent.
  virtual void OpenKernel(const KernelIr& ir, CodeWriter& out) const = 0;
  // After the reducers: what the whole kernel declares (a GPU block's
  // shared arrays, the grid it synchronizes).
  virtual void DeclareKernelState(const KernelIr& ir, CodeWriter& out) const = 0;
  // A loop's opening lines, the writer indented for its body; and its end.
  virtual absl::Status OpenLoop(const KernelIr& ir, const Loop& loop, CodeWriter& out) const = 0;
  virtual void CloseLoop(const Loop& loop, CodeWriter& out) const = 0;
  virtual absl::Status WriteBarrier(BarrierKind kind, CodeWriter& out) const = 0;
  virtual absl::Status WriteCombineLanes(const KernelIr& ir, const CombineLanes& combine,
                                         CodeWriter& out) const = 0;
  virtual absl::Status WriteStreamOut(const StreamOut& stream, CodeWriter& out) const = 0;
  virtual absl::Status WriteStreamFence(CodeWriter& out) const = 0;
  virtual absl::Status WritePrefetch(const Prefetch& prefetch, CodeWriter& out) const = 0;
  // Whether a vectorized loop whose code is otherwise plain calls the
  // vector twins of exp and tanh (see VectorForm).
  virtual bool VectorTwins() const = 0;
};

// `ir` (scheduled) as one function of C-style text.
absl::StatusOr<std::string> RenderKernel(const KernelIr& ir, const TargetTraits& traits);

// The Unimplemented error of a target asked to spell what it has not.
absl::Status NotOnTarget(const std::string& target, const std::string& what);

}  // namespace seam::codegen
