#include "seam/gym/random_graph.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace seam::gym {
namespace {

// Sizes that stress thread mappings: ones, primes, powers of two and their
// neighbours, a few long ones.
constexpr int64_t kSizes[] = {1, 2, 3, 5, 7, 8, 13, 16, 31, 32, 33, 64, 100, 127, 128, 257, 750};
constexpr int64_t kMaxElements = 1 << 16;

struct Value {
  std::string name;
  std::vector<int64_t> dims;
  std::string type;  // "f32" or "bf16"
};

int64_t Elements(const std::vector<int64_t>& dims) {
  return std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>());
}

std::string ShapeText(const std::string& type, const std::vector<int64_t>& dims) {
  return absl::StrCat(type, "[", absl::StrJoin(dims, ","), "]");
}

class GraphWriter {
 public:
  GraphWriter(uint64_t seed, std::string prefix) : rng_(seed), prefix_(std::move(prefix)) {}

  RandomGraph Write(int ops) {
    type_ = Coin() ? "f32" : "bf16";
    int params = 1 + Uniform(0, 1);
    std::vector<int64_t> dims = RandomDims();
    for (int p = 0; p < params; ++p) {
      // Parameters share a shape, or the second is a lower-rank slice of it.
      std::vector<int64_t> d = dims;
      if (p > 0 && d.size() > 1 && Coin()) d.erase(d.begin() + Uniform(0, static_cast<int>(d.size()) - 1));
      Add(ShapeText(type_, d), absl::StrCat("parameter(@", p, ")"), d, type_);
    }
    graph_.parameters = params;
    for (int k = 0; k < ops; ++k) Step();
    std::vector<int> outs{static_cast<int>(values_.size()) - 1};
    for (int extra = Uniform(0, 2); extra > 0; --extra) {
      int pick = Uniform(params, static_cast<int>(values_.size()) - 1);
      if (values_[pick].type != "f32" && values_[pick].type != "bf16") continue;
      if (std::find(outs.begin(), outs.end(), pick) == outs.end()) outs.push_back(pick);
    }
    for (int o : outs) {
      graph_.outputs.push_back(values_[o].name);
      graph_.output_types.push_back(ShapeText(values_[o].type, values_[o].dims));
    }
    return graph_;
  }

 private:
  int Uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool Coin() { return Uniform(0, 1) == 1; }
  // A float value (compare results and indices are not operands here).
  const Value& Pick() {
    while (true) {
      const Value& v = values_[Uniform(0, static_cast<int>(values_.size()) - 1)];
      if (v.type == "f32" || v.type == "bf16") return v;
    }
  }

  std::vector<int64_t> RandomDims() {
    while (true) {
      std::vector<int64_t> dims(Uniform(1, 3));
      for (int64_t& d : dims) d = kSizes[Uniform(0, std::size(kSizes) - 1)];
      if (Elements(dims) <= kMaxElements) return dims;
    }
  }

  const Value& Add(const std::string& shape, const std::string& rhs, std::vector<int64_t> dims,
                   std::string type) {
    std::string name = absl::StrCat(prefix_, values_.size());
    graph_.lines.push_back(absl::StrCat("  ", name, " = ", shape, " ", rhs));
    values_.push_back({name, std::move(dims), std::move(type)});
    return values_.back();
  }
  const Value& Add(const std::string& op, const std::vector<int64_t>& dims, const std::string& type,
                   const std::string& args) {
    return Add(ShapeText(type, dims), absl::StrCat(op, "(", args, ")"), dims, type);
  }

  // A value of `v`'s type and dimensions to combine with it: one that has
  // them, a broadcast of a lower-rank one, or `v` itself.
  Value Partner(const Value& v) {
    for (int tries = 0; tries < 8; ++tries) {
      const Value& w = Pick();
      if (w.type != v.type || w.name == v.name) continue;
      if (w.dims == v.dims) return w;
      // w's dimensions as a subsequence of v's: broadcast along the others.
      std::vector<int64_t> positions;
      size_t j = 0;
      for (size_t i = 0; i < v.dims.size() && j < w.dims.size(); ++i) {
        if (v.dims[i] == w.dims[j]) {
          positions.push_back(static_cast<int64_t>(i));
          ++j;
        }
      }
      if (j == w.dims.size()) {
        std::string source = w.name;
        Add("broadcast", v.dims, v.type, source);
        return Rename(values_.back(),
                      absl::StrCat(", dimensions={", absl::StrJoin(positions, ","), "}"));
      }
    }
    return v;
  }

