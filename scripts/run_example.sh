#!/usr/bin/env bash
# Builds Seam and runs its main job on the bundled example.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
scripts/build.sh
example=examples/layer_norm_bf16.hlo
echo "seam: parsing, verifying and printing $example"
build/seam opt "$example"
