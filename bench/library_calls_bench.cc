// Seam's dot and convolution calls against the library alone, per distinct
// problem of the given modules after the default passes: Seam's path (its
// layouts, copies, weight reorders and sharing out over its pool, as a run
// executes it) and oneDNN's primitive alone on the same problem with every
// array in the layouts it picks, prepared once (what its own benchmark,
// benchdnn, times); for f32 dots also OpenBLAS on packed operands (split
// over Seam's pool as Seam splits it). Interleaved rounds, medians; per problem Seam's time
// over the best library's, and how many problems are within 1.2x.
// Usage: seam_library_calls_bench [--repeat N] [FILE...]; default: the
// corpus models with dots and convolutions. SEAM_NUM_THREADS sets the
// threads of both sides.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "bench_util.h"
#include "seam/eval/random_fill.h"
#include "seam/passes/pipeline.h"
#include "seam/runtime/blas_dot.h"
#include "seam/runtime/blas_pack.h"
#include "seam/runtime/host_blas.h"
#include "seam/runtime/measure.h"
#include "seam/runtime/onednn_conv.h"
#include "seam/runtime/onednn_dot.h"
#include "seam/runtime/thread_pool.h"
#include "seam/text/parser.h"
#include "seam/text/printer.h"

namespace {

using seam::Instruction;
using seam::Literal;
namespace rt = seam::runtime;

// An instruction's problem: what it computes, without names or metadata.
std::string ProblemKey(const Instruction& i) {
  std::string key = std::string(seam::OpcodeName(i.opcode())) + " " + i.shape().ToString(false);
  for (const Instruction* o : i.operands()) key += " " + o->shape().ToString(false);
  const std::string printed = seam::PrintInstruction(i);
  const size_t attrs = printed.find("), ");
  if (attrs != std::string::npos) {
    std::string rest = printed.substr(attrs + 3);
    rest = rest.substr(0, rest.find(", metadata="));
    key += " " + rest;
  }
  return key;
}

// OpenBLAS on the dot's operands already packed (read transposed where the
// dot's operands are matrices that way round, as they lie), shared out over
// Seam's pool as Seam shares it.
std::function<absl::Status()> OpenBlasAlone(const Instruction& dot) {
  const rt::DotAsGemm g = rt::GemmOfDot(dot);
  auto a = std::make_shared<std::vector<float>>(g.batch * g.m * g.k, 0.5f);
  auto b = std::make_shared<std::vector<float>>(g.batch * g.k * g.n, 0.25f);
  auto c = std::make_shared<std::vector<float>>(g.batch * g.m * g.n);
  return [g, a, b, c]() {
    for (int64_t i = 0; i < g.batch; ++i) {
      rt::Gemm<float>(g.m, g.n, g.k, {a->data() + i * g.m * g.k, g.lhs_transposed ? g.m : g.k, g.lhs_transposed},
                      {b->data() + i * g.k * g.n, g.rhs_transposed ? g.k : g.n, g.rhs_transposed},
                      c->data() + i * g.m * g.n, g.n);
    }
    return absl::OkStatus();
  };
}

struct Row {
  std::string file, kind, key;
  double seam_ms = 0, library_ms = 0;
  std::string library;
};

}  // namespace

