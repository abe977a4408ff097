// libbench: times the dots and convolutions of the corpus models (cases.txt,
// from extract_shapes.py) on every candidate library, interleaved round by
// round so that a neighbour's load (this machine is shared) falls on all of
// them alike, and prints one JSON line per (case, candidate). --verify runs
// small versions of every case against a naive double reference instead.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "blas_libs.h"
#include "onednn_ops.h"
#include "problems.h"
#include "seam_style.h"

namespace libbench {
namespace {

struct Options {
  std::string cases = "cases.txt", mkl, blis, scratch = "/tmp/libbench";
  std::string only;  // comma-separated case ids or classes; empty: all
  int threads = 1, rounds = 15, warmup = 2;
  double min_sample_s = 2e-3;
  bool verify = false;
};

// One thing timed on a case. Pseudo ones (layout conversions) are reported
// beside the candidates, not compared with them.
struct Candidate {
  std::string name;
  std::function<void()> run;
  std::function<const float*()> result;  // canonical output after run(); null for pseudo
  bool openmp = false;                   // runs on OpenMP threads (cooled down after)
  std::string impl;
};

std::string JsonEscape(const std::string& s) {
  std::string o;
  for (char ch : s) {
    if (ch == '"' || ch == '\\') o += '\\';
    if (static_cast<unsigned char>(ch) >= 0x20) o += ch;
  }
  return o;
}

struct Libraries {
  std::vector<BlasLibrary> blas;       // split by Seam's pool, one thread each
  std::optional<BlasLibrary> own;      // OpenBLAS on its own threads (threads > 1)
  const BlasLibrary* Find(const std::string& name) const {
    for (const auto& b : blas) {
      if (b.name == name) return &b;
    }
    return nullptr;
  }
};

// Everything one case needs: data, per-candidate outputs and the candidates.
class CaseRun {
 public:
  CaseRun(const Case& c, const Libraries& libs, Pool& pool, const dnnl::engine& engine, dnnl::stream& stream,
          int threads)
      : c_(c) {
    if (c.is_gemm) {
      SetUpGemm(libs, pool, engine, stream, threads);
    } else {
      SetUpConv(libs, pool, engine, stream);
    }
  }
  std::vector<Candidate>& candidates() { return candidates_; }
  const std::vector<std::string>& skipped() const { return skipped_; }
  std::vector<double> Reference() const {
    return c_.is_gemm ? ReferenceGemm(c_.gemm, a_.data(), b_.data())
                      : ReferenceConv(c_.conv, in_canon_.data(), ker_canon_.data());
  }
  int64_t OutputSize() const { return c_.is_gemm ? c_.gemm.batch * c_.gemm.m * c_.gemm.n : c_.conv.OutSize(); }

 private:
  float* NewOutput() {
    outputs_.push_back(std::make_unique<std::vector<float>>(static_cast<size_t>(OutputSize()), 0.0f));
    return outputs_.back()->data();
  }

