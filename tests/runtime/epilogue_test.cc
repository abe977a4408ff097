// Library calls with epilogues against the interpreter: random dots and
// convolutions (random_convolutions.h), each followed by a random chain of
// the elementwise work that follows them in real models (a bias along any
// dimension, an activation, a scale, a residual add, a convert), many to a
// module; and calls large enough to be shared out over threads. The
// planner must attach every chain, and each strategy's run must agree with
// the interpreter.
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "random_convolutions.h"
#include "seam/compiler/cpu_compiler.h"
#include "seam/eval/arguments.h"
#include "seam/eval/compare.h"
#include "seam/eval/evaluator.h"
#include "seam/runtime/executable.h"
#include "seam/text/parser.h"

namespace seam::runtime {
namespace {

// Builds one module: numbered library calls with their chains, every
// chain's end an element of the root tuple.
class ModuleBuilder {
 public:
  explicit ModuleBuilder(std::mt19937& rng) : rng_(rng) {}

  void AddCase() {
    const int j = cases_++;
    std::string type;
    std::vector<int64_t> dims;
    if (Pick(0, 1) == 0) {
      RandomConv conv = GenerateConvolution(rng_);
      type = conv.type;
      dims = conv.out_dims;
      const std::string a = Parameter(conv.type, conv.in_dims), b = Parameter(conv.type, conv.kernel_dims);
      Line(absl::StrCat("c", j, " = ", Array(type, dims), " convolution(", a, ", ", b, "), ", conv.attrs));
    } else {
      type = Pick(0, 2) == 0 ? "bf16" : "f32";
      const int64_t batch = Pick(1, 3), m = Pick(1, 40), n = Pick(1, 40), k = Pick(1, 40);
      const bool batched = batch > 1, lhs_t = Pick(0, 1), rhs_t = Pick(0, 1);
      std::vector<int64_t> lhs = lhs_t ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k};
      std::vector<int64_t> rhs = rhs_t ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n};
      dims = {m, n};
      if (batched) {
        lhs.insert(lhs.begin(), batch);
        rhs.insert(rhs.begin(), batch);
        dims.insert(dims.begin(), batch);
      }
      const int o = batched ? 1 : 0;
      const std::string a = Parameter(type, lhs), b = Parameter(type, rhs);
      Line(absl::StrCat("c", j, " = ", Array(type, dims), " dot(", a, ", ", b, "), ",
                        batched ? "lhs_batch_dims={0}, rhs_batch_dims={0}, " : "",
                        "lhs_contracting_dims={", o + (lhs_t ? 0 : 1), "}, rhs_contracting_dims={",
                        o + (rhs_t ? 1 : 0), "}"));
    }
    std::string value = absl::StrCat("c", j);
    const int ops = Pick(1, 4);
    for (int k = 0; k < ops; ++k) {
      const std::string out = absl::StrCat("e", j, "_", k), shape = Array(type, dims);
      switch (Pick(0, 5)) {
        case 0: {  // a bias along one dimension
          const int d = Pick(0, static_cast<int>(dims.size()) - 1);
          const std::string bias = Parameter(type, {dims[d]});
          Line(absl::StrCat(out, "b = ", shape, " broadcast(", bias, "), dimensions={", d, "}"));
          Line(absl::StrCat(out, " = ", shape, " add(", value, ", ", out, "b)"));
          break;
        }
        case 1:  // relu
          Line(absl::StrCat(out, "z = ", type, "[] constant(0)"));
          Line(absl::StrCat(out, "zb = ", shape, " broadcast(", out, "z), dimensions={}"));
          Line(absl::StrCat(out, " = ", shape, " maximum(", value, ", ", out, "zb)"));
          break;
        case 2:  // a scale
          Line(absl::StrCat(out, "s = ", type, "[] constant(0.5)"));
          Line(absl::StrCat(out, "sb = ", shape, " broadcast(", out, "s), dimensions={}"));
          Line(absl::StrCat(out, " = ", shape, " multiply(", out, "sb, ", value, ")"));
          break;
        case 3:  // a residual
          Line(absl::StrCat(out, " = ", shape, " add(", Parameter(type, dims), ", ", value, ")"));
          break;
        case 4:  // an activation
          Line(absl::StrCat(out, " = ", shape, " ", Pick(0, 1) ? "tanh" : "logistic", "(", value, ")"));
          break;
        default: {  // a convert to the other float type
          type = type == "f32" ? "bf16" : "f32";
          Line(absl::StrCat(out, " = ", Array(type, dims), " convert(", value, ")"));
          break;
        }
      }
      value = out;
    }
    results_.push_back(value);
    result_types_.push_back(Array(type, dims));
  }

