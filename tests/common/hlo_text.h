// Modules written as HLO text in a test, and their entry's instructions by
// name.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "seam/text/parser.h"

namespace seam::testing {

// The module `text` holds; null (and a failed expectation) if it does not
// parse and verify.
inline std::unique_ptr<Module> ParseModule(const std::string& text) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status() << "\n" << text;
  return module.ok() ? std::move(*module) : nullptr;
}

// The entry computation's instruction named `name`, or null.
inline const Instruction* FindInstruction(const Module& module, const std::string& name) {
  for (const auto& i : module.entry()->instructions()) {
    if (i->name() == name) return i.get();
  }
  return nullptr;
}

// A layer norm backward's shape of work over f32[`shape`]: row means of x
// and row sums of dy over the last dimension (`rows` the shape without
// it), column sums of dy * (x - mean) and of dy over the leading ones
// (`leading`, as a reduce's dimensions; `columns` the last dimension).
inline std::string LayerNormBackwardText(const std::string& shape, const std::string& rows,
                                         const std::string& leading, int64_t columns) {
  const std::string m = absl::StrCat("f32[", shape, "]"), row = absl::StrCat("f32[", rows, "]"),
                    col = absl::StrCat("f32[", columns, "]");
  const std::string last = std::to_string(std::count(shape.begin(), shape.end(), ','));
  return absl::StrCat(R"(HloModule column_tiles
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = )",
                      m, R"( parameter(0)
  dy = )",
                      m, R"( parameter(1)
  zero = f32[] constant(0)
  n = f32[] constant()",
                      columns, R"()
  sum = )",
                      row, " reduce(x, zero), dimensions={", last, R"(}, to_apply=add
  nb = )",
                      row, R"( broadcast(n), dimensions={}
  mean = )",
                      row, R"( divide(sum, nb)
  mb = )",
                      m, " broadcast(mean), dimensions={", leading, R"(}
  xc = )",
                      m, R"( subtract(x, mb)
  prod = )",
                      m, R"( multiply(dy, xc)
  dgamma = )",
                      col, " reduce(prod, zero), dimensions={", leading, R"(}, to_apply=add
  dbeta = )",
                      col, " reduce(dy, zero), dimensions={", leading, R"(}, to_apply=add
  dsum = )",
                      row, " reduce(dy, zero), dimensions={", last, R"(}, to_apply=add
  dsb = )",
                      m, " broadcast(dsum), dimensions={", leading, R"(}
  dx = )",
                      m, R"( subtract(prod, dsb)
  ROOT out = ()",
                      m, ", ", col, ", ", col, R"() tuple(dx, dgamma, dbeta)
}
)");
}

// A layer norm over the last dimension of f32[rows, length], without scale
// and offset, as JAX writes it: mean, centred squares, their mean, the
// normalized row.
inline std::string LayerNormText(int64_t rows, int64_t length) {
  const std::string x = absl::StrCat("f32[", rows, ",", length, "]"),
                    row = absl::StrCat("f32[", rows, "]");
  return absl::StrCat(
      "HloModule layer_norm\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
      "  ROOT s = f32[] add(a, b)\n}\nENTRY e {\n  x = ", x, " parameter(0)\n",
      "  zero = f32[] constant(0)\n  n = f32[] constant(", length, ")\n",
      "  eps = f32[] constant(1e-5)\n",
      "  sum = ", row, " reduce(x, zero), dimensions={1}, to_apply=add\n",
      "  nb = ", row, " broadcast(n), dimensions={}\n  mean = ", row, " divide(sum, nb)\n",
      "  mb = ", x, " broadcast(mean), dimensions={0}\n  d = ", x, " subtract(x, mb)\n",
      "  d2 = ", x, " multiply(d, d)\n",
      "  ss = ", row, " reduce(d2, zero), dimensions={1}, to_apply=add\n",
      "  var = ", row, " divide(ss, nb)\n  eb = ", row, " broadcast(eps), dimensions={}\n",
      "  ve = ", row, " add(var, eb)\n  rs = ", row, " rsqrt(ve)\n",
      "  rb = ", x, " broadcast(rs), dimensions={0}\n  ROOT y = ", x, " multiply(d, rb)\n}\n");
}