  void SetUpGemm(const Libraries& libs, Pool& pool, const dnnl::engine& engine, dnnl::stream& stream,
                 int threads) {
    const GemmCase& g = c_.gemm;
    a_ = RandomValues(g.batch * g.m * g.k, 1);
    b_ = RandomValues(g.batch * g.k * g.n, 2);
    if (g.bf16) {
      // Values exactly representable in bf16: every candidate computes on
      // the same numbers, the reference included.
      for (float& x : a_) x = FromBf16(ToBf16(x));
      for (float& x : b_) x = FromBf16(ToBf16(x));
      for (float x : a_) a16_.push_back(ToBf16(x));
      for (float x : b_) b16_.push_back(ToBf16(x));
      a32_.resize(a_.size());
      b32_.resize(b_.size());
    }
    for (const BlasLibrary& lib : libs.blas) {
      float* out = NewOutput();
      Candidate cand{lib.name, nullptr, [out] { return out; }, false, lib.info};
      if (!g.bf16) {
        cand.run = [&pool, &lib, this, out] {
          lib.set_threads(1);
          SeamBatchedGemm(pool, lib, c_.gemm, a_.data(), b_.data(), out);
        };
      } else if (lib.gemm_bf16) {
        cand.run = [&pool, &lib, this, out] {
          lib.set_threads(1);
          SeamBatchedGemm(pool, lib, c_.gemm, a16_.data(), b16_.data(), out);
        };
        cand.impl += "; native bf16 GEMM";
      } else {
        cand.run = [&pool, &lib, this, out] {
          lib.set_threads(1);
          SeamBf16Gemm(pool, lib, c_.gemm, a16_.data(), b16_.data(), a32_.data(), b32_.data(), out);
        };
        cand.impl += "; bf16 converted to f32, sgemm";
      }
      candidates_.push_back(std::move(cand));
    }
    if (threads > 1) {
      // The libraries' own threads: one call per batch element.
      std::vector<const BlasLibrary*> own;
      if (libs.own) own.push_back(&*libs.own);
      if (auto* m = libs.Find("mkl")) own.push_back(m);
      if (auto* b = libs.Find("blis")) own.push_back(b);
      for (const BlasLibrary* lib : own) {
        if (g.bf16 && !lib->gemm_bf16) continue;  // conversion + threads: nothing new
        float* out = NewOutput();
        Candidate cand{lib->name == "openblas-own" ? lib->name : lib->name + "-own", nullptr,
                       [out] { return out; }, lib->name == "mkl", lib->info};
        cand.run = [lib, this, out, threads] {
          const GemmCase& q = c_.gemm;
          lib->set_threads(threads);
          for (int64_t i = 0; i < q.batch; ++i) {
            const int64_t lda = q.ta ? q.m : q.k, ldb = q.tb ? q.k : q.n;
            if (q.bf16) {
              lib->Gemm(q.ta, q.tb, q.m, q.n, q.k, a16_.data() + i * q.m * q.k, lda, b16_.data() + i * q.k * q.n,
                        ldb, out + i * q.m * q.n, q.n);
            } else {
              lib->Gemm(q.ta, q.tb, q.m, q.n, q.k, a_.data() + i * q.m * q.k, lda, b_.data() + i * q.k * q.n, ldb,
                        out + i * q.m * q.n, q.n);
            }
          }
          lib->set_threads(1);
        };
        candidates_.push_back(std::move(cand));
      }
    }
    for (bool any : {true, false}) {
      float* out = NewOutput();
      void* a = g.bf16 ? static_cast<void*>(a16_.data()) : a_.data();
      void* b = g.bf16 ? static_cast<void*>(b16_.data()) : b_.data();
      std::shared_ptr<DnnlMatmul> mm;
      try {
        mm = std::make_shared<DnnlMatmul>(engine, g, any, a, b, out);
      } catch (const std::exception& e) {
        std::cerr << c_.id << ": oneDNN matmul: " << e.what() << "\n";
        continue;
      }
      mm->ReorderWeights(stream);
      Candidate cand{any ? "onednn" : "onednn-plain", [mm, &stream] { mm->Run(stream); },
                     [out] { return out; }, true, mm->Impl()};
      candidates_.push_back(std::move(cand));
      if (any) {
        candidates_.push_back({"onednn:reorder_weights", [mm, &stream] { mm->ReorderWeights(stream); }, nullptr,
                               true, ""});
      }
    }
  }