  // Appends attribute text to the last instruction line.
  Value Rename(const Value& v, const std::string& attributes) {
    graph_.lines.back() += attributes;
    return v;
  }

  // One random step: an op on a value picked from those made so far.
  void Step() {
    const Value v = Pick();
    switch (Uniform(0, 13)) {
      case 0:
        return AddUnary(v);
      case 1:
        return AddExpOrLogOfBounded(v);
      case 2:
      case 3:
        return AddBinary(v);
      case 4:
        return AddBroadcast(v);
      case 5:
      case 6:
        return AddReduce(v);
      case 7:
        return AddReshape(v);
      case 8:
        return AddTranspose(v);
      case 9:
        return AddSlice(v);
      case 10:
        return AddConcatenateOrPad(v);
      case 11:
        return AddSelect(v);
      case 12:
        return AddConvert(v);
      case 13:
        return AddReverseIotaOrDynamicSlice(v);
    }
  }

  // Unary, cheap or expensive.
  void AddUnary(const Value& v) {
    static const char* ops[] = {"negate", "abs", "tanh", "logistic", "floor", "sine", "cosine"};
    Add(ops[Uniform(0, 6)], v.dims, v.type, v.name);
  }

  // Exp and log on bounded inputs.
  void AddExpOrLogOfBounded(const Value& v) {
    const Value& t = Add("tanh", v.dims, v.type, v.name);
    std::string tn = t.name;
    if (Coin()) {
      Add("exponential", v.dims, v.type, tn);
    } else {
      const Value& a = Add("abs", v.dims, v.type, tn);
      Add("log-plus-one", v.dims, v.type, a.name);
    }
  }

  // A binary op with a partner value; divisions by 1.5 + |w|, so no blow-ups.
  void AddBinary(const Value& v) {
    static const char* ops[] = {"add", "subtract", "multiply", "maximum", "minimum", "divide"};
    Value w = Partner(v);
    int op = Uniform(0, 5);
    if (op == 5) {
      const Value& a = Add("abs", w.dims, w.type, w.name);
      std::string an = a.name;
      const Value& c = Add(absl::StrCat(v.type, "[]"), "constant(1.5)", {}, v.type);
      std::string cn = c.name;
      const Value& b = Add("broadcast", v.dims, v.type, cn);
      std::string bn = b.name;
      Rename(values_.back(), ", dimensions={}");
      const Value& d = Add("add", v.dims, v.type, absl::StrCat(an, ", ", bn));
      std::string dn = d.name;
      Add("divide", v.dims, v.type, absl::StrCat(v.name, ", ", dn));
    } else {
      Add(ops[op], v.dims, v.type, absl::StrCat(v.name, ", ", w.name));
    }
  }

  // Broadcast: a new dimension somewhere.
  void AddBroadcast(const Value& v) {
    if (v.dims.size() >= 3) return;
    int64_t size = kSizes[Uniform(0, 8)];
    if (Elements(v.dims) * size > kMaxElements) return;
    int at = Uniform(0, static_cast<int>(v.dims.size()));
    std::vector<int64_t> dims = v.dims, positions;
    dims.insert(dims.begin() + at, size);
    for (int i = 0; i < static_cast<int>(dims.size()); ++i) {
      if (i != at) positions.push_back(i);
    }
    Add("broadcast", dims, v.type, v.name);
    Rename(values_.back(), absl::StrCat(", dimensions={", absl::StrJoin(positions, ","), "}"));
  }