  std::string Text() const {
    return absl::StrCat("HloModule epilogues\n\nENTRY e {\n", body_, "  ROOT t = (",
                        absl::StrJoin(result_types_, ", "), ") tuple(", absl::StrJoin(results_, ", "),
                        ")\n}\n");
  }
  int cases() const { return cases_; }

 private:
  int Pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  static std::string Array(const std::string& type, const std::vector<int64_t>& dims) {
    return absl::StrCat(type, "[", absl::StrJoin(dims, ","), "]");
  }
  std::string Parameter(const std::string& type, const std::vector<int64_t>& dims) {
    const std::string name = absl::StrCat("p", parameters_);
    Line(absl::StrCat(name, " = ", Array(type, dims), " parameter(", parameters_++, ")"));
    return name;
  }
  void Line(const std::string& line) { absl::StrAppend(&body_, "  ", line, "\n"); }

  std::mt19937& rng_;
  std::string body_;
  std::vector<std::string> results_, result_types_;
  int cases_ = 0, parameters_ = 0;
};

TEST(LibraryEpilogues, MatchTheInterpreterOnRandomChains) {
  std::mt19937 rng(29);
  for (int module = 0; module < 3; ++module) {
    ModuleBuilder builder(rng);
    for (int c = 0; c < 16; ++c) builder.AddCase();
    const std::string text = builder.Text();
    absl::StatusOr<std::vector<std::unique_ptr<Module>>> modules = ParseHloText(text, "epilogues");
    ASSERT_TRUE(modules.ok()) << modules.status() << "\n" << text;
    const Module& m = *modules->front();
    std::vector<Literal> arguments = RandomArguments(*m.entry(), module);
    Evaluator evaluator;
    evaluator.set_wide_accumulation(true);
    absl::StatusOr<Literal> want = evaluator.Run(m, arguments);
    ASSERT_TRUE(want.ok()) << want.status();
    for (fusion::Strategy strategy : {fusion::Strategy::kStitch, fusion::Strategy::kXla}) {
      compiler::CpuOptions options;
      options.plan.strategy = strategy;
      options.plan.epilogue_min_result_bytes = 0;  // the random calls are small
      absl::StatusOr<compiler::Compiled<runtime::Executable>> exe =
          compiler::CompileForCpu(m, options);
      ASSERT_TRUE(exe.ok()) << exe.status();
      // Every call takes its chain and runs it compiled.
      EXPECT_EQ(exe->plan.Totals().epilogues, builder.cases()) << text;
      EXPECT_EQ((*exe)->stats().epilogues, builder.cases()) << text;
      EXPECT_TRUE((*exe)->stats().fallbacks.empty()) << (*exe)->stats().fallbacks.front();
      absl::StatusOr<Literal> got = (*exe)->Run(arguments);
      ASSERT_TRUE(got.ok()) << got.status();
      for (int c = 0; c < builder.cases(); ++c) {
        EXPECT_EQ(DescribeDifferences(got->tuple_elements()[c], want->tuple_elements()[c],
                                      &RewriteTolerance, absl::StrCat("case ", c)),
                  "")
            << fusion::StrategyName(strategy) << "\n" << text;
      }
    }
  }
}

