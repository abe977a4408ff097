#!/usr/bin/env bash
# Configures a clang build with AddressSanitizer + UndefinedBehaviorSanitizer
# and the libFuzzer harnesses (-DSEAM_FUZZ=ON), and prints its directory.
#
#   scripts/configure_fuzz_build.sh              build-asan, unoptimized: CI's
#                                                sanitizer build (at -O1, with
#                                                the instrumentation, it took
#                                                about 11 minutes of CI's cores)
#   scripts/configure_fuzz_build.sh --optimized  build-fuzz, at -O1: several times
#                                                the inputs a second, for long
#                                                fuzzing and mutation campaigns
#
# Line tables are all a sanitizer report needs.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--optimized" ]; then
  build=build-fuzz
  flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only")
else
  build=build-asan
  flags=(-DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-gline-tables-only)
fi
# A directory configured otherwise (an older gcc sanitizer build) is started
# afresh: its compiler cannot change in place.
if [ -f "$build/CMakeCache.txt" ] && ! grep -q '^SEAM_FUZZ:BOOL=ON' "$build/CMakeCache.txt"; then
  rm -rf "$build"
fi
CXX=clang++ cmake -S . -B "$build" -G Ninja "${flags[@]}" -DSEAM_FUZZ=ON >/dev/null
echo "$build"