  // Reduce over a random non-empty set of dimensions.
  void AddReduce(const Value& v) {
    if (v.dims.empty()) return;
    std::vector<int64_t> reduced, kept;
    for (int d = 0; d < static_cast<int>(v.dims.size()); ++d) {
      (Coin() ? reduced : kept).push_back(d);
    }
    if (reduced.empty()) {
      reduced.push_back(Uniform(0, static_cast<int>(v.dims.size()) - 1));
      kept.erase(std::remove(kept.begin(), kept.end(), reduced[0]), kept.end());
    }
    std::vector<int64_t> dims;
    for (int64_t d : kept) dims.push_back(v.dims[d]);
    bool max = Coin();
    const Value& init =
        Add(absl::StrCat(v.type, "[]"), max ? "constant(-inf)" : "constant(0)", {}, v.type);
    std::string in = init.name;
    Add("reduce", dims, v.type, absl::StrCat(v.name, ", ", in));
    Rename(values_.back(), absl::StrCat(", dimensions={", absl::StrJoin(reduced, ","),
                                        "}, to_apply=", max ? "max_" : "add_", v.type));
  }

  // Reshape: merge two neighbours, or split one.
  void AddReshape(const Value& v) {
    std::vector<int64_t> dims = v.dims;
    if (dims.size() >= 2 && Coin()) {
      int at = Uniform(0, static_cast<int>(dims.size()) - 2);
      dims[at] *= dims[at + 1];
      dims.erase(dims.begin() + at + 1);
    } else if (!dims.empty() && dims.size() < 3) {
      int at = Uniform(0, static_cast<int>(dims.size()) - 1);
      for (int64_t f : {2, 3, 5, 7, 8}) {
        if (dims[at] % f == 0 && dims[at] > f) {
          dims.insert(dims.begin() + at + 1, dims[at] / f);
          dims[at] = f;
          break;
        }
      }
    }
    Add("reshape", dims, v.type, v.name);
  }

  // Transpose.
  void AddTranspose(const Value& v) {
    if (v.dims.size() < 2) return;
    std::vector<int64_t> permutation(v.dims.size());
    std::iota(permutation.begin(), permutation.end(), 0);
    std::shuffle(permutation.begin(), permutation.end(), rng_);
    std::vector<int64_t> dims;
    for (int64_t p : permutation) dims.push_back(v.dims[p]);
    Add("transpose", dims, v.type, v.name);
    Rename(values_.back(), absl::StrCat(", dimensions={", absl::StrJoin(permutation, ","), "}"));
  }

  // Slice.
  void AddSlice(const Value& v) {
    std::vector<int64_t> dims;
    std::vector<std::string> ranges;
    for (int64_t d : v.dims) {
      int64_t start = Uniform(0, static_cast<int>(d - 1));
      int64_t limit = Uniform(static_cast<int>(start + 1), static_cast<int>(d));
      int64_t stride = Coin() ? 1 : 2;
      dims.push_back((limit - start + stride - 1) / stride);
      ranges.push_back(absl::StrCat("[", start, ":", limit, ":", stride, "]"));
    }
    Add("slice", dims, v.type, v.name);
    Rename(values_.back(), absl::StrCat(", slice={", absl::StrJoin(ranges, ", "), "}"));
  }

  // Concatenate with itself, or pad.
  void AddConcatenateOrPad(const Value& v) {
    if (v.dims.empty() || Elements(v.dims) * 2 > kMaxElements) return;
    int at = Uniform(0, static_cast<int>(v.dims.size()) - 1);
    std::vector<int64_t> dims = v.dims;
    if (Coin()) {
      dims[at] *= 2;
      Add("concatenate", dims, v.type, absl::StrCat(v.name, ", ", v.name));
      Rename(values_.back(), absl::StrCat(", dimensions={", at, "}"));
    } else {
      const Value& zero = Add(absl::StrCat(v.type, "[]"), "constant(0.5)", {}, v.type);
      std::string zn = zero.name;
      std::vector<std::string> config;
      for (size_t d = 0; d < dims.size(); ++d) {
        int64_t lo = Uniform(0, 2), hi = Uniform(0, 2), interior = Uniform(0, 1);
        config.push_back(interior ? absl::StrCat(lo, "_", hi, "_", interior)
                                  : absl::StrCat(lo, "_", hi));
        dims[d] = lo + hi + dims[d] + interior * std::max<int64_t>(0, dims[d] - 1);
      }
      if (Elements(dims) > kMaxElements) return;
      Add("pad", dims, v.type, absl::StrCat(v.name, ", ", zn));
      Rename(values_.back(), absl::StrCat(", padding=", absl::StrJoin(config, "x")));
    }
  }