// Calls large enough to be shared out over threads, each share's piece
// going through the epilogue as it is written: OpenBLAS's products by
// rows, by columns and by batch; oneDNN's bf16 matmul by batch and by
// columns; convolutions by image and by output feature.
TEST(LibraryEpilogues, MatchTheInterpreterOnSharedCalls) {
  const std::string text = R"(HloModule shared

ENTRY e {
  a = f32[300,200] parameter(0)
  b = f32[200,256] parameter(1)
  bias = f32[256] parameter(2)
  d = f32[300,256] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[300,256] broadcast(bias), dimensions={1}
  zero = f32[] constant(0)
  zb = f32[300,256] broadcast(zero), dimensions={}
  d1 = f32[300,256] add(d, bb)
  d2 = f32[300,256] maximum(d1, zb)
  x = f32[16,24,40] parameter(3)
  y = f32[16,40,24] parameter(4)
  r = f32[16,24,24] parameter(5)
  bd = f32[16,24,24] dot(x, y), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  bd1 = f32[16,24,24] add(bd, r)
  hx = bf16[8,64,96] parameter(6)
  hy = bf16[8,96,128] parameter(7)
  hd = bf16[8,64,128] dot(hx, hy), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  hd1 = bf16[8,64,128] tanh(hd)
  img = f32[4,18,18,32] parameter(8)
  w = f32[3,3,32,48] parameter(9)
  cb = f32[48] parameter(10)
  cv = f32[4,16,16,48] convolution(img, w), window={size=3x3}, dim_labels=b01f_01io->b01f
  cbb = f32[4,16,16,48] broadcast(cb), dimensions={3}
  cv1 = f32[4,16,16,48] add(cv, cbb)
  czb = f32[4,16,16,48] broadcast(zero), dimensions={}
  cv2 = f32[4,16,16,48] maximum(cv1, czb)
  wa = f32[64,100] parameter(11)
  wb = f32[100,512] parameter(12)
  wbias = f32[64] parameter(13)
  wd = f32[64,512] dot(wa, wb), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  wbb = f32[64,512] broadcast(wbias), dimensions={0}
  wd1 = f32[64,512] add(wd, wbb)
  wd2 = f32[64,512] tanh(wd1)
  ha = bf16[32,256] parameter(14)
  hb = bf16[256,512] parameter(15)
  hw = bf16[32,512] dot(ha, hb), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  hw1 = f32[32,512] convert(hw)
  fimg = f32[1,10,10,32] parameter(16)
  fw = f32[3,3,32,128] parameter(17)
  fcv = f32[1,8,8,128] convolution(fimg, fw), window={size=3x3}, dim_labels=b01f_01io->b01f
  fcv1 = f32[1,8,8,128] logistic(fcv)
  ROOT t = (f32[300,256], f32[16,24,24], bf16[8,64,128], f32[4,16,16,48], f32[64,512], f32[32,512], f32[1,8,8,128]) tuple(d2, bd1, hd1, cv2, wd2, hw1, fcv1)
}
)";
  absl::StatusOr<std::vector<std::unique_ptr<Module>>> modules = ParseHloText(text, "shared");
  ASSERT_TRUE(modules.ok()) << modules.status();
  const Module& m = *modules->front();
  std::vector<Literal> arguments = RandomArguments(*m.entry(), 7);
  Evaluator evaluator;
  evaluator.set_wide_accumulation(true);
  absl::StatusOr<Literal> want = evaluator.Run(m, arguments);
  ASSERT_TRUE(want.ok()) << want.status();
  compiler::CpuOptions options;
  options.plan.epilogue_min_result_bytes = 0;  // large enough to share, small for a test
  absl::StatusOr<compiler::Compiled<runtime::Executable>> exe = compiler::CompileForCpu(m, options);
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_EQ((*exe)->stats().epilogues, 7);
  for (int run = 0; run < 2; ++run) {  // the second on recycled memory
    absl::StatusOr<Literal> got = (*exe)->Run(arguments);
    ASSERT_TRUE(got.ok()) << got.status();
    for (int c = 0; c < 7; ++c) {
      EXPECT_EQ(DescribeDifferences(got->tuple_elements()[c], want->tuple_elements()[c],
                                    &RewriteTolerance, absl::StrCat("result ", c)),
                "");
    }
  }
}

}  // namespace
}  // namespace seam::runtime
