// The problems libbench times, as extract_shapes.py writes them (one
// cases.txt line each), and what every candidate needs around them: data in
// the HLO's physical layouts, canonical copies, naive references.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace libbench {

// bf16 as stored: the high half of an f32.
using bf16 = uint16_t;
bf16 ToBf16(float f);  // round to nearest even
float FromBf16(bf16 b);

// A batched GEMM: C[b] (m x n, row-major) = op(A[b]) (m x k) * op(B[b]) (k x n).
// A is stored m x k (k x m when ta), B k x n (n x k when tb), contiguous per batch.
struct GemmCase {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool ta = false, tb = false;
  bool bf16 = false;
  double Flops() const { return 2.0 * batch * m * n * k; }
};

// A 2-D convolution in HLO's semantics. Canonical orders (what the im2col
// path reads): input [n][h][w][ci], kernel [kh][kw][kin][co], output
// [on][oh][ow][co]. in/ker/out_order: the HLO operands' physical orders,
// major to minor, as dim label letters (b01f, oi01, ...).
struct ConvCase {
  int64_t n = 0, ci = 0, h = 0, w = 0, kh = 0, kw = 0, kin = 0, co = 0, oh = 0, ow = 0, on = 0;
  int64_t sh = 1, sw = 1, plh = 0, phh = 0, plw = 0, phw = 0;
  int64_t lh = 1, lw = 1, dh = 1, dw = 1;
  bool rh = false, rw = false;
  int64_t fgc = 1, bgc = 1;
  std::string in_order = "b01f", ker_order = "01io", out_order = "b01f";
  double Flops() const { return 2.0 * on * oh * ow * co * kh * kw * kin; }
  int64_t InSize() const { return n * h * w * ci; }
  int64_t KerSize() const { return kh * kw * kin * co; }
  int64_t OutSize() const { return on * oh * ow * co; }
};

struct Case {
  std::string id, cls, dtype;
  bool is_gemm = true;
  GemmCase gemm;
  ConvCase conv;
  double Flops() const { return is_gemm ? gemm.Flops() : conv.Flops(); }
};

// Parses cases.txt; throws on a malformed line.
std::vector<Case> ReadCases(const std::string& path);

// The same problem, cut so that a naive double reference is quick: batch
// and image batch to 1-2, GEMM rows and columns to at most 96.
Case SmallVersion(const Case& c);

// Deterministic values in [-1, 1).
std::vector<float> RandomValues(int64_t count, uint64_t seed);

// Reference results in double, on canonical layouts.
std::vector<double> ReferenceGemm(const GemmCase& g, const float* a, const float* b);
std::vector<double> ReferenceConv(const ConvCase& c, const float* in, const float* ker);

// Permutes a 4-D array between label orders: `from` and `to` are the
// physical orders (major to minor) as label strings; extent[label] its size.
void Permute4(const float* src, const std::string& from, float* dst, const std::string& to,
              const std::map<char, int64_t>& extent);

// Extents of a convolution's operands by label letter.
std::map<char, int64_t> InputExtent(const ConvCase& c);
std::map<char, int64_t> KernelExtent(const ConvCase& c);
std::map<char, int64_t> OutputExtent(const ConvCase& c);

// Largest |got - want| over the scale of the reference (max |want|, at
// least 1e-3): tolerances are relative to the result's magnitude.
double RelativeError(const float* got, const std::vector<double>& want);
double RelativeError(const float* got, const float* want, int64_t count);

}  // namespace libbench
