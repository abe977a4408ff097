#!/usr/bin/env bash
# Builds and runs the GPU microbenchmark whose numbers calibrate the H100 and
# A100 entries of fusion/device_spec.cc. Needs nvcc and an NVIDIA GPU.
set -euo pipefail
cd "$(dirname "$0")"
out="${TMPDIR:-/tmp}/seam_gpu_microbench"
nvcc -O3 -std=c++17 -arch=native -o "$out" gpu_microbench.cu
"$out"
