#!/usr/bin/env bash
# Builds Seam and runs the tests: the suite; the parser and fuzz corpus
# tests once more under AddressSanitizer + UndefinedBehaviorSanitizer
# (a clang build); then each libFuzzer harness for a bounded time.
#
#   scripts/run_tests.sh          CI's run: the heaviest families as a sample
#                                 rotating with the time (the seed is printed)
#   scripts/run_tests.sh --full   every test
#   SEAM_TEST_SEED=N scripts/run_tests.sh   the sample of seed N again
set -euo pipefail
cd "$(dirname "$0")/.."
full=0
if [ "${1:-}" = "--full" ]; then full=1; fi
scripts/install_deps.sh --tests
jobs="${SEAM_JOBS:-$(nproc)}"

echo "== code size (lines per folder)"
for d in src/seam/*/ tests/*/ bench/; do
  [ -d "$d" ] || continue
  n=$(find "$d" -name '*.cc' -o -name '*.h' -o -name '*.def' | xargs -r cat | wc -l)
  printf '%8d  %s\n' "$n" "$d"
done

echo "== Python environment of the bindings and their tests"
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

# Not the golden tests: built by clang, two passes (batchnorm-expander,
# rng-bit-generator-expander) create instructions in another order than
# built by gcc (arguments are evaluated in another order), so the goldens'
# names differ. Until they are made order-independent, the goldens run in
# the gcc build only.
echo "== sanitizer build (clang, with the fuzzers) of the parser and fuzz tests"
# A build directory configured otherwise (an older gcc sanitizer build) is
# started afresh: its compiler cannot change in place.
if [ -f build-asan/CMakeCache.txt ] && ! grep -q '^SEAM_FUZZ:BOOL=ON' build-asan/CMakeCache.txt; then
  rm -rf build-asan
fi
# Unoptimized, as the sanitizer build always was: at -O1, with the
# sanitizers' and the fuzzer's instrumentation, it took about 11 minutes
# of CI's two cores.
CXX=clang++ cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DSEAM_FUZZ=ON >/dev/null
cmake --build build-asan -j "$jobs" --target seam_text_tests seam_fuzz_tests \
  fuzz_hlo_parse fuzz_hlo_interpret fuzz_hlo_passes fuzz_npz
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 LSAN_OPTIONS="suppressions=$PWD/tests/fuzz/lsan.supp" \
  ctest --test-dir build-asan -L 'text|fuzz' -j "$jobs" --output-on-failure

echo "== fuzzers: each harness for a bounded time, fixed seed (scripts/fuzz.sh)"
scripts/fuzz.sh "${SEAM_FUZZ_SECONDS:-30}"

if [ "$full" = 1 ]; then
  echo "== all tests"
  ctest --test-dir build -j "$jobs" --output-on-failure
else
  seed="${SEAM_TEST_SEED:-$(date +%s)}"
  sample=$(ctest --test-dir build -N | scripts/test_sample.py "$seed")
  echo "== all tests, the heaviest families sampled: seed $seed" \
       "(SEAM_TEST_SEED=$seed repeats it; --full runs everything)"
  ctest --test-dir build -j "$jobs" --output-on-failure -I "$sample"
fi

echo "== Python tests: seam.compile, seam.jit against jax.jit, the gym"
PYTHONPATH=build/python build/pyenv/bin/python -m pytest -q -p no:cacheprovider python/tests
