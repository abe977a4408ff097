#!/bin/bash
# Renders the CPU C++ and CUDA source of every corpus module, bench workload
# and CUDA golden module, under each fusion strategy, into DIR: what a
# change to lowering or rendering is diffed against (`diff -r before after`:
# a refactor keeps every byte).
# Usage: scripts/render_sources.sh DIR [SEAM_BINARY]
set -u
out=${1:?usage: scripts/render_sources.sh DIR [SEAM_BINARY]}
seam=${2:-build/seam}
cd "$(dirname "$0")/.."
mkdir -p "$out"
modules=$(mktemp -d)
trap 'rm -rf "$modules"' EXIT
# One module a file: files of several (`// -----` between them) are split.
for f in tests/corpus/hlo/*.hlo tests/corpus/hlo/*.txt bench/workloads/*.hlo tests/golden/cuda/*.hlo; do
  awk -v base="$modules/$(basename "$f")" \
    '/^\/\/ -----/ { n++; next } { print > (base "." n+0 ".hlo") }' "$f"
done
for f in "$modules"/*; do
  name=$(basename "$f" .hlo)
  for fusion in stitch xla; do
    "$seam" compile --backend=cpu --emit=cpp --fusion=$fusion "$f" > "$out/$name.$fusion.cc" 2>&1
    "$seam" compile --backend=cuda --emit=cuda --fusion=$fusion "$f" > "$out/$name.$fusion.cu" 2>&1
  done
done
echo "rendered $(ls "$out" | wc -l) files into $out"
