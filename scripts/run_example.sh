#!/usr/bin/env bash
# Builds Seam and runs its main job: compile a real model's HLO (GPT-2, two
# layers, dumped by PyTorch/XLA) for this machine's CPU with stitched
# kernels, run it on random inputs, and check it against the reference
# interpreter; then the same for the bundled bf16 layer norm, with its
# fusion plan.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
scripts/build.sh
model=tests/corpus/hlo/gh_ptxla_gpt2_tp1_n_layer2.hlo
echo "seam: $model compiled for the CPU (default pipeline, stitched kernels), run and verified"
build/seam run "$model" --verify | grep -v '^  [a-z]'
example=examples/layer_norm_bf16.hlo
echo
echo "seam: $example on the CPU, each fusion strategy, verified"
for fusion in none xla stitch; do
  build/seam run "$example" --fusion=$fusion --verify
done
echo
echo "seam: the stitched plan of $example"
build/seam plan "$example" --strategy=stitch | grep -E '^(kernel|  group|  edge .*(regional|global)|totals|estimate)'
