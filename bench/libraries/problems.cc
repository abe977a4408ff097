#include "problems.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace libbench {

bf16 ToBf16(float f) {
  uint32_t u = std::bit_cast<uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<bf16>((u >> 16) | 0x40);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<bf16>(u >> 16);
}

float FromBf16(bf16 b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

namespace {

std::map<std::string, std::string> Fields(const std::string& line) {
  std::map<std::string, std::string> f;
  std::istringstream in(line);
  std::string word;
  in >> word;
  f["kind"] = word;
  while (in >> word) {
    auto eq = word.find('=');
    if (eq == std::string::npos) throw std::runtime_error("cases: no '=' in " + word);
    f[word.substr(0, eq)] = word.substr(eq + 1);
  }
  return f;
}

int64_t Int(const std::map<std::string, std::string>& f, const char* key) {
  auto it = f.find(key);
  if (it == f.end()) throw std::runtime_error(std::string("cases: missing ") + key);
  return std::stoll(it->second);
}

}  // namespace

std::vector<Case> ReadCases(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::vector<Case> cases;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto f = Fields(line);
    Case c;
    c.id = f["id"];
    c.cls = f["class"];
    c.dtype = f["dtype"];
    if (f["kind"] == "gemm") {
      c.is_gemm = true;
      GemmCase& g = c.gemm;
      g.batch = Int(f, "batch");
      g.m = Int(f, "m");
      g.n = Int(f, "n");
      g.k = Int(f, "k");
      g.ta = Int(f, "ta") != 0;
      g.tb = Int(f, "tb") != 0;
      g.bf16 = c.dtype == "bf16";
    } else if (f["kind"] == "conv") {
      c.is_gemm = false;
      ConvCase& v = c.conv;
      v.n = Int(f, "n"), v.ci = Int(f, "ci"), v.h = Int(f, "h"), v.w = Int(f, "w");
      v.kh = Int(f, "kh"), v.kw = Int(f, "kw"), v.kin = Int(f, "kin"), v.co = Int(f, "co");
      v.oh = Int(f, "oh"), v.ow = Int(f, "ow"), v.on = Int(f, "on");
      v.sh = Int(f, "sh"), v.sw = Int(f, "sw");
      v.plh = Int(f, "plh"), v.phh = Int(f, "phh"), v.plw = Int(f, "plw"), v.phw = Int(f, "phw");
      v.lh = Int(f, "lh"), v.lw = Int(f, "lw"), v.dh = Int(f, "dh"), v.dw = Int(f, "dw");
      v.rh = Int(f, "rh") != 0, v.rw = Int(f, "rw") != 0;
      v.fgc = Int(f, "fgc"), v.bgc = Int(f, "bgc");
      v.in_order = f["in_order"], v.ker_order = f["ker_order"], v.out_order = f["out_order"];
      if (c.dtype != "f32") throw std::runtime_error("cases: only f32 convolutions: " + c.id);
    } else {
      throw std::runtime_error("cases: unknown kind in " + line);
    }
    cases.push_back(c);
  }
  return cases;
}

Case SmallVersion(const Case& c) {
  Case s = c;
  if (c.is_gemm) {
    s.gemm.batch = std::min<int64_t>(c.gemm.batch, 2);
    s.gemm.m = std::min<int64_t>(c.gemm.m, 96);
    s.gemm.n = std::min<int64_t>(c.gemm.n, 96);
    return s;
  }
  ConvCase& v = s.conv;
  if (c.cls == "conv_bwd_filter") {
    v.ci = v.kin = std::min<int64_t>(c.conv.ci, 2);  // the image batch
    // Channels are the convolution's batch: keep at most a few groups.
    if (v.bgc > 1) {
      int64_t groups = std::min<int64_t>(v.bgc, 3);
      v.n = v.n / v.bgc * groups;
      v.co = v.co / v.bgc * groups;
      v.bgc = groups;
    }
  } else {
    v.n = v.on = 1;
  }
  return s;
}

std::vector<float> RandomValues(int64_t count, uint64_t seed) {
  std::vector<float> v(static_cast<size_t>(count));
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (float& f : v) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;  // xorshift64
    f = static_cast<float>(static_cast<double>(x >> 11) / 9007199254740992.0 * 2.0 - 1.0);
  }
  return v;
}

std::vector<double> ReferenceGemm(const GemmCase& g, const float* a, const float* b) {
  std::vector<double> c(static_cast<size_t>(g.batch * g.m * g.n), 0.0);
  for (int64_t q = 0; q < g.batch; ++q) {
    const float* A = a + q * g.m * g.k;
    const float* B = b + q * g.k * g.n;
    for (int64_t i = 0; i < g.m; ++i) {
      for (int64_t j = 0; j < g.n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < g.k; ++p) {
          double x = g.ta ? A[p * g.m + i] : A[i * g.k + p];
          double y = g.tb ? B[j * g.k + p] : B[p * g.n + j];
          s += x * y;
        }
        c[static_cast<size_t>((q * g.m + i) * g.n + j)] = s;
      }
    }
  }
  return c;
}

