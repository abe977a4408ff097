#!/usr/bin/env bash
# Packs what scripts/gpu_checks.sh needs on a lent GPU machine, which cannot
# build Seam (no network, no Debian packages), into .gpu/bundle.tar.xz
# (git-ignored), small enough to travel with the working tree (`carry`):
#   bin/    the seam and runtime-test binaries of build/, stripped
#   lib/    the shared libraries they load beyond glibc and libstdc++ (the
#           machine's own are newer)
#   cache/  the sm_90 cubins of every bench workload and of the corpus
#           modules the differential tests run, under each strategy, so the
#           device's minutes go to running kernels rather than to NVRTC
#           (used when the machine's NVRTC is this one's version)
set -euo pipefail
cd "$(dirname "$0")/.."
binaries=(build/seam build/tests/seam_runtime_tests)
for b in "${binaries[@]}"; do
  [ -x "$b" ] || { echo "gpu_bundle.sh: $b missing: build first (scripts/build.sh)" >&2; exit 1; }
done
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib" "$stage/cache"
for b in "${binaries[@]}"; do strip -o "$stage/bin/$(basename "$b")" "$b"; done
ldd "${binaries[@]}" | awk '/=> \// {print $3}' | sort -u | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so* | libm.so* | libstdc++.so* | libgcc_s.so* | ld-linux*) continue ;;
  esac
  cp -L "$lib" "$stage/lib/"
done
modules=(bench/workloads/*.hlo)
# The differential tests' corpus list (tests/runtime/differential_test.cc).
while read -r file; do modules+=("$file"); done < <(
  grep -o '"tests/corpus/hlo/[^"]*"' tests/runtime/differential_test.cc | tr -d '"')
for m in "${modules[@]}"; do
  for fusion in none xla stitch; do
    SEAM_CACHE_DIR="$stage/cache" build/seam compile "$m" --backend=cuda --target=sm_90 \
      --fusion="$fusion" >/dev/null || echo "gpu_bundle.sh: $m --fusion=$fusion did not compile" >&2
  done
done
mkdir -p .gpu
tar -C "$stage" -cJf .gpu/bundle.tar.xz bin lib cache
du -sh .gpu/bundle.tar.xz