int main(int argc, char** argv) {
  seam::bench::RepeatAndFiles args = seam::bench::ParseRepeatAndFiles(argc, argv, 7);
  if (args.files.empty()) {
    for (const char* name : {"xla_resnet50_keras_jax_f32.hlo", "gh_ptxla_gpt2_tp1_n_layer2.hlo",
                             "gh_ptxla_bert_single_device_training_fwd_bwd.hlo",
                             "xla_dlrm_keras_jax_f32_train_step.hlo", "xla_gemma3_1b_flax_call.hlo",
                             "xla_mha_block_1x12x128x64_bf16.hlo"}) {
      args.files.push_back(std::string(SEAM_SOURCE_ROOT "/tests/corpus/hlo/") + name);
    }
  }
  absl::StatusOr<seam::Pipeline> pipeline = seam::Pipeline::Parse("default");
  if (!pipeline.ok()) seam::bench::Die(pipeline.status());
  const int threads = rt::ThreadPool::Global().size();
  std::printf("Seam's dot and convolution calls vs the library alone, %d thread(s), median of %d "
              "interleaved rounds\n\n",
              threads, args.repeat);
  std::printf("| model | op | problem | Seam ms | library alone ms | library | Seam / library |\n");
  std::printf("|---|---|---|---:|---:|---|---:|\n");
  std::vector<Row> rows;
  std::map<std::string, bool> seen;
  for (const std::string& path : args.files) {
    absl::StatusOr<std::vector<std::unique_ptr<seam::Module>>> modules = seam::ParseHloFile(path);
    if (!modules.ok()) seam::bench::Die(modules.status());
    for (auto& module : *modules) {
      if (absl::StatusOr<bool> changed = pipeline->Run(*module); !changed.ok()) {
        seam::bench::Die(changed.status());
      }
      for (const auto& computation : module->computations()) {
        for (const auto& owned : computation->instructions()) {
          const Instruction& i = *owned;
          if (i.opcode() != seam::Opcode::kDot && i.opcode() != seam::Opcode::kConvolution) continue;
          if (!rt::HostBlasServes(i)) continue;
          const std::string key = ProblemKey(i);
          if (seen[key]) continue;
          seen[key] = true;
          Literal lhs(i.operand(0)->shape()), rhs(i.operand(1)->shape());
          seam::FillRandom(lhs, 1);
          seam::FillRandom(rhs, 2);
          rt::BufferPool pool;
          std::vector<rt::TimedRun> runs{rt::WallClock([&]() -> absl::Status {
            return rt::RunHostBlas(pool, i, lhs, rhs).status();
          })};
          std::vector<std::string> names{"seam"};
          absl::StatusOr<std::function<absl::Status()>> alone =
              i.opcode() == seam::Opcode::kDot ? rt::OneDnnMatmulAlone(i) : rt::OneDnnConvolutionAlone(i);
          if (alone.ok()) {
            runs.push_back(rt::WallClock(*alone));
            names.push_back("oneDNN");
          }
          if (i.opcode() == seam::Opcode::kDot && i.shape().dtype() == seam::DType::kF32) {
            runs.push_back(rt::WallClock(OpenBlasAlone(i)));
            names.push_back("OpenBLAS");
          }
          for (const rt::TimedRun& run : runs) {  // warm-up: primitives, caches, pages
            if (absl::StatusOr<double> s = run(); !s.ok()) seam::bench::Die(s.status());
          }
          absl::StatusOr<std::vector<std::vector<double>>> seconds = rt::TimeInterleaved(runs, args.repeat);
          if (!seconds.ok()) seam::bench::Die(seconds.status());
          Row row;
          row.file = std::filesystem::path(path).stem().string();
          row.kind = std::string(seam::OpcodeName(i.opcode()));
          row.key = key;
          row.seam_ms = rt::Summarize((*seconds)[0]).median_s * 1e3;
          row.library_ms = 1e300;
          for (size_t r = 1; r < runs.size(); ++r) {
            const double ms = rt::Summarize((*seconds)[r]).median_s * 1e3;
            if (ms < row.library_ms) row.library_ms = ms, row.library = names[r];
          }
          if (runs.size() == 1) row.library_ms = row.seam_ms, row.library = "(none)";
          std::printf("| %s | %s | `%s` | %.3f | %.3f | %s | %.2f |\n", row.file.c_str(), row.kind.c_str(),
                      row.key.c_str(), row.seam_ms, row.library_ms, row.library.c_str(),
                      row.seam_ms / row.library_ms);
          std::fflush(stdout);
          rows.push_back(row);
        }
      }
    }
  }
  int within = 0;
  double seam_total = 0, library_total = 0;
  for (const Row& row : rows) {
    within += row.seam_ms <= 1.2 * row.library_ms;
    seam_total += row.seam_ms;
    library_total += row.library_ms;
  }
  std::printf("\n%d of %zu problems within 1.2x of the library alone; summed over the distinct problems "
              "(each once): Seam %.1f ms, library alone %.1f ms (%.2fx)\n",
              within, rows.size(), seam_total, library_total, seam_total / library_total);
  return 0;
}