  void SetUpConv(const Libraries& libs, Pool& pool, const dnnl::engine& engine, dnnl::stream& stream) {
    const ConvCase& v = c_.conv;
    in_hlo_ = RandomValues(v.InSize(), 3);
    ker_hlo_ = RandomValues(v.KerSize(), 4);
    in_canon_.resize(in_hlo_.size());
    ker_canon_.resize(ker_hlo_.size());
    Permute4(in_hlo_.data(), v.in_order, in_canon_.data(), "b01f", InputExtent(v));
    Permute4(ker_hlo_.data(), v.ker_order, ker_canon_.data(), "01io", KernelExtent(v));
    auto seam = std::make_shared<SeamConv>(v);
    if (seam->depthwise()) {
      float* out = NewOutput();
      candidates_.push_back({"seam-loop", [seam, &pool, this, out] { seam->Run(pool, nullptr, in_canon_.data(), ker_canon_.data(), out); },
                             [out] { return out; }, false, "Seam's depthwise loop, generic x86-64 -O2"});
      float* out2 = NewOutput();
      candidates_.push_back({"seam-loop-native",
                             [seam, &pool, this, out2] { seam->RunNative(pool, in_canon_.data(), ker_canon_.data(), out2); },
                             [out2] { return out2; }, false, "the same loop, -O2 -march=native"});
    } else {
      for (const BlasLibrary& lib : libs.blas) {
        if (lib.name == "openblas-unforced") continue;  // GEMM tables show what forcing buys
        float* out = NewOutput();
        candidates_.push_back({lib.name,
                               [seam, &pool, &lib, this, out] {
                                 lib.set_threads(1);
                                 seam->Run(pool, &lib, in_canon_.data(), ker_canon_.data(), out);
                               },
                               [out] { return out; }, false, "im2col + " + lib.info});
      }
    }
    // Seam's packing to its canonical orders, where the HLO's differ.
    const bool pack_in = v.in_order != "b01f", pack_ker = v.ker_order != "01io", pack_out = v.out_order != "b01f";
    if (pack_in || pack_ker || pack_out) {
      in_pack_.resize(in_hlo_.size());
      ker_pack_.resize(ker_hlo_.size());
      out_pack_.resize(static_cast<size_t>(v.OutSize()));
      out_unpack_.resize(static_cast<size_t>(v.OutSize()));
      candidates_.push_back({"seam:pack",
                             [this, pack_in, pack_ker, pack_out] {
                               const ConvCase& q = c_.conv;
                               if (pack_in) Permute4(in_hlo_.data(), q.in_order, in_pack_.data(), "b01f", InputExtent(q));
                               if (pack_ker) Permute4(ker_hlo_.data(), q.ker_order, ker_pack_.data(), "01io", KernelExtent(q));
                               if (pack_out) Permute4(out_pack_.data(), "b01f", out_unpack_.data(), q.out_order, OutputExtent(q));
                             },
                             nullptr, false, ""});
    }
    dnn_out_.resize(static_cast<size_t>(v.OutSize()));
    for (bool plain : {false, true}) {
      try {
        auto conv = std::make_shared<DnnlConv>(engine, c_, in_hlo_.data(), ker_hlo_.data(), dnn_out_.data(), plain);
        if (plain && conv->Impl().rfind("ref", 0) == 0) {
          // Only the reference implementation takes these layouts: hundreds of
          // times slower, not worth timing.
          skipped_.push_back("onednn-plain: " + conv->Kind() + ": " + conv->Impl());
          continue;
        }
        conv->ReorderIn(stream);
        conv->ReorderWeights(stream);
        float* out = NewOutput();
        candidates_.push_back({plain ? "onednn-plain" : "onednn", [conv, &stream] { conv->Run(stream); },
                               [conv, &stream, this, out] {
                                 conv->ReorderOut(stream);
                                 Permute4(dnn_out_.data(), c_.conv.out_order, out, "b01f", OutputExtent(c_.conv));
                                 return out;
                               },
                               true, conv->Kind() + ": " + conv->Impl()});
        if (plain) continue;  // its reorders: weights only, the same as below
        if (conv->has_reorder_in()) {
          candidates_.push_back({"onednn:reorder_in", [conv, &stream] { conv->ReorderIn(stream); }, nullptr, true, ""});
        }
        if (conv->has_reorder_weights()) {
          candidates_.push_back(
              {"onednn:reorder_weights", [conv, &stream] { conv->ReorderWeights(stream); }, nullptr, true, ""});
        }
        if (conv->has_reorder_out()) {
          candidates_.push_back(
              {"onednn:reorder_out", [conv, &stream] { conv->ReorderOut(stream); }, nullptr, true, ""});
        }
      } catch (const std::exception& e) {
        std::cerr << c_.id << ": oneDNN" << (plain ? " (plain layouts)" : "") << ": " << e.what() << "\n";
      }
    }
  }

