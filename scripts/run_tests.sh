#!/usr/bin/env bash
# Builds Seam and runs every test: the full suite, then the parser tests once
# more under AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
jobs="${SEAM_JOBS:-$(nproc)}"

echo "== code size (lines per folder)"
for d in src/seam/*/ tests/*/ bench/; do
  [ -d "$d" ] || continue
  n=$(find "$d" -name '*.cc' -o -name '*.h' -o -name '*.def' | xargs -r cat | wc -l)
  printf '%8d  %s\n' "$n" "$d"
done

echo "== Python environment of the gym bindings"
scripts/python_env.sh build/pyenv

echo "== build"
BUILD_DIR=build scripts/build.sh -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSEAM_PYTHON=ON -DPython_EXECUTABLE="$PWD/build/pyenv/bin/python"

echo "== parse benchmark (not a timed test)"
build/bench/seam_parse_bench
echo "== default pass pipeline on the corpus (not a timed test)"
build/bench/seam_pass_bench --repeat 3
echo "== fusion plans on the corpus (not a timed test)"
build/bench/seam_plan_bench --repeat 3
echo "== pass-ordering environment throughput (not a timed test)"
build/bench/seam_gym_bench --seconds 2

echo "== sanitizer build of the parser tests"
BUILD_DIR=build-asan scripts/build.sh -DCMAKE_BUILD_TYPE=Debug -DSEAM_SANITIZE=ON
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan -L 'text|golden' -j "$jobs" --output-on-failure

echo "== all tests"
ctest --test-dir build -j "$jobs" --output-on-failure

echo "== Python tests: gym bindings and the Gymnasium env"
PYTHONPATH=build/python build/pyenv/bin/python -m unittest discover -s python/tests -v