  // Select on a comparison.
  void AddSelect(const Value& v) {
    Value w = Partner(v);
    const Value& p = Add("compare", v.dims, "pred", absl::StrCat(v.name, ", ", w.name));
    std::string pn = p.name;
    Rename(values_.back(), ", direction=GT");
    Add("select", v.dims, v.type, absl::StrCat(pn, ", ", v.name, ", ", w.name));
  }

  // Convert to the other float type.
  void AddConvert(const Value& v) {
    Add("convert", v.dims, v.type == "f32" ? "bf16" : "f32", v.name);
  }

  // Reverse, iota, or a dynamic slice.
  void AddReverseIotaOrDynamicSlice(const Value& v) {
    if (v.dims.empty()) return;
    int at = Uniform(0, static_cast<int>(v.dims.size()) - 1);
    int which = Uniform(0, 2);
    if (which == 0) {
      Add("reverse", v.dims, v.type, v.name);
      Rename(values_.back(), absl::StrCat(", dimensions={", at, "}"));
    } else if (which == 1) {
      const Value& i = Add(ShapeText(v.type, v.dims), absl::StrCat("iota(), iota_dimension=", at),
                           v.dims, v.type);
      std::string in = i.name;
      Add("add", v.dims, v.type, absl::StrCat(v.name, ", ", in));
    } else {
      std::vector<std::string> starts;
      std::vector<int64_t> sizes;
      for (int64_t d : v.dims) {
        // Starts past the end are clamped: exercise that too.
        const Value& s = Add(
            "s32[]", absl::StrCat("constant(", Uniform(0, static_cast<int>(d)), ")"), {}, "s32");
        starts.push_back(s.name);
        sizes.push_back(std::max<int64_t>(1, d / 2));
      }
      Add("dynamic-slice", sizes, v.type, absl::StrCat(v.name, ", ", absl::StrJoin(starts, ", ")));
      Rename(values_.back(),
             absl::StrCat(", dynamic_slice_sizes={", absl::StrJoin(sizes, ","), "}"));
    }
  }

  std::mt19937_64 rng_;
  std::string prefix_;
  std::string type_;
  std::vector<Value> values_;
  RandomGraph graph_;
};

}  // namespace

RandomGraph MakeRandomGraph(uint64_t seed, const std::string& prefix, int ops) {
  return GraphWriter(seed, prefix).Write(ops);
}

std::string ModuleText(const std::vector<RandomGraph>& graphs, const std::string& name) {
  std::string text = absl::StrCat("HloModule ", name, "\n\n");
  for (const char* type : {"f32", "bf16"}) {
    absl::StrAppend(&text, "add_", type, " {\n  a = ", type, "[] parameter(0)\n  b = ", type,
                    "[] parameter(1)\n  ROOT s = ", type, "[] add(a, b)\n}\n\n");
    absl::StrAppend(&text, "max_", type, " {\n  a = ", type, "[] parameter(0)\n  b = ", type,
                    "[] parameter(1)\n  ROOT m = ", type, "[] maximum(a, b)\n}\n\n");
  }
  absl::StrAppend(&text, "ENTRY main {\n");
  int parameter = 0;
  std::vector<std::string> outputs, types;
  for (const RandomGraph& g : graphs) {
    for (std::string line : g.lines) {
      size_t at = line.find("parameter(@");
      if (at != std::string::npos) {
        size_t close = line.find(')', at);
        int local = std::stoi(line.substr(at + 11, close - at - 11));
        line.replace(at, close - at + 1, absl::StrCat("parameter(", parameter + local, ")"));
      }
      absl::StrAppend(&text, line, "\n");
    }
    parameter += g.parameters;
    outputs.insert(outputs.end(), g.outputs.begin(), g.outputs.end());
    types.insert(types.end(), g.output_types.begin(), g.output_types.end());
  }
  absl::StrAppend(&text, "  ROOT out = (", absl::StrJoin(types, ", "), ") tuple(",
                  absl::StrJoin(outputs, ", "), ")\n}\n");
  return text;
}

}  // namespace seam::gym