  Case c_;
  std::vector<float> a_, b_, a32_, b32_;
  std::vector<bf16> a16_, b16_;
  std::vector<float> in_hlo_, ker_hlo_, in_canon_, ker_canon_, dnn_out_;
  std::vector<float> in_pack_, ker_pack_, out_pack_, out_unpack_;
  std::vector<std::unique_ptr<std::vector<float>>> outputs_;
  std::vector<Candidate> candidates_;
  std::vector<std::string> skipped_;
};

double Seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

// CPU time of the whole process (every thread): per sample, CPU over wall
// time says how many cores the candidate actually had (the machine is shared).
double ProcessCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

std::string LoadAverage() {
  double l[3] = {0, 0, 0};
  if (getloadavg(l, 3) < 0) return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f %.2f %.2f", l[0], l[1], l[2]);
  return buf;
}

double Quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  double at = q * (static_cast<double>(v.size()) - 1);
  size_t lo = static_cast<size_t>(at);
  size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (at - static_cast<double>(lo));
}

bool Selected(const Options& o, const Case& c) {
  if (o.only.empty()) return true;
  std::stringstream ss(o.only);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item == c.id || item == c.cls) return true;
  }
  return false;
}

int Verify(const Options& o, const std::vector<Case>& cases, const Libraries& libs, Pool& pool,
           const dnnl::engine& engine, dnnl::stream& stream) {
  int failures = 0;
  for (const Case& full : cases) {
    if (!Selected(o, full)) continue;
    Case c = SmallVersion(full);
    CaseRun run(c, libs, pool, engine, stream, o.threads);
    std::vector<double> want = run.Reference();
    for (Candidate& cand : run.candidates()) {
      if (!cand.result) continue;
      cand.run();
      double err = RelativeError(cand.result(), want);
      bool ok = err <= 1e-4;
      failures += !ok;
      std::printf(
          "{\"verify\":true,\"threads\":%d,\"case\":\"%s\",\"class\":\"%s\",\"candidate\":\"%s\",\"rel_err\":%.3g,"
          "\"ok\":%s}\n",
          o.threads, c.id.c_str(), c.cls.c_str(), cand.name.c_str(), err, ok ? "true" : "false");
    }
    std::fflush(stdout);
  }
  std::fprintf(stderr, "verify: %d failure(s)\n", failures);
  return failures == 0 ? 0 : 1;
}

void Time(const Options& o, const std::vector<Case>& cases, const Libraries& libs, Pool& pool,
          const dnnl::engine& engine, dnnl::stream& stream) {
  using clock = std::chrono::steady_clock;
  for (const Case& c : cases) {
    if (!Selected(o, c)) continue;
    CaseRun run(c, libs, pool, engine, stream, o.threads);
    auto& cands = run.candidates();
    for (const std::string& why : run.skipped()) {
      std::printf("{\"threads\":%d,\"case\":\"%s\",\"class\":\"%s\",\"skipped\":\"%s\"}\n", o.threads, c.id.c_str(),
                  c.cls.c_str(), JsonEscape(why).c_str());
    }
    // Warm-up, then repetitions per sample so that one sample lasts at
    // least min_sample_s (tiny GEMMs would otherwise time the clock).
    std::vector<int> reps(cands.size(), 1);
    for (size_t i = 0; i < cands.size(); ++i) {
      double t = 0;
      for (int w = 0; w < o.warmup; ++w) {
        auto t0 = clock::now();
        cands[i].run();
        t = Seconds(clock::now() - t0);
      }
      reps[i] = static_cast<int>(std::clamp(std::ceil(o.min_sample_s / std::max(t, 1e-9)), 1.0, 100000.0));
    }
    // Every result against the first candidate's, on the full-size problem.
    std::vector<double> check(cands.size(), -1);
    const float* base = nullptr;
    for (size_t i = 0; i < cands.size(); ++i) {
      if (!cands[i].result) continue;
      cands[i].run();
      const float* r = cands[i].result();
      if (base == nullptr) {
        base = r;
        check[i] = 0;
      } else {
        check[i] = RelativeError(r, base, run.OutputSize());
      }
    }
    // Rounds: the candidates on this library's own threads or on plain
    // threads in a rotating order, then the OpenMP ones; after those, a
    // pause so that their spinning workers are asleep before the next round.
    std::vector<size_t> plain, openmp;
    for (size_t i = 0; i < cands.size(); ++i) (cands[i].openmp ? openmp : plain).push_back(i);
    std::vector<std::vector<double>> samples(cands.size()), cores(cands.size());
    for (int r = 0; r < o.rounds; ++r) {
      std::vector<size_t> order;
      for (size_t j = 0; j < plain.size(); ++j) order.push_back(plain[(j + static_cast<size_t>(r)) % plain.size()]);
      order.insert(order.end(), openmp.begin(), openmp.end());
      for (size_t i : order) {
        const double cpu0 = ProcessCpuSeconds();
        auto t0 = clock::now();
        for (int k = 0; k < reps[i]; ++k) cands[i].run();
        const double wall = Seconds(clock::now() - t0);
        samples[i].push_back(wall / reps[i]);
        cores[i].push_back((ProcessCpuSeconds() - cpu0) / wall);
      }
      if (o.threads > 1 && !openmp.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(30));
    }
    for (size_t i = 0; i < cands.size(); ++i) {
      const double med = Quantile(samples[i], 0.5);
      std::printf(
          "{\"threads\":%d,\"case\":\"%s\",\"class\":\"%s\",\"candidate\":\"%s\",\"median_s\":%.6g,\"p25_s\":%.6g,"
          "\"p75_s\":%.6g,\"min_s\":%.6g,\"samples\":%zu,\"reps\":%d,\"flops\":%.6g,\"gflops\":%.4g,"
          "\"cores_used\":%.3g,\"check_rel_err\":%.3g,\"impl\":\"%s\"}\n",
          o.threads, c.id.c_str(), c.cls.c_str(), cands[i].name.c_str(), med, Quantile(samples[i], 0.25),
          Quantile(samples[i], 0.75), Quantile(samples[i], 0.0), samples[i].size(), reps[i], c.Flops(),
          c.Flops() / med / 1e9, Quantile(cores[i], 0.5), check[i], JsonEscape(cands[i].impl).c_str());
      if (check[i] > 1e-3) std::fprintf(stderr, "%s: %s differs from %s: %.3g\n", c.id.c_str(), cands[i].name.c_str(), cands[0].name.c_str(), check[i]);
    }
    std::fflush(stdout);
  }
}