// Straight from the HLO definition: each output element sums over kernel
// positions and the kernel's input features of its feature group, reading
// the input batch of its batch group; taps in padding or between dilated
// input elements read zero.
std::vector<double> ReferenceConv(const ConvCase& c, const float* in, const float* ker) {
  std::vector<double> out(static_cast<size_t>(c.OutSize()), 0.0);
  const int64_t per_fg = c.co / c.fgc, per_bg = c.co / c.bgc;
  for (int64_t b = 0; b < c.on; ++b) {
    for (int64_t y = 0; y < c.oh; ++y) {
      for (int64_t x = 0; x < c.ow; ++x) {
        for (int64_t f = 0; f < c.co; ++f) {
          const int64_t fg = f / per_fg, bg = f / per_bg;
          const int64_t ib = bg * c.on + b;
          double s = 0;
          for (int64_t ky = 0; ky < c.kh; ++ky) {
            int64_t py = y * c.sh + ky * c.dh - c.plh;
            if (py < 0 || py % c.lh != 0 || py / c.lh >= c.h) continue;
            int64_t sy = c.rh ? c.kh - 1 - ky : ky;
            for (int64_t kx = 0; kx < c.kw; ++kx) {
              int64_t px = x * c.sw + kx * c.dw - c.plw;
              if (px < 0 || px % c.lw != 0 || px / c.lw >= c.w) continue;
              int64_t sx = c.rw ? c.kw - 1 - kx : kx;
              const float* iv = in + ((ib * c.h + py / c.lh) * c.w + px / c.lw) * c.ci + fg * c.kin;
              const float* kv = ker + ((sy * c.kw + sx) * c.kin) * c.co + f;
              for (int64_t i = 0; i < c.kin; ++i) s += static_cast<double>(iv[i]) * kv[i * c.co];
            }
          }
          out[static_cast<size_t>(((b * c.oh + y) * c.ow + x) * c.co + f)] = s;
        }
      }
    }
  }
  return out;
}

void Permute4(const float* src, const std::string& from, float* dst, const std::string& to,
              const std::map<char, int64_t>& extent) {
  std::map<char, int64_t> ss, ds;  // strides by label in source and destination
  for (int64_t i = 3, s = 1, d = 1; i >= 0; --i) {
    ss[from[i]] = s, s *= extent.at(from[i]);
    ds[to[i]] = d, d *= extent.at(to[i]);
  }
  const char a = from[3], b = to[3];  // contiguous in the source, in the destination
  if (a == b) {
    // Rows of the innermost dimension move whole.
    const int64_t row = extent.at(a);
    const char o0 = to[0], o1 = to[1], o2 = to[2];
    for (int64_t i0 = 0; i0 < extent.at(o0); ++i0) {
      for (int64_t i1 = 0; i1 < extent.at(o1); ++i1) {
        for (int64_t i2 = 0; i2 < extent.at(o2); ++i2) {
          std::copy_n(src + i0 * ss[o0] + i1 * ss[o1] + i2 * ss[o2], row,
                      dst + i0 * ds[o0] + i1 * ds[o1] + i2 * ds[o2]);
        }
      }
    }
    return;
  }
  // A 2-D transpose of (a, b) in 16x16 tiles for every index of the other two.
  char rest[2] = {0, 0};
  for (int i = 0, n = 0; i < 4; ++i) {
    if (to[i] != a && to[i] != b) rest[n++] = to[i];
  }
  const char o0 = rest[0], o1 = rest[1];
  const int64_t ea = extent.at(a), eb = extent.at(b), dsa = ds[a], ssb = ss[b];
  constexpr int64_t kTile = 16;
  for (int64_t i0 = 0; i0 < extent.at(o0); ++i0) {
    for (int64_t i1 = 0; i1 < extent.at(o1); ++i1) {
      const float* s0 = src + i0 * ss[o0] + i1 * ss[o1];
      float* d0 = dst + i0 * ds[o0] + i1 * ds[o1];
      for (int64_t ja = 0; ja < ea; ja += kTile) {
        for (int64_t jb = 0; jb < eb; jb += kTile) {
          const int64_t ka = std::min(ea, ja + kTile), kb = std::min(eb, jb + kTile);
          for (int64_t x = ja; x < ka; ++x) {
            for (int64_t y = jb; y < kb; ++y) d0[x * dsa + y] = s0[y * ssb + x];
          }
        }
      }
    }
  }
}

std::map<char, int64_t> InputExtent(const ConvCase& c) {
  return {{'b', c.n}, {'0', c.h}, {'1', c.w}, {'f', c.ci}};
}
std::map<char, int64_t> KernelExtent(const ConvCase& c) {
  return {{'0', c.kh}, {'1', c.kw}, {'i', c.kin}, {'o', c.co}};
}
std::map<char, int64_t> OutputExtent(const ConvCase& c) {
  return {{'b', c.on}, {'0', c.oh}, {'1', c.ow}, {'f', c.co}};
}

double RelativeError(const float* got, const std::vector<double>& want) {
  double scale = 1e-3, err = 0;
  for (double w : want) scale = std::max(scale, std::abs(w));
  for (size_t i = 0; i < want.size(); ++i) {
    double d = std::abs(static_cast<double>(got[i]) - want[i]);
    if (!(d <= err)) err = d;  // NaN sticks
  }
  return err / scale;
}

double RelativeError(const float* got, const float* want, int64_t count) {
  double scale = 1e-3, err = 0;
  for (int64_t i = 0; i < count; ++i) scale = std::max(scale, std::abs(static_cast<double>(want[i])));
  for (int64_t i = 0; i < count; ++i) {
    double d = std::abs(static_cast<double>(got[i]) - want[i]);
    if (!(d <= err)) err = d;
  }
  return err / scale;
}

}  // namespace libbench
