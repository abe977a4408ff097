#!/usr/bin/env bash
# Creates (once) the Python environment the gym bindings build and test with:
# a venv at $1 (default build/pyenv) holding numpy, gymnasium and nanobind.
# PPO training needs more (torch, stable-baselines3): see python/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${1:-build/pyenv}"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/python" -c "import numpy, gymnasium, nanobind" 2>/dev/null ||
  "$venv/bin/pip" install -q --disable-pip-version-check numpy gymnasium nanobind
