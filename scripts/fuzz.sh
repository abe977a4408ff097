#!/usr/bin/env bash
# Runs the libFuzzer harnesses of tests/fuzz, each for a bounded time with a
# fixed seed, and fails on any crash, sanitizer report, leak or timeout.
#
#   scripts/fuzz.sh [SECONDS] [HARNESS...]   default: 40 s each, every harness
#   SEAM_FUZZ_SEED=N                         libFuzzer's seed (default 1)
#   SEAM_FUZZ_OPTIMIZED=1                    long campaigns: build-fuzz, at -O1
#
# Builds build-asan (scripts/configure_fuzz_build.sh: clang, unoptimized as
# CI's sanitizer build is); an optimized build runs several times the inputs
# a second (hlo_passes: 11 a second unoptimized, about 80 at -O1). Seeds: the
# stored inputs of tests/fuzz/corpus/<harness>, and for the HLO harnesses
# the golden tests' modules, the workloads and the corpus. Inputs that reach
# new code are kept in <build>/fuzz-corpus/<harness> for later runs; a crash
# is written to <build>/fuzz-crashes/<harness>/. Once fixed, copy it to
# tests/fuzz/corpus/<harness>/, where every build's tests replay it.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-40}"
shift || true
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=(hlo_parse hlo_interpret hlo_passes npz)
seed="${SEAM_FUZZ_SEED:-1}"

if [ "${SEAM_FUZZ_OPTIMIZED:-0}" = 1 ]; then
  build=$(scripts/configure_fuzz_build.sh --optimized)
else
  build=$(scripts/configure_fuzz_build.sh)
fi
cmake --build "$build" -j "${SEAM_JOBS:-$(nproc)}" \
  --target "${harnesses[@]/#/fuzz_}"

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export LSAN_OPTIONS="suppressions=$PWD/tests/fuzz/lsan.supp"
failed=()
for harness in "${harnesses[@]}"; do
  corpus="$build/fuzz-corpus/$harness" crashes="$build/fuzz-crashes/$harness"
  mkdir -p "$corpus" "$crashes"
  seeds=("tests/fuzz/corpus/$harness")
  if [ "$harness" != npz ]; then
    seeds+=(tests/golden bench/workloads tests/corpus/hlo)
  fi
  echo "== fuzz_$harness: $seconds s, seed $seed"
  # -timeout: one input running past it is a hang; the harnesses bound the
  # interpreter to a second, so 30 s means something does not stop.
  if ! "$build/tests/fuzz/fuzz_$harness" "$corpus" "${seeds[@]}" \
      -seed="$seed" -max_total_time="$seconds" -max_len=65536 -timeout=30 \
      -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$crashes/" \
      2> "$build/fuzz-$harness.log"; then
    failed+=("$harness")
    tail -n 60 "$build/fuzz-$harness.log"
  fi
  grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+ +DONE)' \
    "$build/fuzz-$harness.log" || true
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: failures in ${failed[*]}; inputs in $build/fuzz-crashes/" >&2
  exit 1
fi