int Main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error("missing value for " + a);
      return argv[++i];
    };
    if (a == "--cases") o.cases = value();
    else if (a == "--mkl") o.mkl = value();
    else if (a == "--blis") o.blis = value();
    else if (a == "--scratch") o.scratch = value();
    else if (a == "--only") o.only = value();
    else if (a == "--threads") o.threads = std::stoi(value());
    else if (a == "--rounds") o.rounds = std::stoi(value());
    else if (a == "--warmup") o.warmup = std::stoi(value());
    else if (a == "--min-sample-ms") o.min_sample_s = std::stod(value()) / 1e3;
    else if (a == "--verify") o.verify = true;
    else throw std::runtime_error("unknown option " + a + " (see run.sh)");
  }
  std::vector<Case> cases = ReadCases(o.cases);
  omp_set_num_threads(o.threads);  // oneDNN's and MKL's OpenMP teams
  Libraries libs;
  libs.blas.push_back(OpenOpenBlas("openblas", true, 0, o.scratch));
  libs.blas.push_back(OpenOpenBlas("openblas-unforced", false, 0, o.scratch));
  if (!o.mkl.empty()) libs.blas.push_back(OpenMkl(o.mkl));
  if (!o.blis.empty()) libs.blas.push_back(OpenBlis(o.blis));
  if (o.threads > 1) {
    libs.own = OpenOpenBlas("openblas-own", true, 4, o.scratch);
  }
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  Pool pool(o.threads);
  std::printf("{\"header\":true,\"threads\":%d,\"verify\":%s,\"rounds\":%d,\"warmup\":%d,\"min_sample_s\":%g",
              o.threads, o.verify ? "true" : "false", o.rounds, o.warmup, o.min_sample_s);
  for (const auto& b : libs.blas) std::printf(",\"%s\":\"%s\"", b.name.c_str(), JsonEscape(b.info).c_str());
  std::printf(",\"onednn\":\"%s\"}\n", JsonEscape(DnnlInfo()).c_str());
  if (o.verify) return Verify(o, cases, libs, pool, engine, stream);
  std::printf("{\"load\":\"start\",\"loadavg\":\"%s\"}\n", LoadAverage().c_str());
  Time(o, cases, libs, pool, engine, stream);
  std::printf("{\"load\":\"end\",\"loadavg\":\"%s\"}\n", LoadAverage().c_str());
  return 0;
}

}  // namespace
}  // namespace libbench

int main(int argc, char** argv) {
  try {
    return libbench::Main(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "libbench: " << e.what() << "\n";
    return 2;
  }
}
