#!/usr/bin/env bash
# Builds Seam and runs the tests: the suite; the parser, file-reader and fuzz
# corpus tests once more under AddressSanitizer + UndefinedBehaviorSanitizer
# (a clang build; with --full the goldens too); then each libFuzzer
# harness for a bounded time.
#
#   scripts/run_tests.sh          CI's run: the heaviest families as a sample
#                                 rotating with the time (the seed is printed)
#   scripts/run_tests.sh --full   every test
#   SEAM_TEST_SEED=N scripts/run_tests.sh   the sample of seed N again
set -euo pipefail
cd "$(dirname "$0")/.."
full=0
if [ "${1:-}" = "--full" ]; then full=1; fi
# Each section says when it starts, in minutes and seconds of the run.
section() { printf '== [%dm%02ds] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }

section "dependencies"
scripts/install_deps.sh --tests
jobs="${SEAM_JOBS:-$(nproc)}"

section "code size (lines per folder)"
for d in src/seam/*/ tests/*/ bench/; do
  [ -d "$d" ] || continue
  n=$(find "$d" -name '*.cc' -o -name '*.h' -o -name '*.def' | xargs -r cat | wc -l)
  printf '%8d  %s\n' "$n" "$d"
done

section "Python environment of the bindings and their tests"
scripts/python_env.sh build/pyenv

section "build"
# Line tables only (-g1): backtraces keep their functions and lines, and the
# build takes an eighth less time than with full debug information.
BUILD_DIR=build scripts/build.sh -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
  -DSEAM_PYTHON=ON -DPython_EXECUTABLE="$PWD/build/pyenv/bin/python"

section "parse benchmark (not a timed test)"
build/bench/seam_parse_bench
section "default pass pipeline on the corpus (not a timed test)"
build/bench/seam_pass_bench --repeat 3
section "fusion plans on the corpus (not a timed test)"
build/bench/seam_plan_bench --repeat 3
section "pass-ordering environment throughput (not a timed test)"
build/bench/seam_gym_bench --seconds 2

# The sanitizer build (clang, with the fuzzers' coverage): in CI the parser's
# and the file readers' tests and the fuzz corpus replay, which need only the
# target-independent core; under --full also the goldens, through the whole
# compiler.
section "sanitizer build (clang, with the fuzzers)"
build_asan=$(scripts/configure_fuzz_build.sh)
sanitized_targets=(seam_text_tests seam_util_tests seam_fuzz_tests
                   fuzz_hlo_parse fuzz_hlo_interpret fuzz_hlo_passes fuzz_npz)
sanitized_labels='text|util|fuzz'
if [ "$full" = 1 ]; then
  sanitized_targets+=(seam seam_golden_tests)
  sanitized_labels+='|golden'
fi
cmake --build "$build_asan" -j "$jobs" --target "${sanitized_targets[@]}"
section "sanitizer tests: $sanitized_labels"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 LSAN_OPTIONS="suppressions=$PWD/tests/fuzz/lsan.supp" \
  ctest --test-dir "$build_asan" -L "$sanitized_labels" -j "$jobs" --output-on-failure

section "fuzzers: each harness for a bounded time, fixed seed (scripts/fuzz.sh)"
scripts/fuzz.sh "${SEAM_FUZZ_SECONDS:-20}"

if [ "$full" = 1 ]; then
  section "all tests"
  ctest --test-dir build -j "$jobs" --output-on-failure
else
  seed="${SEAM_TEST_SEED:-$(date +%s)}"
  sample=$(ctest --test-dir build -N | scripts/test_sample.py "$seed")
  section "all tests, the heaviest families sampled: seed $seed" \
       "(SEAM_TEST_SEED=$seed repeats it; --full runs everything)"
  ctest --test-dir build -j "$jobs" --output-on-failure -I "$sample"
fi

section "Python tests: seam.compile, seam.jit against jax.jit, the gym"
PYTHONPATH=build/python build/pyenv/bin/python -m pytest -q -p no:cacheprovider python/tests

if [ "$full" = 1 ]; then
  # Ray and torch are several GB and the run takes minutes: not in CI.
  section "pass-ordering training with Ray RLlib on a local two-node cluster"
  scripts/train_env.sh build/trainenv
  PYTHONPATH=build/python build/trainenv/bin/python -m pytest -q -p no:cacheprovider \
    python/tests/test_rllib_cluster.py
fi
section "done"
