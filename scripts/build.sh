#!/usr/bin/env bash
# Configures and builds Seam into BUILD_DIR (default: build). Extra arguments
# go to CMake's configure step.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${BUILD_DIR:-build}"
jobs="${SEAM_JOBS:-$(nproc)}"
cmake -S . -B "$build_dir" -G Ninja "$@" >/dev/null
cmake --build "$build_dir" -j "$jobs"
