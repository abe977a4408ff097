#!/bin/bash
# Renders the CPU C++ and CUDA source of every corpus module, bench workload
# and CUDA golden module, with and without the default pipeline, under each
# fusion strategy, into DIR: what a
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
seam=$(realpath "$seam")
out=$(realpath "$out")
cd "$modules"  # diagnostics name the module file alone
for f in *; do
  name=$(basename "$f" .hlo)
  for passes in default none; do
    for fusion in stitch xla; do
      stem="$out/$name.$passes.$fusion"
      "$seam" compile --backend=cpu --emit=cpp --fusion=$fusion --passes=$passes "$f" > "$stem.cc" 2>&1
      "$seam" compile --backend=cuda --emit=cuda --fusion=$fusion --passes=$passes "$f" > "$stem.cu" 2>&1
    done
  done
done
echo "rendered $(ls "$out" | wc -l) files into $out"
