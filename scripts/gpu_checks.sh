#!/usr/bin/env bash
# The CUDA backend's checks on a lent GPU machine, in one call. Here, first:
#   scripts/build.sh && scripts/gpu_bundle.sh
# then the device tool's run with carry [".gpu"] and the command
#   scripts/gpu_checks.sh
# Each stage has its own time limit and writes its log to $OUT (what is
# there comes back even when a stage runs out of time): device facts, the
# driver/cuBLAS unit tests, the differential tests (corpus, workloads and
# 2,000 random graphs per strategy against the interpreter), seam bench
# --backend=cuda, and bench/compare.py --device cuda against jax.jit and
# torch.compile on the same GPU. Stage limits in seconds: UNIT_S, DIFF_S,
# BENCH_S, COMPARE_S. NVRTC, cuBLAS and the CUDA headers kernels include
# come from the machine's own toolkit (CUDA 13 there, matching its driver;
# the bundle carries none): /usr/local/cuda, else where nvcc lives.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-/tmp/gpu-checks}"
mkdir -p "$out"
bundle=/tmp/seam-gpu
mkdir -p "$bundle" && tar -C "$bundle" -xJf .gpu/bundle.tar.xz || { echo "no .gpu/bundle.tar.xz: run scripts/gpu_bundle.sh here and carry .gpu"; exit 1; }
export LD_LIBRARY_PATH="$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export SEAM_CACHE_DIR="$bundle/cache"
if [ -z "${SEAM_CUDA_HOME:-}" ] && [ ! -d /usr/local/cuda/include ] && command -v nvcc >/dev/null; then
  SEAM_CUDA_HOME="$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")"
  export SEAM_CUDA_HOME
fi
seam="$bundle/bin/seam"
tests="$bundle/bin/seam_runtime_tests"

stage() {  # name, seconds, command...
  local name=$1 seconds=$2
  shift 2
  echo "== $name (limit ${seconds} s)"
  local start=$SECONDS
  timeout "$seconds" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  echo "   rc=$rc in $((SECONDS - start)) s"
  grep -E "FAILED|Failure|error|PASSED|verify:|x +[0-9]|copy bandwidth" "$out/$name.log" | tail -40
}

{ nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv
  echo "SEAM_CUDA_HOME=${SEAM_CUDA_HOME:-/usr/local/cuda}"; nvcc --version | tail -2; } | tee "$out/device.txt"
stage unit "${UNIT_S:-120}" bash -c "'$tests' --gtest_filter='CudaDriverTest.*:CudaBlasLibraryTest.*:CudaDeviceTest.*:CudaKernelTest.*:CudaBlasTest.*' && \
  '$seam' run examples/layer_norm_bf16.hlo --backend=cuda --verify"
# The corpus and workload cubins come from the bundle's cache; the random
# graphs' are compiled there (NVRTC time).
stage differential "${DIFF_S:-300}" "$tests" --gtest_filter='*_cuda'
stage bench "${BENCH_S:-120}" "$seam" bench --backend=cuda bench/workloads/*.hlo --repeat 21
stage compare "${COMPARE_S:-240}" env SEAM_BENCH_PYTHON=current PYTHONUNBUFFERED=1 \
  python3 bench/compare.py --device cuda --seam "$seam" --out-dir "$out" --repeat 11 --rounds 2
