#!/usr/bin/env bash
# Packs what scripts/gpu_checks.sh needs on a lent GPU machine, which cannot
# build Seam (no network, no Debian packages): the seam and runtime-test
# binaries of build/, stripped, and the shared libraries they load beyond
# glibc and libstdc++ (the machine's own are newer), into .gpu/
# (git-ignored), small enough to travel with the working tree (`carry`).
set -euo pipefail
cd "$(dirname "$0")/.."
binaries=(build/seam build/tests/seam_runtime_tests)
for b in "${binaries[@]}"; do
  [ -x "$b" ] || { echo "gpu_bundle.sh: $b missing: build first (scripts/build.sh)" >&2; exit 1; }
done
rm -rf .gpu
mkdir -p .gpu/bin .gpu/lib
for b in "${binaries[@]}"; do strip -o ".gpu/bin/$(basename "$b")" "$b"; done
ldd "${binaries[@]}" | awk '/=> \// {print $3}' | sort -u | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so* | libm.so* | libstdc++.so* | libgcc_s.so* | ld-linux*) continue ;;
  esac
  cp -L "$lib" .gpu/lib/
done
du -sh .gpu