// A bf16 activation bf16[n,c,h,w]'s statistics over N, H, W as JAX writes
// them (jnp.var): sums in f32 of converted bf16 values, the mean rounded to
// bf16 before it centres x, the squares bf16.
inline std::string Bf16BatchStatisticsText(int64_t n, int64_t c, int64_t h, int64_t w) {
  const std::string dims = absl::StrCat(n, ",", c, ",", h, ",", w);
  const std::string x = absl::StrCat("bf16[", dims, "]"), wide = absl::StrCat("f32[", dims, "]"),
                    kept = absl::StrCat("f32[", c, "]");
  return absl::StrCat(
      "HloModule bf16_statistics\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
      "  ROOT s = f32[] add(a, b)\n}\nENTRY e {\n  x = ", x, " parameter(0)\n",
      "  wide = ", wide, " convert(x)\n  zero = f32[] constant(0)\n",
      "  sum = ", kept, " reduce(wide, zero), dimensions={0,2,3}, to_apply=add\n",
      "  n = f32[] constant(", n * h * w, ")\n  ns = ", kept, " broadcast(n), dimensions={}\n",
      "  mean = ", kept, " divide(sum, ns)\n  narrow = bf16[", c, "] convert(mean)\n",
      "  spread = ", x, " broadcast(narrow), dimensions={1}\n",
      "  centered = ", x, " subtract(x, spread)\n  squared = ", x,
      " multiply(centered, centered)\n  widened = ", wide, " convert(squared)\n",
      "  squares = ", kept, " reduce(widened, zero), dimensions={0,2,3}, to_apply=add\n",
      "  ROOT out = (", kept, ", ", kept, ") tuple(mean, squares)\n}\n");
}

// tanh-GELU over `type`[rows, length], computed in the element type.
inline std::string TanhGeluText(const std::string& type, int64_t rows, int64_t length) {
  return absl::StrReplaceAll(
      R"(HloModule gelu
ENTRY e {
  x = $X parameter(0)
  half = $T[] constant(0.5)
  one = $T[] constant(1)
  c = $T[] constant(0.797884583)
  halfs = $X broadcast(half), dimensions={}
  ones = $X broadcast(one), dimensions={}
  cs = $X broadcast(c), dimensions={}
  u = $X multiply(x, cs)
  t = $X tanh(u)
  s = $X add(t, ones)
  h = $X multiply(x, halfs)
  ROOT y = $X multiply(h, s)
}
)",
      {{"$X", absl::StrCat(type, "[", rows, ",", length, "]")}, {"$T", type}});
}

// A softmax over the last dimension of `type`[rows, length], written as
// JAX writes it: max, exp of the difference, sum, division; or, with
// `log`, a log-softmax: the difference less the sum's log.
inline std::string SoftmaxText(const std::string& type, int64_t rows, int64_t length,
                               bool log = false) {
  const std::string x = absl::StrCat(type, "[", rows, ",", length, "]"),
                    row = absl::StrCat(type, "[", rows, "]");
  const std::string out =
      log ? absl::StrCat("  l = ", row, " log(s)\n  lb = ", x,
                         " broadcast(l), dimensions={0}\n  ROOT y = ", x, " subtract(d, lb)\n")
          : absl::StrCat("  sb = ", x, " broadcast(s), dimensions={0}\n  ROOT y = ", x,
                         " divide(e, sb)\n");
  return absl::StrCat("HloModule softmax\nadd {\n  a = ", type, "[] parameter(0)\n  b = ", type,
                      "[] parameter(1)\n  ROOT s = ", type, "[] add(a, b)\n}\nmax {\n  a = ", type,
                      "[] parameter(0)\n  b = ", type, "[] parameter(1)\n  ROOT m = ", type,
                      "[] maximum(a, b)\n}\nENTRY e {\n  x = ", x, " parameter(0)\n  ninf = ", type,
                      "[] constant(-inf)\n  zero = ", type, "[] constant(0)\n  m = ", row,
                      " reduce(x, ninf), dimensions={1}, to_apply=max\n  mb = ", x,
                      " broadcast(m), dimensions={0}\n  d = ", x, " subtract(x, mb)\n  e = ", x,
                      " exponential(d)\n  s = ", row,
                      " reduce(e, zero), dimensions={1}, to_apply=add\n", out, "}\n");
}

// x / (bf16(colsum(|x|)) + eps) over bf16[128,3000]: column sums in f32
// rounded to bf16, then broadcast along the rows.
inline constexpr char kRoundedColumnSums[] = R"(HloModule columns
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = bf16[128,3000] parameter(0)
  ax = bf16[128,3000] abs(x)
  axf = f32[128,3000] convert(ax)
  zero = f32[] constant(0)
  s = f32[3000] reduce(axf, zero), dimensions={0}, to_apply=add
  sb = bf16[3000] convert(s)
  eps = bf16[] constant(1e-06)
  epsb = bf16[3000] broadcast(eps), dimensions={}
  d = bf16[3000] add(sb, epsb)
  db = bf16[128,3000] broadcast(d), dimensions={1}
  ROOT y = bf16[128,3000] divide(x, db)
}
)";

}  // namespace seam::testing
