#!/usr/bin/env bash
# Builds Seam and runs its main job on the bundled example.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
scripts/build.sh
example=examples/layer_norm_bf16.hlo
echo "seam: the default pass pipeline on $example, then the module before and after it"
echo "in the reference interpreter on the same random inputs"
build/seam opt "$example" --passes=default --stats > /dev/null
build/seam run "$example" --passes=default --verify
echo "seam: its fusion plans on this machine's CPU, XLA-style and stitched"
build/seam plan "$example" --strategy=xla | grep -E '^(totals|estimate)'
build/seam plan "$example" --strategy=stitch
