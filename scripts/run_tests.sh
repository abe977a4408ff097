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

echo "== build"
BUILD_DIR=build scripts/build.sh -DCMAKE_BUILD_TYPE=RelWithDebInfo

echo "== parse benchmark (not a timed test)"
build/bench/seam_parse_bench
echo "== default pass pipeline on the corpus (not a timed test)"
build/bench/seam_pass_bench --repeat 3
echo "== fusion plans on the corpus (not a timed test)"
build/bench/seam_plan_bench --repeat 3

echo "== sanitizer build of the parser tests"
BUILD_DIR=build-asan scripts/build.sh -DCMAKE_BUILD_TYPE=Debug -DSEAM_SANITIZE=ON
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan -L 'text|golden' -j "$jobs" --output-on-failure

echo "== all tests"
ctest --test-dir build -j "$jobs" --output-on-failure
