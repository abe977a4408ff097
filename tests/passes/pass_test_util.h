// Shared by the pass tests: the corpus modules grouped by how long the
// interpreter takes on them, and running a module before and after passes
// on the same random inputs.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "seam/eval/arguments.h"
#include "seam/eval/compare.h"
#include "seam/eval/evaluator.h"
#include "seam/ir/verifier.h"
#include "seam/passes/pipeline.h"
#include "seam/text/parser.h"

namespace seam::testing {

inline std::string CorpusPath(const std::string& file) {
  return absl::StrCat(SEAM_SOURCE_ROOT, "/tests/corpus/hlo/", file);
}

// Interpreted in well under a second each: every pass and random pass
// sequences are checked on these.
inline const std::vector<std::string>& SmallCorpus() {
  static const auto* files = new std::vector<std::string>{
      "xla_layer_norm_1x4096x768_bf16.hlo",
      "xla_mha_block_1x12x128x64_bf16.hlo",
      "hloenv_toy_nn_module_0093.jit_loss.44.before_optimizations.txt",
      "hloenv_maml_flax_module_0067.jit_train_step.26.before_optimizations.txt",
      "gh_ptxla_linear_module_adam.hlo",
      "gh_ptxla_bert_pretrain_tp1_dp1_pp1_optimizer.hlo",
      "xla_jax_issue33666_frag_0428_module_0004.hlo",
      "xla_gpu_tests_memory_bandwidth_fusion.hlo",
      "hloenv_jaxrl_module_0083.jit_get_td_target.657.before_optimizations.txt",
      "hloenv_hlo_test_jit_train_step.151.txt",
      "xla_gpu_tests_kernel_reuse.hlo",
  };
  return *files;
}

// A few seconds each in the interpreter: every pass is checked on these too.
inline const std::vector<std::string>& MediumCorpus() {
  static const auto* files = new std::vector<std::string>{
      "gh_ptxla_bert_single_device_training_fwd_bwd.hlo",
      "gh_ptxla_gpt2_tp1_n_layer2.hlo",
      "xla_dlrm_keras_jax_f32_train_step.hlo",
      "xla_xnn_parallel_dots_optimized.hlo",
  };
  return *files;
}

// 10-40 s each in the interpreter: checked with whole pipelines only.
inline const std::vector<std::string>& LargeCorpus() {
  static const auto* files = new std::vector<std::string>{
      "xla_resnet50_keras_jax_f32.hlo",
      "gh_ptxla_gptneox_tp1_hidden_layer1.hlo",
      "xla_gemma3_1b_flax_call.hlo",
  };
  return *files;
}

// Minutes in the interpreter, or not interpretable (a custom-call without a
// handler, too much memory): passes are checked for validity only.
inline const std::vector<std::string>& UninterpretedCorpus() {
  static const auto* files = new std::vector<std::string>{
      "xla_mobilenet_v2_ptxla_train.hlo",
      "hloenv_efficientnet_jax_module_0698.jit__lambda_.256.before_optimizations.txt",
      "xla_nv_maxtext_1n1g_jit_train_step_before_optimization.hlo",
      "xla_hlo_llama3_8b_cp_bf16_1x4.hlo",
  };
  return *files;
}

// The modules of one corpus file (kernel_reuse holds several).
inline std::vector<std::unique_ptr<Module>> LoadCorpusModules(const std::string& file) {
  absl::StatusOr<std::vector<std::unique_ptr<Module>>> modules = ParseHloFile(CorpusPath(file));
  if (!modules.ok()) return {};
  return std::move(*modules);
}

// Runs `module` on `arguments`; the error text when it fails.
inline absl::StatusOr<Literal> Interpret(const Module& module,
                                         const std::vector<Literal>& arguments) {
  Evaluator evaluator;
  return evaluator.Run(module, arguments);
}

// "" when `pipeline_spec` keeps `module` valid and its outputs (on
// `arguments`) equal to `expected`; else what went wrong.
inline std::string CheckPipelinePreserves(Module& module, const std::string& pipeline_spec,
                                          const std::vector<Literal>* arguments,
                                          const Literal* expected) {
  absl::StatusOr<Pipeline> pipeline = Pipeline::Parse(pipeline_spec);
  if (!pipeline.ok()) return std::string(pipeline.status().message());
  PipelineOptions options;
  options.verify_each = true;
  absl::StatusOr<bool> changed = pipeline->Run(module, options);
  if (!changed.ok()) return std::string(changed.status().message());
  if (absl::Status valid = VerifyModule(module); !valid.ok()) {
    return absl::StrCat("invalid after the pipeline: ", valid.message());
  }
  if (arguments == nullptr || !*changed) return "";
  absl::StatusOr<Literal> got = Interpret(module, *arguments);
  if (!got.ok()) return absl::StrCat("interpreting after the passes: ", got.status().message());
  return DescribeDifferences(*got, *expected, &RewriteTolerance, "result");
}

}  // namespace seam::testing
