#!/usr/bin/env bash
# Installs the Debian packages Seam builds with, when any is missing.
#   scripts/install_deps.sh           what building and running Seam needs
#   scripts/install_deps.sh --tests   and clang with libFuzzer, for the
#                                     sanitizer build and the fuzzers
set -euo pipefail

packages=(cmake ninja-build g++ pkg-config libabsl-dev libcli11-dev libgtest-dev libgmock-dev zlib1g-dev
          nlohmann-json3-dev libopenblas-dev libdnnl-dev libboost-context-dev python3-venv python3-dev)
if [ "${1:-}" = "--tests" ]; then
  packages+=(clang libclang-rt-dev)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "seam: installing missing packages: ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "seam: need root or sudo to install ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
